"""A deletion on request leaves no copy in memstrata.db whatever the layout of its pages.

``secure_delete`` zeroes a deleted cell and a freed page, but a B-tree rebalance rebuilds a
page without clearing the space its moved cells leave, so a row's copy can outlive the row in
the free space of a live page. The first test reaches that through the real paths (turns of
varied sizes, in English and Chinese, some spilling to overflow pages; facts grown by updates;
then forgets, deletes, a thread and a user forgotten); the others put a copy in each kind of
place directly (a page's unallocated gap, a freeblock, an index page, a freelist page) and
check that the proof removes it where it can, with the least writing, and names it where it
cannot.
"""

from __future__ import annotations

import random
import sqlite3
import struct
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.erasure import text_forms
from memstrata.ids import new_id
from memstrata.model import Episode, Role, Scope
from memstrata.settings import load_settings
from memstrata.store.sqlite import SqliteStore
from tests.conftest import FixedClock

EN = (
    "hiking",
    "Kyoto",
    "door",
    "code",
    "river",
    "mountains",
    "dog",
    "Quillon",
    "tea",
    "every",
    "August",
)
ZH = "我最喜欢的城市是景德镇每年都去那里看瓷器梧桐路号"
#: words per turn or fact: a few, a line, a paragraph, pages (spilling to overflow pages)
SIZES = (3, 10, 30, 80, 200, 700, 1500)
PAGE = 4096


def _words(rnd: random.Random, count: int) -> str:
    return " ".join(
        rnd.choice(EN) if rnd.random() < 0.5 else "".join(rnd.choices(ZH, k=3))
        for _ in range(count)
    )


def _db_bytes(mem: Memory) -> bytes:
    store = mem.store
    assert isinstance(store, SqliteStore)
    store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store.path.read_bytes() + Path(f"{store.path}-wal").read_bytes()


def _left_in(data: bytes, texts: list[str]) -> list[str]:
    """The texts some byte form of which is in ``data``."""
    return [t for t in texts if any(form in data for form in text_forms([t]))]


#: layouts that left a copy before the fix, with SQLite 3.40 (any seed must leave none)
@pytest.mark.parametrize("seed", [4, 7, 8])
def test_forgets_leave_no_copy_whatever_the_page_layout(
    seed: int, data_dir: Path, clock: FixedClock
) -> None:
    rnd = random.Random(seed)
    said: dict[str, tuple[Scope, str]] = {}  # turn id: its scope, its text
    facts: list[tuple[Scope, str, str]] = []  # scope, fact id, text
    with Memory.open(settings=load_settings(data_dir=data_dir), clock=clock) as mem:
        for i in range(400):
            scope = Scope(rnd.choice(["alice", "bob"]), rnd.choice(["t1", "t2"]))
            text = f"{scope.user.upper()}-{i} said: {_words(rnd, rnd.choice(SIZES))}"
            (turn,) = mem.remember([text], scope)
            said[turn.id] = (scope, text)
            if rnd.random() < 0.5:
                fact = mem.add_fact(
                    f"{scope.user.upper()}-F{i} {_words(rnd, rnd.choice(SIZES[:5]))}",
                    scope,
                    sources=[turn.id],
                )
                for _ in range(rnd.randint(0, 2)):  # each version is a longer row
                    grown = f"{fact.text} {_words(rnd, rnd.choice(SIZES[:5]))}"
                    fact = mem.update(fact.id, scope, text=grown)
                facts.append((scope, fact.id, fact.text))
        turns = list(said)
        rnd.shuffle(turns)
        for n, turn_id in enumerate(turns[:20]):
            scope, text = said.pop(turn_id)
            if n % 2:
                mem.forget(turn_id, scope)
            else:
                mem.delete(turn_id, scope)
            assert _left_in(_db_bytes(mem), [text]) == []
        for scope, fact_id, text in facts[:8]:
            if mem.list(scope, "fact") and fact_id in {f.id for f in mem.list(scope, "fact")}:
                mem.forget(fact_id, scope)
                assert _left_in(_db_bytes(mem), [text]) == []
        mem.forget_scope(Scope("bob", "t1"))
        gone = [t for s, t in said.values() if s == Scope("bob", "t1")]
        assert _left_in(_db_bytes(mem), gone) == []
        mem.forget_scope(Scope("alice"))
        data = _db_bytes(mem)
        assert b"ALICE-" not in data and b"BOB-" in data  # the scan can find what stays


# --- a copy put in each kind of place --------------------------------------------------------

GONE = "我的旧地址是梧桐路 88 号, the door code was 4417"  # the text of a row deleted before


def _episode(text: str, user: str = "u") -> Episode:
    now = datetime(2026, 2, 3, tzinfo=UTC)
    return Episode(new_id("ep"), Scope(user), "chat", "s", "Ann", Role.USER, text, now, {})


def _pages(path: Path) -> list[bytes]:
    data = path.read_bytes()
    return [data[i : i + PAGE] for i in range(0, len(data), PAGE)]


def _root(path: Path, name: str) -> int:
    conn = sqlite3.connect(f"file:{path}?immutable=1", uri=True)  # the file alone, no lock
    try:
        sql = "SELECT rootpage FROM sqlite_master WHERE name = ?"
        return int(conn.execute(sql, [name]).fetchone()[0])
    finally:
        conn.close()


def _gap(page: bytes) -> tuple[int, int]:
    """A B-tree page's unallocated gap: from the end of its cell pointers to its first cell."""
    interior = page[0] in (2, 5)
    cells, top = struct.unpack_from(">HH", page, 3)
    return (12 if interior else 8) + 2 * cells, top


def _plant(path: Path, number: int, at: int, data: bytes) -> None:
    """Write ``data`` at byte ``at`` of page ``number`` of the closed database ``path``."""
    assert not Path(f"{path}-wal").exists()
    with path.open("r+b") as fh:
        fh.seek((number - 1) * PAGE + at)
        fh.write(data)


def _rows(store: SqliteStore) -> list[tuple[object, ...]]:
    return [tuple(r) for r in store._conn.execute("SELECT * FROM episodes ORDER BY id")]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    """A store holding turns of varied sizes, English and Chinese (a few pages of episodes, one
    spilling to overflow pages), closed so that a test can place bytes in its file."""
    path = tmp_path / "m.db"
    rnd = random.Random(5)
    with SqliteStore(path) as store:
        turns = [_episode(f"a long one: {_words(rnd, 1500)}")]
        turns += [_episode(f"turn {i}: {_words(rnd, rnd.choice(SIZES[:5]))}") for i in range(40)]
        store.add_episodes(Scope("u"), turns)
    return path


def _a_leaf_with_room(path: Path, table: str, room: int) -> int:
    """A leaf page of ``table`` (walking from its root) whose gap holds ``room`` bytes."""
    pages = _pages(path)
    todo = [_root(path, table)]
    while todo:
        number = todo.pop()
        page = pages[number - 1]
        if page[0] in (2, 5):
            cells = struct.unpack_from(">H", page, 3)[0]
            for i in range(cells):
                (cell,) = struct.unpack_from(">H", page, 12 + 2 * i)
                todo.append(struct.unpack_from(">I", page, cell)[0])
            todo.append(struct.unpack_from(">I", page, 8)[0])
        else:
            start, top = _gap(page)
            if top - start >= room:
                return number
    raise AssertionError(f"no leaf of {table} has {room} free bytes")


def test_a_copy_in_the_gap_of_a_live_page_is_overwritten_there_alone(db: Path) -> None:
    form = GONE.encode()
    number = _a_leaf_with_room(db, "episodes", 3 * len(form))
    start, top = _gap(_pages(db)[number - 1])
    _plant(db, number, (start + top) // 2 - len(form), form)  # what a page rebuild leaves
    before = _pages(db)
    with SqliteStore(db) as store:
        rows = _rows(store)
        assert store.residue([GONE]) == []
        assert _rows(store) == rows  # the row rewritten over the page is as it was
        assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    after = _pages(db)
    assert form not in db.read_bytes()
    changed = {i + 1 for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b}
    assert changed <= {1, number}  # that page (and the file header): not a rebuilt file
    start, top = _gap(after[number - 1])
    gap = after[number - 1][start:top]
    # all zeros but the 4-byte header (next, size) SQLite writes where it frees a cell
    assert len(gap) >= 3 * len(form) and sum(1 for b in gap if b) <= 4


def test_a_copy_in_a_freeblock_is_overwritten(db: Path) -> None:
    """As a build without secure_delete leaves a deleted cell: in a freeblock of its page."""
    with SqliteStore(db) as store:
        store._conn.execute("PRAGMA secure_delete = OFF")
        gone, kept = _episode(GONE), _episode("still here, said twice")
        store.add_episodes(Scope("u"), [gone, kept, _episode(kept.text)])
        store.add_episodes(Scope("u"), [_episode(f"after {i}") for i in range(20)])
        store.delete_episodes(Scope("u"), [gone.id])
        store._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert GONE.encode() in db.read_bytes()
        assert store.residue([GONE, kept.text]) == []
    assert GONE.encode() not in db.read_bytes()
    assert db.read_bytes().count(kept.text.encode()) >= 2  # rows keep their text


def test_a_copy_in_an_index_page_rebuilds_the_tables_indexes(db: Path) -> None:
    form = GONE.encode()
    number = _root(db, "episodes_scope")  # a few turns: the root is the index's only page
    start, top = _gap(_pages(db)[number - 1])
    assert top - start > 2 * len(form)
    _plant(db, number, start + 8, form)
    with SqliteStore(db) as store:
        rows = _rows(store)
        assert store.residue([GONE]) == []
        assert _rows(store) == rows
        assert store._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert form not in db.read_bytes()


def test_a_copy_no_row_can_cover_rebuilds_the_file(db: Path) -> None:
    """A freelist page holding a copy (a build without secure_delete freed it as it was)."""
    with SqliteStore(db) as store:
        sql = "SELECT id FROM episodes WHERE length(CAST(text AS BLOB)) > 2 * ?"
        (long,) = (r["id"] for r in store._read(sql, [PAGE]))
        store.delete_episodes(Scope("u"), [long])  # its overflow pages go to the freelist
        assert store._conn.execute("PRAGMA freelist_count").fetchone()[0] > 0
    trunk = struct.unpack(">I", db.read_bytes()[32:36])[0]  # the first freelist trunk page
    _plant(db, trunk, 1000, GONE.encode())
    with SqliteStore(db) as store:
        rows = _rows(store)
        assert store.residue([GONE]) == []
        assert _rows(store) == rows
        assert store._conn.execute("PRAGMA freelist_count").fetchone()[0] == 0  # rebuilt
    assert GONE.encode() not in db.read_bytes()


@pytest.mark.parametrize("near_the_cell", [True, False])
def test_a_copy_in_a_page_of_one_cell(
    tmp_path: Path, near_the_cell: bool, caplog: pytest.LogCaptureFixture
) -> None:
    """One cell cannot be moved so that the page is defragmented: a filler as large as a cell
    can be covers the gap from its end; what it cannot reach has the file rebuilt."""
    path = tmp_path / "m.db"
    with SqliteStore(path) as store:
        store.add_episodes(Scope("u"), [_episode("the only turn, 只有一句")])
    number = _root(path, "episodes")
    start, top = _gap(_pages(path)[number - 1])
    form = GONE.encode()
    _plant(path, number, top - len(form) - 40 if near_the_cell else start + 2, form)
    with SqliteStore(path) as store:
        rows = _rows(store)
        assert store.residue([GONE]) == []
        assert _rows(store) == rows
    assert form not in path.read_bytes()
    rebuilt = [r for r in caplog.records if r.getMessage().startswith("rebuilding")]
    assert bool(rebuilt) is not near_the_cell


def test_a_row_written_before_a_column_was_added_can_carry_the_rewrite(tmp_path: Path) -> None:
    """Its record lacks the new columns; rewritten, it gets them (their defaults): the filler
    is sized for the record as it will be written."""
    path = tmp_path / "m.db"
    with SqliteStore(path) as store:
        conn = store._conn
        conn.execute("CREATE TABLE notes (id TEXT PRIMARY KEY, body TEXT NOT NULL, r REAL)")
        rows = [
            (f"n{i}", f"note {i} 笔记 " * (1 + i % 7), 1.0 if i % 2 else 0.25) for i in range(12)
        ]
        conn.executemany("INSERT INTO notes VALUES (?, ?, ?)", rows)
        conn.execute("ALTER TABLE notes ADD COLUMN n INTEGER NOT NULL DEFAULT 300000")
        conn.execute("ALTER TABLE notes ADD COLUMN t TEXT DEFAULT '默认值'")
    number = _root(path, "notes")
    _, top = _gap(_pages(path)[number - 1])
    _plant(path, number, top - 200, GONE.encode())
    with SqliteStore(path) as store:
        before = store._conn.execute("SELECT * FROM notes ORDER BY id").fetchall()
        assert store.residue([GONE]) == []
        assert store._conn.execute("SELECT * FROM notes ORDER BY id").fetchall() == before
    assert GONE.encode() not in path.read_bytes()
