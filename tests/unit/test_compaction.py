"""Compaction on SQLite (VACUUM, then a checkpoint), the table list every engine compacts, and
``memstrata compact`` on the command line (the server stores' cases that need a server are in
``tests/integration/test_compaction.py``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.cli import main
from memstrata.errors import BusyError, InvalidInputError
from memstrata.model import Scope
from memstrata.settings import load_settings
from memstrata.store.compaction import (
    Compactable,
    CompactionReport,
    TableCompaction,
    chosen_tables,
    table_names,
)
from memstrata.store.opening import compact_store
from memstrata.store.server.mysql_schema import migrations as mysql_migrations
from memstrata.store.server.postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from memstrata.store.sql.copying import TABLES
from memstrata.store.sqlite import SqliteStore


def _filled(data_dir: Path) -> Path:
    """A memory whose user wrote much and was forgotten, and another user who stays."""
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        mem.remember([f"turn {i} " + "茶" * 2000 for i in range(40)], "gone")
        mem.remember("我喜欢喝茶 and tea", "stays")
        mem.forget_scope("gone")
    return data_dir / "memstrata.db"


@pytest.mark.parametrize(
    "statements",
    [
        [s for m in POSTGRES_MIGRATIONS for s in m.statements],
        [s for m in mysql_migrations("utf8mb4_bin") for s in m.statements],
    ],
    ids=["postgresql", "mysql"],
)
def test_every_table_of_the_schema_is_compacted(statements: list[str]) -> None:
    names = table_names(statements)
    assert set(TABLES) <= set(names)  # every table migrate copies holds text to compact
    assert {"schema_migrations", "feed_heads"} <= set(names)
    assert len(names) == len(set(names))


def test_only_the_schema_s_tables_may_be_named() -> None:
    assert chosen_tables(["a", "b"], None) == ["a", "b"]
    assert chosen_tables(["a", "b"], ["b", "b"]) == ["b"]
    with pytest.raises(InvalidInputError, match="not a table of memstrata's schema: c"):
        chosen_tables(["a", "b"], ["c"])


def test_sqlite_vacuum_gives_the_forgotten_pages_back_and_keeps_every_record(
    tmp_path: Path,
) -> None:
    db = _filled(tmp_path / "mem")
    store = SqliteStore(db)
    try:
        assert isinstance(store, Compactable)
        dry = store.compact(dry_run=True)
        assert dry.dry_run and dry.tables[0].files_rewritten == 0
        assert db.stat().st_size == dry.tables[0].bytes_before
        report = store.compact()
        [one] = report.tables
        assert one.table == "memstrata.db" and one.files_rewritten == 1
        assert one.bytes_after < one.bytes_before / 2
        assert db.stat().st_size == one.bytes_after  # and the write-ahead log is empty
        assert [e.text for e in store.list_episodes(Scope("stays"))] == ["我喜欢喝茶 and tea"]
        assert store.list_episodes(Scope("gone")) == []
        assert store._conn.execute("PRAGMA busy_timeout").fetchone()[0] == 10_000
        with pytest.raises(InvalidInputError, match="whole file at once"):
            store.compact(tables=["episodes"])
    finally:
        store.close()


def test_sqlite_compaction_waits_for_another_writer_then_is_busy(tmp_path: Path) -> None:
    db = _filled(tmp_path / "mem")
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(BusyError, match="locked by another writer"):
            compact_store(f"sqlite:///{db}", lock_timeout_s=0.2)
    finally:
        other.execute("ROLLBACK")
        other.close()
    with pytest.raises(InvalidInputError, match="lock timeout must be positive"):
        compact_store(f"sqlite:///{db}", lock_timeout_s=0)


def test_cli_compact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data_dir = tmp_path / "mem"
    assert main(["compact", "--data-dir", str(data_dir)]) == 3  # no memory: nothing created
    assert "no memory in" in capsys.readouterr().err and not data_dir.exists()
    db = _filled(data_dir)
    size = db.stat().st_size
    assert main(["compact", "--dry-run", "--data-dir", str(data_dir)]) == 0
    out = capsys.readouterr().out
    assert "would compact 1 table(s)" in out and "nothing changed" in out
    assert db.stat().st_size == size
    assert main(["compact", "--data-dir", str(data_dir), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["engine"] == "sqlite" and report["bytes_after"] < report["bytes_before"]
    assert report["remains"] and report["locking"]
    assert main(["compact", "--store-url", f"sqlite:///{db}"]) == 0
    out = capsys.readouterr().out
    assert "compacted 1 table(s)" in out and "out of its reach" in out
    assert main(["compact", "--table", "episodes", "--data-dir", str(data_dir)]) == 2
    missing = tmp_path / "nothing.db"
    assert main(["compact", "--store-url", f"sqlite:///{missing}"]) == 3
    assert not missing.exists()


def test_cli_compact_of_an_unreachable_server_shows_no_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = "postgresql://mem:s3cretpw@127.0.0.1:1/memstrata?connect_timeout=1"
    assert main(["--store-url", url, "compact"]) == 7
    err = capsys.readouterr().err
    assert "cannot connect to the database postgresql://mem:***@127.0.0.1:1" in err
    assert "s3cretpw" not in err


def test_the_rows_vacuum_full_kept_are_read_from_its_verbose_report() -> None:
    from memstrata.store.server.postgres_compaction import Notice, _dead_kept

    said = [
        Notice("INFO", 'vacuuming "s.episodes"', ""),
        Notice(
            "INFO",
            '"s.episodes": found 3 removable, 24 nonremovable row versions in 2 pages',
            "2 dead row versions cannot be removed yet.\nCPU: user: 0.00 s.",
        ),
    ]
    assert _dead_kept(said) == 2
    assert _dead_kept([Notice("INFO", "x", "0 dead row versions cannot be removed yet.")]) == 0
    # in another language the count is unknown, not zero
    assert _dead_kept([Notice("INFO", "x", "2 tote Zeilenversionen können noch nicht")]) is None
    assert _dead_kept([]) is None


class _Cursor:
    """Answers ``SELECT @@innodb_file_per_table`` with off."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    def execute(self, sql: str, params: object = None) -> None:
        self.statements.append(sql)

    def fetchone(self) -> dict[str, int]:
        return {"on_": 0}


def test_innodb_without_a_file_per_table_is_refused_before_anything_is_done() -> None:
    from memstrata.errors import StoreError
    from memstrata.store.server.mysql import MysqlStore
    from memstrata.store.url import parse_store_url

    store = object.__new__(MysqlStore)  # no server: only the check is run
    store.url = parse_store_url("mysql://mem:s3cret@db.internal/memstrata")
    cursor = _Cursor()
    with pytest.raises(StoreError, match="innodb_file_per_table is off") as caught:
        store._compaction_plan(cursor, ["episodes"])
    assert "s3cret" not in str(caught.value) and "nothing was compacted" in str(caught.value)
    assert len(cursor.statements) == 1 and not any("ALTER" in s for s in cursor.statements)


def test_erasures_whose_texts_the_journal_keeps_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two data directories share a store: a forget through one keeps its texts in the
    journal until the other has applied it, and no compaction can remove those."""
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    with Memory.open(tmp_path / "b", store_url=url):
        pass  # enrolled
    with Memory.open(tmp_path / "a", store_url=url) as a:
        [ep] = a.remember("I met Zoe at the tea house 在茶馆", "u")
        a.forget(ep.id, "u")
    assert compact_store(url).erasures_pending == 1
    assert main(["compact", "--store-url", url]) == 0
    assert "1 erasure(s) still keep their texts" in capsys.readouterr().out
    with Memory.open(tmp_path / "b", store_url=url):
        pass  # applies the erasure: the journal drops the texts
    assert compact_store(url).erasures_pending == 0


@pytest.mark.parametrize("timeout", ["inf", "1e309", "-inf", "nan", "0", "-1", "2147484", "1e12"])
def test_a_lock_timeout_no_engine_takes_is_refused_in_one_line(
    timeout: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An infinite timeout was a traceback (exit 1); one past PostgreSQL's lock_timeout range
    a store failure (exit 7) after connecting: both are bad input, refused before any work."""
    data_dir = tmp_path / "mem"
    db = _filled(data_dir)
    size = db.stat().st_size
    url = "postgresql://mem:pw@127.0.0.1:1/memstrata"  # refused before connecting
    for where in (["--data-dir", str(data_dir)], ["--store-url", url]):
        code = main(["compact", *where, "--lock-timeout", timeout])
        err = capsys.readouterr().err
        assert code == 2, err
        assert "lock timeout must be positive and at most 2147483 seconds" in err
        assert len(err.strip().splitlines()) == 1
    assert db.stat().st_size == size
    with pytest.raises(InvalidInputError):
        compact_store(f"sqlite:///{db}", lock_timeout_s=float(timeout))


def test_the_json_total_of_kept_rows_is_null_when_a_table_s_count_is_unknown() -> None:
    """A server reporting in another language says nothing memstrata reads: the JSON total
    was 0 (all clear) although a deleted row may have been kept; it is null (unknown)."""

    def report(*kept: int | None) -> dict[str, object]:
        tables = tuple(TableCompaction(f"t{i}", 10, 5, 1, k) for i, k in enumerate(kept))
        return CompactionReport("postgresql", "u", "m", "l", False, tables).to_json()

    assert report(0, None)["dead_kept"] is None
    assert report(None)["dead_kept"] is None
    assert report(0, 0)["dead_kept"] == 0
    assert report(2, None)["dead_kept"] == 2  # some kept for certain: that count, and exit 5
    assert [t["dead_kept"] for t in report(0, None)["tables"]] == [0, None]  # type: ignore[union-attr]
