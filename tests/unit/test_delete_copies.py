"""Deleting a turn erases every copy of it: the raw trace line and the cached vectors."""

from __future__ import annotations

import json
import re
import sqlite3
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from memstrata.api import Memory
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.cache import CachedEmbedder, text_hash, with_cache
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import StoreError
from memstrata.ids import new_id
from memstrata.model import DeleteReason, Turn
from memstrata.settings import load_settings
from memstrata.store.sqlite import SqliteStore
from memstrata.trace import JsonlTrace
from tests.conftest import FixedClock
from tests.reliability.sqlite_build import secure_delete_off_by_default

SECRET = "我的新地址是梧桐路 88 号 and the door code is 4417"


def test_redact_overwrites_only_the_named_events_in_place(tmp_path: Path) -> None:
    trace = JsonlTrace(tmp_path, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    trace.append("chat", [{"event": "episode", "id": "ep_1", "text": SECRET}])
    trace.append("chat", [{"event": "episode", "id": "ep_2", "text": "mentions ep_1 only"}])
    trace.append("import", [{"event": "episode", "id": "ep_1", "text": SECRET + " again"}])
    files = sorted(tmp_path.glob("*/*.jsonl"))
    sizes = [f.stat().st_size for f in files]
    assert trace.redact(["ep_1", "ep_missing"], "user_request") == 2
    assert [f.stat().st_size for f in files] == sizes  # same length: no line moved
    raw = b"".join(f.read_bytes() for f in files).decode("utf-8")
    assert "梧桐路" not in raw and "door code" not in raw
    events = list(trace.read())
    assert [e["event"] for e in events] == ["redacted", "episode", "redacted"]
    assert events[0] == {
        "at": "2026-02-03T00:00:00.000000Z",
        "surface": "chat",
        "id": "ep_1",
        "event": "redacted",
        "reason": "user_request",
    }
    assert events[1]["text"] == "mentions ep_1 only"  # another item's text naming it stays
    trace.append("chat", [{"event": "episode", "id": "ep_3", "text": "after"}])
    assert [e["id"] for e in trace.read("chat")] == ["ep_1", "ep_2", "ep_3"]
    assert trace.redact(["ep_1"], "user_request") == 0  # already a tombstone


def test_redact_without_a_trace_directory_is_a_no_op(tmp_path: Path) -> None:
    assert JsonlTrace(tmp_path / "absent").redact(["ep_1"], "user_request") == 0


def _memory(data_dir: Path, clock: FixedClock) -> Memory:
    embedder = with_cache(
        BlendEmbedder(
            [HashingEmbedder(dim=32), HashingEmbedder(dim=48)],
            {"question": [1, 0], "dialogue": [1, 1]},
        ),
        data_dir / "vectors.db",
    )
    return Memory.open(settings=load_settings(data_dir=data_dir), clock=clock, embedder=embedder)


def _cached(db: Path, text: str) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT COUNT(*) FROM vectors WHERE hash = ?", [text_hash(text)])
        return int(row.fetchone()[0])


def test_deleting_a_turn_erases_its_trace_line_and_its_cached_vectors(
    data_dir: Path, clock: FixedClock
) -> None:
    with _memory(data_dir, clock) as mem:
        turns = [
            Turn(text="hello there", speaker="Ann"),
            Turn(text=SECRET, speaker="Ann"),
            Turn(text="see you", speaker="Ann"),
        ]
        _, secret, last = mem.remember(turns, "u", surface="chat")
        mem.search("door code", "u")  # builds the index: every view embedded and cached
        db = data_dir / "vectors.db"
        said, after, before = f"Ann: {SECRET}", "Ann: see you", "Ann: hello there"
        assert _cached(db, said) == 2  # one row per model of the blend
        assert _cached(db, f"{said}\n{after}") == 2  # the next turn's view, with it as context
        report = mem.delete(secret.id, "u")
        assert report.deleted == (secret.id,)
        trace = "".join(p.read_text("utf-8") for p in (data_dir / "trace").glob("*/*.jsonl"))
        assert "door code" not in trace and "梧桐路" not in trace
        assert secret.id in trace and last.id in trace and "see you" in trace
        mem.search("door code", "u")  # the index reads the change feed and drops its copies
        assert _cached(db, said) == 0 and _cached(db, f"{said}\n{after}") == 0
        assert _cached(db, f"{before}\n{after}") == 2  # the next turn's new view
        assert _cached(db, before) == 2 and _cached(db, after) == 2
        hits = mem.search("door code 4417", "u", k=5)
        assert secret.id not in {h.id for h in hits}
        assert all("door code" not in h.text for h in hits)


def test_a_delete_that_cannot_erase_the_trace_says_so(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _memory(data_dir, clock) as mem:
        (episode,) = mem.remember([Turn(text=SECRET)], "u")

        def refuse(ids: object, reason: str, texts: object = ()) -> int:
            raise OSError("disk is read-only")

        assert mem.trace is not None
        monkeypatch.setattr(mem.trace, "redact", refuse)
        with pytest.raises(StoreError, match="raw trace line could not be erased"):
            mem.delete(episode.id, "u")
        files = (data_dir / "trace").glob("*/*.jsonl")
        lines = [json.loads(x) for p in files for x in p.read_text("utf-8").splitlines()]
        assert lines and lines[0]["text"] == SECRET


def _append_many(root: str, count: int) -> None:
    trace = JsonlTrace(root, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    for i in range(count):
        assert trace.append("chat", [{"event": "episode", "id": f"ep_w{i}", "text": SECRET * 20}])


def test_redacting_beside_appending_processes_loses_and_corrupts_nothing(tmp_path: Path) -> None:
    import multiprocessing

    trace = JsonlTrace(tmp_path, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    trace.append("chat", [{"event": "episode", "id": f"ep_{i}", "text": SECRET} for i in range(50)])
    ctx = multiprocessing.get_context("spawn")
    writers = [ctx.Process(target=_append_many, args=(str(tmp_path), 200)) for _ in range(2)]
    for w in writers:
        w.start()
    pending = [f"ep_{i}" for i in range(0, 50, 2)]
    redacted = 0
    while pending and any(w.is_alive() for w in writers):  # redact while they append
        redacted += trace.redact([pending.pop()], "user_request")
        time.sleep(0.01)
    redacted += trace.redact(pending, "user_request")
    for w in writers:
        w.join(timeout=120)
        assert w.exitcode == 0
    assert redacted == 25
    events = list(trace.read("chat"))  # every line still parses
    assert len(events) == 50 + 2 * 200
    kinds = {e["id"]: e["event"] for e in events if not str(e["id"]).startswith("ep_w")}
    assert all(kinds[f"ep_{i}"] == ("redacted" if i % 2 == 0 else "episode") for i in range(50))
    appended = [e for e in events if str(e["id"]).startswith("ep_w")]
    assert all(e["text"] == SECRET * 20 for e in appended)


# a torn trace line (disk full, crash mid-write) --------------------------------------
def _trace_file(root: Path) -> Path:
    (path,) = root.glob("*/*.jsonl")
    return path


def test_an_append_never_extends_a_torn_line(tmp_path: Path) -> None:
    trace = JsonlTrace(tmp_path, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    trace.append("chat", [{"event": "episode", "id": "ep_1", "text": "first"}])
    path = _trace_file(tmp_path)
    with path.open("ab") as fh:
        fh.write(b'{"at": "2026-02-03T00:00:00.000000Z", "surface": "chat", "event": "epi')
    trace.append("chat", [{"event": "episode", "id": "ep_2", "text": SECRET}])
    lines = path.read_bytes().split(b"\n")
    assert lines[-1] == b""  # the file ends with a whole line
    assert json.loads(lines[0])["id"] == "ep_1"
    assert lines[1].endswith(b'"event": "epi')  # the torn fragment stays a line of its own
    assert json.loads(lines[2])["text"] == SECRET


def _torn_trace(tmp_path: Path) -> Path:
    """A trace as a crash leaves it: a torn event, with the next append run into its line,
    and an event cut short after its id and part of its text."""
    at = '{"at": "2026-02-03T00:00:00.000000Z", "surface": "chat", '
    whole = at + json.dumps({"event": "episode", "id": "ep_2", "text": SECRET})[1:]
    escaped = at + json.dumps({"event": "episode", "id": "ep_4", "text": SECRET + " 2"})[1:]
    content = "\n".join(
        [
            at + '"event": "episode", "id": "ep_1", "text": "kept"}',
            at + '"event": "episode", "id": "ep_0", "text": "torn bef' + whole,
            at + '"event": "episode", "id": "ep_3", "text": "我的新地址是梧',
            escaped,
            at + '"event": "episode", "id": "ep_5", "text": "quotes ' + SECRET + '"}',
            "",
        ]
    )
    path = tmp_path / "chat" / "2026-02-03.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(content.encode("utf-8"))
    return path


def test_redact_erases_a_turn_inside_torn_and_damaged_lines(tmp_path: Path) -> None:
    path = _torn_trace(tmp_path)
    size = path.stat().st_size
    trace = JsonlTrace(tmp_path)
    assert trace.residue(["ep_2", "ep_3", "ep_4"], [SECRET, SECRET + " 2"])
    assert trace.redact(["ep_2", "ep_3", "ep_4"], "user-request", texts=[SECRET]) == 3
    assert path.stat().st_size == size  # in place: no line moved
    raw = path.read_bytes()
    assert b"ep_4" in raw and b"ep_2" in raw  # tombstones keep the ids
    lines = raw.decode("utf-8").split("\n")
    assert not any("梧桐路" in x or "door code" in x or "我的新地址是梧" in x for x in lines[1:4])
    assert json.loads(lines[0])["text"] == "kept"
    assert "torn bef" in lines[1]  # another item's torn fragment is left alone
    assert json.loads(lines[3].strip())["event"] == "redacted"
    assert "door code" in lines[4]  # a whole event of another item quoting the text stays
    assert trace.residue(["ep_2", "ep_3", "ep_4"], [SECRET, SECRET + " 2"]) == []


def test_residue_names_the_file_and_line_of_each_copy_left(tmp_path: Path) -> None:
    path = _torn_trace(tmp_path)
    left = JsonlTrace(tmp_path).residue(["ep_2", "ep_3"], [SECRET])
    assert left == [f"{path} line 2", f"{path} line 3"]


def test_a_forget_after_a_torn_trace_line_erases_the_turn(
    data_dir: Path, clock: FixedClock
) -> None:
    with _memory(data_dir, clock) as mem:
        mem.remember([Turn(text="before the crash")], "u")
        path = _trace_file(data_dir / "trace")
        with path.open("ab") as fh:
            fh.write(b'{"at": "2026-01-01T12:00:00.000000Z", "surface": "chat", "ev')
        (episode,) = mem.remember([Turn(text=SECRET)], "u")
        mem.forget(episode.id, "u")
    raw = path.read_bytes()
    assert b"door code" not in raw and "梧桐路".encode() not in raw
    assert episode.id.encode() in raw


def test_a_forget_that_leaves_the_text_in_the_trace_fails_loudly(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _memory(data_dir, clock) as mem:
        (episode,) = mem.remember([Turn(text=SECRET)], "u")
        assert mem.trace is not None
        monkeypatch.setattr(mem.trace, "redact", lambda *args, **kwargs: 0)
        path = _trace_file(data_dir / "trace")
        with pytest.raises(StoreError, match=f"copies are left: {re.escape(str(path))} line 1"):
            mem.forget(episode.id, "u")


# SQLite files: deleted text overwritten, the log checkpointed ---------------------------
def test_every_connection_turns_secure_delete_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secure_delete_off_by_default(monkeypatch)
    with SqliteStore(tmp_path / "m.db") as store:
        assert store._conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    cache = CachedEmbedder(HashingEmbedder(dim=16), tmp_path / "e.db")
    assert cache._conn is not None
    assert cache._conn.execute("PRAGMA secure_delete").fetchone()[0] == 1
    cache.close()


def test_a_deleted_turn_leaves_no_byte_in_the_database_or_its_log(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    secure_delete_off_by_default(monkeypatch)
    with _memory(data_dir, clock) as mem:
        mem.remember([Turn(text=f"turn {i} " + "filler " * 40) for i in range(30)], "u")
        (episode,) = mem.remember([Turn(text=SECRET)], "u")
        mem.add_fact("Ann's door code is 4417 at 梧桐路", "u", sources=[episode.id])
        mem.delete(episode.id, "u")
        files = [data_dir / "memstrata.db", data_dir / "memstrata.db-wal"]
        held = [f.name for f in files if f.exists() and "梧桐路".encode() in f.read_bytes()]
        assert held == []


def test_forgotten_vectors_leave_no_byte_in_the_cache_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secure_delete_off_by_default(monkeypatch)
    inner = HashingEmbedder(dim=64)
    cache = CachedEmbedder(inner, tmp_path / "e.db")
    cache.embed_documents([f"other text {i}" for i in range(40)])
    cache.embed_documents([SECRET])
    vector = inner.embed_documents([SECRET])[0].tobytes()
    cache.forget([SECRET])
    cache.close()
    files = [tmp_path / "e.db", tmp_path / "e.db-wal"]
    assert [f.name for f in files if f.exists() and vector in f.read_bytes()] == []


# the embedding cache: purged in the same operation as the forget -----------------------
def _blend_memory(data_dir: Path, clock: FixedClock) -> Memory:
    settings = load_settings(data_dir=data_dir)
    embedder = with_cache(
        BlendEmbedder(
            [HashingEmbedder(dim=32), HashingEmbedder(dim=48)],
            {"question": [1, 0], "dialogue": [1, 1]},
        ),
        settings.embedding_cache_path,
    )
    return Memory.open(settings=settings, clock=clock, embedder=embedder)


_SAID, _BEFORE, _AFTER = f"Ann: {SECRET}", "Bob: hello there", "Bob: see you"
_FACT = "Ann's door code is 4417"
_DERIVED = [_SAID, f"{_BEFORE}\n{_SAID}", f"{_SAID}\n{_AFTER}", _FACT]


def _remember_and_search(mem: Memory) -> str:
    turns = [
        Turn(text="hello there", speaker="Bob"),
        Turn(text=SECRET, speaker="Ann"),
        Turn(text="see you", speaker="Bob"),
    ]
    _, secret, _ = mem.remember(turns, "u", surface="chat")
    mem.add_fact(_FACT, "u", sources=[secret.id])
    mem.search("door code", "u")
    mem.search("door code", "u", granularity="fact")
    return secret.id


def test_a_forget_purges_every_cached_vector_at_once(data_dir: Path, clock: FixedClock) -> None:
    with _blend_memory(data_dir, clock) as mem:
        secret = _remember_and_search(mem)
        db = data_dir / "embeddings.db"
        assert [_cached(db, t) for t in _DERIVED] == [2, 2, 2, 2]  # one row per model
        mem.forget(secret, "u")
        assert [_cached(db, t) for t in _DERIVED] == [0, 0, 0, 0]  # no search needed
        assert _cached(db, _BEFORE) == 2
        # the turn after it now has a new context: pending, embedded by the next search
        assert mem.pending("u") == 1
        mem.search("door code", "u")
        assert _cached(db, f"{_BEFORE}\n{_AFTER}") == 2 and mem.pending("u") == 0


def test_a_forget_without_an_index_in_this_process_purges_the_cache(
    data_dir: Path, clock: FixedClock
) -> None:
    with _blend_memory(data_dir, clock) as mem:
        secret = _remember_and_search(mem)
    db = data_dir / "embeddings.db"
    with Memory.open(settings=load_settings(data_dir=data_dir), clock=clock) as other:
        other.forget(secret, "u")  # as the CLI does: no index, no model loaded
        assert other._embedder is None
    assert [_cached(db, t) for t in _DERIVED] == [0, 0, 0, 0]
    assert _cached(db, _BEFORE) == 2


def test_a_bullet_deleted_on_request_takes_its_cached_vectors_along(
    data_dir: Path, clock: FixedClock
) -> None:
    from memstrata.document.ops import Operation, OpKind

    with _blend_memory(data_dir, clock) as mem:
        _remember_and_search(mem)
        mem.consolidate("u")
        mem.search("door code", "u", granularity="topic")
        db = data_dir / "embeddings.db"
        doc, version = mem.doc("notes", "u")
        (bullet,) = [b for s in doc.sections for b in s.bullets if b.text == _FACT]
        passage = f"notes: {_FACT}"  # the document's title leads each of its passages
        assert _cached(db, passage) == 2
        delete = Operation(OpKind.DELETE, bullet.id, reason=DeleteReason.USER_REQUEST)
        mem.apply_doc("notes", "u", [delete], expected_version=version)
        assert _cached(db, passage) == 0  # at once, not at the next search


def test_redacting_many_items_at_once_finds_each_of_them(tmp_path: Path) -> None:
    trace = JsonlTrace(tmp_path, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    events = [{"event": "episode", "id": f"ep_{i}", "text": f"{SECRET} #{i}"} for i in range(200)]
    trace.append("chat", events)
    path = _trace_file(tmp_path)
    with path.open("ab") as fh:  # a torn copy of one of them, cut before its id
        fh.write(json.dumps({"text": f"{SECRET} #6"}, ensure_ascii=False)[:-1].encode())
    gone = [f"ep_{i}" for i in range(0, 200, 3)]
    texts = [f"{SECRET} #{i}" for i in range(0, 200, 3)]
    assert trace.redact(gone, "user-request", texts=texts) == len(gone) + 1
    assert trace.residue(gone, texts) == []
    kept = [e for e in trace.read() if e["event"] == "episode"]
    assert [e["id"] for e in kept] == [f"ep_{i}" for i in range(200) if i % 3]


def test_store_residue_names_a_file_that_keeps_deleted_text(tmp_path: Path) -> None:
    """A copy the store cannot overwrite is named: here a reader that began before the delete
    keeps the checkpoint from writing the new pages over the old ones. Once it is done, the
    copy (a freeblock, as a build without secure_delete leaves it) is overwritten."""
    from memstrata.model import Episode, Role, Scope

    def episode(text: str) -> Episode:
        now = datetime(2026, 2, 3, tzinfo=UTC)
        return Episode(new_id("ep"), Scope("u"), "chat", "s", "Ann", Role.USER, text, now, {})

    with SqliteStore(tmp_path / "m.db", busy_timeout_ms=100) as store:
        store._conn.execute("PRAGMA secure_delete = OFF")  # as a build without it would
        gone, kept = episode(SECRET), episode("still here, said twice")
        twin = episode(kept.text)
        store.add_episodes(Scope("u"), [gone, kept, twin])
        reader = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM episodes").fetchone()  # its snapshot: before
        store.delete_episodes(Scope("u"), [gone.id, twin.id])
        left = store.residue([SECRET, kept.text])  # the checkpoint waits, then gives up
        assert left == [f"{tmp_path / 'm.db'}-wal: 1 form(s) of the deleted text"]  # not `kept`
        reader.execute("COMMIT")
        reader.close()
        assert store.residue([SECRET, kept.text]) == []
    assert SECRET.encode() not in (tmp_path / "m.db").read_bytes()


def _a_real_corruption_error(tmp_path: Path) -> sqlite3.DatabaseError:
    bad = tmp_path / "garbage.db"
    bad.write_bytes(b"not a database at all" * 300)
    try:
        sqlite3.connect(bad).execute("SELECT * FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError as exc:
        return exc
    raise AssertionError("SQLite read a garbage file")


def test_store_residue_reports_damage_as_damage_and_marks_the_store(tmp_path: Path) -> None:
    """A failure while proving an erasure is an error of its true class, like any statement's:
    damage seen there refuses later writes and says how to recover."""
    from memstrata.errors import DamagedStoreError

    damage = _a_real_corruption_error(tmp_path)

    class Failing:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
            if sql.startswith("PRAGMA wal_checkpoint"):
                raise damage
            return self.conn.execute(sql, *args)

        def close(self) -> None:
            self.conn.close()

    with SqliteStore(tmp_path / "m.db") as store:
        store._conn = Failing(store._conn)  # type: ignore[assignment]
        with pytest.raises(DamagedStoreError, match="doctor --repair"):
            store.residue([SECRET])
        assert store.damage is not None


@pytest.mark.parametrize("pooled", [None, (True, False)])
@pytest.mark.parametrize("views", [(0, 1), (0, 2), (1,)])
def test_the_texts_worked_out_for_a_turn_are_those_the_index_embeds(
    views: tuple[int, ...], pooled: tuple[bool, bool] | None
) -> None:
    from memstrata.index.config import RankingConfig
    from memstrata.index.scope_index import UserIndex, turn_text
    from memstrata.index.views import embedded_texts
    from memstrata.model import Episode, Role, Scope

    class Recording(HashingEmbedder):
        def __init__(self, dim: int) -> None:
            super().__init__(dim)
            self.seen: set[str] = set()

        def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
            self.seen.update(texts)
            return super().embed_documents(texts)

    start = datetime(2026, 2, 3, tzinfo=UTC)
    session = [
        Episode(
            new_id("ep"),
            Scope("u"),
            "chat",
            "s",
            f"P{i % 2}",
            Role.USER,
            f"line {i}",
            start + timedelta(minutes=(i * 7) % 5),
            {},
        )
        for i in range(6)
    ]  # times repeat: the order is by time, then id
    config = RankingConfig(dense_views=views)
    models = [Recording(dim=16)] if pooled is None else [Recording(dim=16), Recording(dim=8)]
    embedder = models[0] if pooled is None else BlendEmbedder(models, {}, pooled)
    index = UserIndex("u", embedder, config)
    index.add_episodes(session)
    seen = set().union(*(m.seen for m in models))
    alone = pooled is not None
    for target in session:
        line = turn_text(target)
        expected = {t for t in seen if line in t.split("\n")}
        assert embedded_texts(session, {target.id}, config, turns_alone=alone) == expected
        assert (
            index._embedded_texts(target.id) | {t for t in seen if line in t.split("\n")[:-1]}
            == expected
        )


def test_the_cli_forget_fails_with_a_store_error_naming_the_copy_left(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memstrata.cli import main

    assert main(["remember", SECRET, "--user", "u", "--data-dir", str(data_dir)]) == 0
    episode_id = capsys.readouterr().out.strip()
    monkeypatch.setattr(JsonlTrace, "redact", lambda self, *args, **kwargs: 0)
    assert main(["forget", episode_id, "--user", "u", "--data-dir", str(data_dir)]) == 7
    err = capsys.readouterr().err
    assert err.startswith(f"error: {episode_id} was deleted, but copies are left: ")
    assert str(_trace_file(data_dir / "trace")) + " line 1" in err
    assert "Traceback" not in err


def test_a_forget_purges_the_cached_vectors_of_earlier_versions_of_a_bullet(
    data_dir: Path, clock: FixedClock
) -> None:
    from memstrata.document.ops import Operation, OpKind

    with _blend_memory(data_dir, clock) as mem:
        secret = _remember_and_search(mem)
        mem.consolidate("u")
        mem.search("door code", "u", granularity="topic")
        doc, version = mem.doc("notes", "u")
        (bullet,) = [b for s in doc.sections for b in s.bullets if b.text == _FACT]
        edited = f"{_FACT}, at the back door"
        edit = Operation(OpKind.EDIT, bullet.id, text=edited)
        mem.apply_doc("notes", "u", [edit], expected_version=version)
        mem.search("door code", "u", granularity="topic")
    db = data_dir / "embeddings.db"
    old, new = f"notes: {_FACT}", f"notes: {edited}"
    assert [_cached(db, old), _cached(db, new)] == [2, 2]
    with Memory.open(settings=load_settings(data_dir=data_dir), clock=clock) as other:
        other.forget(secret, "u")  # as the CLI does: no index built
    assert [_cached(db, old), _cached(db, new)] == [0, 0]


def test_a_purge_read_back_with_vectors_written_again_purges_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process's batch in hand may write a deleted text's vector just after the
    purge (it forgets it itself once it sees the record gone): the purge is made again
    rather than reporting a copy left."""
    import sqlite3

    from memstrata.embed import cache as cache_module
    from memstrata.embed.cache import purge_cache, text_hash, with_cache
    from memstrata.embed.fake import HashingEmbedder

    path = tmp_path / "embeddings.db"
    cached = with_cache(HashingEmbedder(dim=8), path)
    cached.embed_documents(["the locker code is 4417"])
    row = sqlite3.connect(path).execute("SELECT model, hash, vec FROM vectors").fetchone()
    purge = cache_module._purge
    purges: list[int] = []

    def purge_then_written_again(conn: sqlite3.Connection, hashes: list[bytes] | None) -> None:
        purge(conn, hashes)
        purges.append(1)
        if len(purges) == 1:  # the other process's batch lands now
            with sqlite3.connect(path) as other:
                other.execute("INSERT INTO vectors VALUES (?, ?, ?)", row)

    monkeypatch.setattr(cache_module, "_purge", purge_then_written_again)
    assert purge_cache(path, ["the locker code is 4417"]) == []
    assert len(purges) == 2
    count = sqlite3.connect(path).execute(
        "SELECT COUNT(*) FROM vectors WHERE hash = ?", [text_hash("the locker code is 4417")]
    )
    assert count.fetchone()[0] == 0
