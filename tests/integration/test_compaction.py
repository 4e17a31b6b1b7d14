"""``compact`` on the server stores, proven at the byte level: turns (English, Chinese, and one
long enough to leave the row: PostgreSQL TOAST, InnoDB overflow pages) are remembered through
memstrata and forgotten; after :func:`compact_store`, no file of memstrata's tables
(PostgreSQL: each table's ``pg_relation_filepath``, its TOAST table's and every index's;
MariaDB/MySQL: each table's ``.ibd``) holds any of them in UTF-8, while turns still stored are
found there (so the scan reads the right, flushed files).

Reading the engine's files needs the server on this machine and a test run by a user who may
read them (``.ci/databases.sh`` runs the servers as ``postgres`` and ``mysql`` under
``$MEMSTRATA_TEST_DB_DIR``; root may read them): otherwise the byte-level case skips, saying
why. Whether the files held a forgotten turn before compaction depends on where its row fell
in its page (PostgreSQL's opportunistic pruning moves live rows over dead ones; InnoDB's purge
unlinks records): that is printed, not asserted. The other cases (privileges, a held lock, a
dry run) need only the server's URL."""

from __future__ import annotations

import json
import os
import random
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from memstrata.api import Memory
from memstrata.errors import BusyError, InvalidInputError, StoreError
from memstrata.ids import new_id
from memstrata.model import Scope
from memstrata.store.compaction import CompactionReport
from memstrata.store.opening import compact_store, open_store
from tests.contract.backends import fresh_url

SERVERS = ("postgresql", "mysql")
ALICE = Scope("alice")


def _cjk(rng: random.Random, n: int) -> str:
    """``n`` random CJK characters: text no compressor shrinks, so a long one is stored as
    written (PostgreSQL compresses a long value only when that saves a quarter of it)."""
    return "".join(chr(rng.randrange(0x4E00, 0x9FA5)) for _ in range(n))


class Turns:
    """Unique texts for one case: three to forget, two to keep, and the needle of each."""

    def __init__(self) -> None:
        token = new_id("ep")[3:].lower()
        rng = random.Random(token)
        self.gone_en = f"forget-me-{token}"
        self.gone_zh = f"请忘记{_cjk(rng, 8)}"
        self.gone_long = f"long-forget-{token}"
        self.kept = f"keep-me-{token}"
        self.kept_long = f"long-keep-{token}"
        self.forget = [
            f"I met {self.gone_en} at the tea house",
            f"我在茶馆遇见了{self.gone_zh}。",
            f"{self.gone_long} {_cjk(rng, 3000)}",
        ]
        self.keep = [f"Tea at noon, {self.kept}", f"{self.kept_long} {_cjk(rng, 3000)}"]

    @property
    def gone(self) -> list[str]:
        return [self.gone_en, self.gone_zh, self.gone_long]

    def remember_and_forget(self, mem: Memory) -> None:
        """Store them all (each needle checked to be stored as written: nothing scrubbed it),
        then forget the three."""
        mem.remember([f"filler turn {i} about green tea" for i in range(20)], ALICE)
        kept = mem.remember(self.keep, ALICE)
        gone = mem.remember(self.forget, ALICE)
        stored = [e.text for e in mem.store.list_episodes(ALICE)]
        for needle in [*self.gone, self.kept, self.kept_long]:
            assert any(needle in text for text in stored), needle
        assert len(kept) == 2
        for ep in gone:
            mem.forget(ep.id, ALICE)
        left = [e.text for e in mem.store.list_episodes(ALICE)]
        assert not any(n in text for n in self.gone for text in left)


def _scan(files: dict[str, list[Path]], needles: list[str]) -> dict[str, list[str]]:
    """For each needle found (as UTF-8), the names of the files holding it."""
    found: dict[str, list[str]] = {}
    for name, paths in files.items():
        for path in paths:
            try:
                data = path.read_bytes()
            except PermissionError as exc:
                pytest.skip(
                    f"cannot read the database server's file {path} ({exc}): run the tests as "
                    "a user who may read $MEMSTRATA_TEST_DB_DIR (root, or the server's user)"
                )
            for needle in needles:
                if needle.encode("utf-8") in data:
                    found.setdefault(needle, []).append(name)
    return found


class PostgresFiles:
    """The files of memstrata's tables in the test schema: each table's, its TOAST table's,
    and every index of either (with their 1 GB segments)."""

    def __init__(self, url: str) -> None:
        import psycopg

        from memstrata.store.compaction import table_names
        from memstrata.store.server.postgres_schema import MIGRATIONS

        self.conn = psycopg.connect(url, autocommit=True)
        self.tables = table_names(s for m in MIGRATIONS for s in m.statements)
        try:
            self.datadir = Path(self.conn.execute("SHOW data_directory").fetchone()[0])
            self.flush()
        except psycopg.errors.InsufficientPrivilege as exc:
            pytest.skip(f"the test user may not read the data directory or checkpoint: {exc}")
        if not self.datadir.is_dir():
            pytest.skip(f"the server's data directory {self.datadir} is not on this machine")

    def flush(self) -> None:
        self.conn.execute("CHECKPOINT")  # dirty pages of shared buffers written to the files

    def files(self) -> dict[str, list[Path]]:
        rows = self.conn.execute(
            """
            WITH t AS (
                SELECT c.oid, c.reltoastrelid FROM pg_class c
                WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
                  AND c.relname::text = ANY(%s))
            SELECT r.oid::regclass::text, pg_relation_filepath(r.oid) FROM pg_class r
            WHERE r.oid IN (SELECT oid FROM t) OR r.oid IN (SELECT reltoastrelid FROM t)
               OR r.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid IN
                            (SELECT oid FROM t UNION SELECT reltoastrelid FROM t))
            """,
            (self.tables,),
        ).fetchall()
        out: dict[str, list[Path]] = {}
        for name, relative in rows:
            main = self.datadir / relative
            out[name] = [main, *sorted(main.parent.glob(f"{main.name}.[0-9]*"))]
        return out

    def toast_names(self) -> set[str]:
        return {
            r[0]
            for r in self.conn.execute(
                "SELECT reltoastrelid::regclass::text FROM pg_class WHERE "
                "relnamespace = current_schema()::regnamespace AND reltoastrelid <> 0"
            )
        }

    def close(self) -> None:
        self.conn.close()


class MysqlFiles:
    """The ``.ibd`` file of each of memstrata's tables in the test database."""

    def __init__(self, url: str) -> None:
        import pymysql

        from memstrata.store.compaction import table_names
        from memstrata.store.server.mysql import connect_args
        from memstrata.store.server.mysql_schema import migrations

        self.conn = pymysql.connect(**connect_args(url))
        self.tables = table_names(s for m in migrations("utf8mb4_bin") for s in m.statements)
        with self.conn.cursor() as cur:
            cur.execute("SELECT @@datadir AS d, DATABASE() AS db")
            row = cur.fetchone()
        self.dir = Path(row["d"]) / row["db"]
        if not Path(row["d"]).is_dir():
            pytest.skip(f"the server's data directory {row['d']} is not on this machine")

    def flush(self) -> None:
        """Every table's dirty pages written to its file (FLUSH TABLES ... FOR EXPORT)."""
        with self.conn.cursor() as cur:
            cur.execute(f"FLUSH TABLES {', '.join(f'`{t}`' for t in self.tables)} FOR EXPORT")
            cur.execute("UNLOCK TABLES")

    def files(self) -> dict[str, list[Path]]:
        return {t: [self.dir / f"{t}.ibd"] for t in self.tables}

    def toast_names(self) -> set[str]:
        return {"episodes"}  # a long value goes to overflow pages of the same file

    def close(self) -> None:
        self.conn.close()


@contextmanager
def engine_files(backend: str, url: str) -> Iterator[PostgresFiles | MysqlFiles]:
    if not os.environ.get("MEMSTRATA_TEST_DB_DIR"):
        pytest.skip(
            "MEMSTRATA_TEST_DB_DIR is unset: the database servers' files are not known "
            "(.ci/databases.sh start exports it)"
        )
    files = PostgresFiles(url) if backend == "postgresql" else MysqlFiles(url)
    try:
        yield files
    finally:
        files.close()


@pytest.mark.parametrize("backend", SERVERS)
def test_after_compact_no_table_file_holds_a_forgotten_turn(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    turns = Turns()
    with fresh_url(backend, tmp_path) as url, engine_files(backend, url) as engine:
        with Memory.open(tmp_path / "data", store_url=url) as mem:
            turns.remember_and_forget(mem)
        engine.flush()
        before = _scan(engine.files(), turns.gone)
        print(f"{backend}: forgotten turns in the table files before compaction: {before}")

        report = _compact_until_none_kept(url)

        assert {t.table for t in report.tables} >= {"episodes", "facts", "documents", "erasures"}
        assert all(t.files_rewritten >= 1 for t in report.tables)
        assert report.dead_kept == 0 and report.erasures_pending == 0
        engine.flush()
        files = engine.files()
        assert files and all(p.exists() for paths in files.values() for p in paths[:1])
        after = _scan(files, [*turns.gone, turns.kept, turns.kept_long])
        assert {n: after[n] for n in turns.gone if n in after} == {}
        # the scan reads the files that hold the rows: the turns kept are there, the long one
        # in its TOAST table (PostgreSQL) or the table's own file (InnoDB)
        assert "episodes" in after[turns.kept]
        assert set(after[turns.kept_long]) & engine.toast_names()


@pytest.mark.parametrize("backend", SERVERS)
def test_a_transaction_open_since_before_the_forget(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a transaction taken before the forget stays open, the engine keeps the forgotten
    rows (PostgreSQL cannot prune them, InnoDB cannot purge them), so the files surely hold
    them. PostgreSQL's VACUUM FULL then copies them too, and says so (``dead_kept``); InnoDB's
    rebuild drops them. Once the transaction ends, a compaction leaves none on either."""
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    turns = Turns()
    with fresh_url(backend, tmp_path) as url, engine_files(backend, url) as engine:
        with _snapshot(backend, url) as release:
            with Memory.open(tmp_path / "data", store_url=url) as mem:
                turns.remember_and_forget(mem)
            engine.flush()
            before = _scan(engine.files(), turns.gone)
            assert set(before) == set(turns.gone)
            assert "episodes" in before[turns.gone_en]

            held = compact_store(url)

            engine.flush()
            kept = _scan(engine.files(), turns.gone)
            if backend == "postgresql":
                assert held.dead_kept >= 3
                assert next(t for t in held.tables if t.table == "episodes").dead_kept == 3
                assert set(kept) == set(turns.gone)
            else:
                assert held.dead_kept == 0 and kept == {}
            release()
            again = _compact_until_none_kept(url)
        assert again.dead_kept == 0
        engine.flush()
        assert _scan(engine.files(), turns.gone) == {}


def _compact_until_none_kept(url: str) -> CompactionReport:
    """Compact, and again while PostgreSQL had to keep deleted rows: another test's
    transaction on the same database, open from before the forget, makes VACUUM FULL keep
    them, as an operator's would (the command says to run it again)."""
    for _ in range(60):
        report = compact_store(url)
        if report.dead_kept == 0:
            return report
        time.sleep(0.5)
    return report


@contextmanager
def _snapshot(backend: str, url: str) -> Iterator[Any]:
    """A transaction holding a snapshot (taken now) open; yields the call that ends it."""
    if backend == "postgresql":
        import psycopg

        with psycopg.connect(url) as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            conn.execute("SELECT 1").fetchall()
            yield conn.rollback
        return
    import pymysql

    from memstrata.store.server.mysql import connect_args

    conn = pymysql.connect(**{**connect_args(url), "autocommit": False})
    try:
        with conn.cursor() as cur:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        yield conn.rollback
    finally:
        conn.close()


@pytest.mark.parametrize("backend", SERVERS)
def test_a_dry_run_changes_no_file_and_a_compaction_keeps_every_record(
    backend: str, tmp_path: Path
) -> None:
    with fresh_url(backend, tmp_path) as url:
        with Memory.open(tmp_path / "data", store_url=url) as mem:
            mem.remember(["one 一", "two 二", "three 三"], ALICE)
        nodes = _file_ids(backend, url)
        dry = compact_store(url, dry_run=True)
        assert dry.dry_run and all(t.files_rewritten == 0 for t in dry.tables)
        assert _file_ids(backend, url) == nodes
        done = compact_store(url, tables=["episodes"])
        assert [t.table for t in done.tables] == ["episodes"]
        assert _file_ids(backend, url)["episodes"] != nodes["episodes"]
        assert _file_ids(backend, url)["facts"] == nodes["facts"]
        store = open_store(url)
        try:
            assert [e.text for e in store.list_episodes(ALICE)] == ["one 一", "two 二", "three 三"]
        finally:
            store.close()
        with pytest.raises(InvalidInputError, match="not a table of memstrata's schema: nope"):
            compact_store(url, tables=["nope"])


def _file_ids(backend: str, url: str) -> dict[str, Any]:
    """Which file each table is in now (PostgreSQL relfilenode; InnoDB tablespace id)."""
    if backend == "postgresql":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            return dict(
                conn.execute(
                    "SELECT relname::text, relfilenode FROM pg_class "
                    "WHERE relnamespace = current_schema()::regnamespace AND relkind = 'r'"
                ).fetchall()
            )
    import pymysql

    from memstrata.store.server.mysql import connect_args

    conn = pymysql.connect(**connect_args(url))
    try:
        with conn.cursor() as cur:
            cur.execute(
                "SELECT NAME AS n, SPACE AS s FROM information_schema.INNODB_SYS_TABLES "
                "WHERE NAME LIKE CONCAT(DATABASE(), '/%')"
            )
            return {str(r["n"]).split("/", 1)[1]: r["s"] for r in cur.fetchall()}
    finally:
        conn.close()


@pytest.mark.parametrize("backend", SERVERS)
def test_a_table_held_by_another_transaction_is_busy_after_the_lock_timeout(
    backend: str, tmp_path: Path
) -> None:
    with fresh_url(backend, tmp_path) as url:
        open_store(url).close()
        with (
            _holding(backend, url, "facts"),
            pytest.raises(BusyError, match="held the table facts") as caught,
        ):
            compact_store(url, tables=["episodes", "facts"], lock_timeout_s=1)
        assert "tables compacted before it: episodes" in str(caught.value)
        assert [t.table for t in compact_store(url, tables=["facts"]).tables] == ["facts"]


@contextmanager
def _holding(backend: str, url: str, table: str) -> Iterator[None]:
    """A transaction that has read ``table`` and stays open."""
    if backend == "postgresql":
        import psycopg

        with psycopg.connect(url) as conn:
            conn.execute(f'SELECT count(*) FROM "{table}"').fetchall()
            yield
            conn.rollback()
        return
    import pymysql

    from memstrata.store.server.mysql import connect_args

    conn = pymysql.connect(**{**connect_args(url), "autocommit": False})
    try:
        with conn.cursor() as cur:
            cur.execute("START TRANSACTION")
            cur.execute(f"SELECT COUNT(*) FROM `{table}`")
            cur.fetchall()
        yield
        conn.rollback()
    finally:
        conn.close()


@pytest.mark.parametrize("backend", SERVERS)
def test_a_user_without_the_privilege_is_told_which_and_nothing_is_compacted(
    backend: str, tmp_path: Path
) -> None:
    with fresh_url(backend, tmp_path) as url:
        open_store(url).close()
        nodes = _file_ids(backend, url)
        with (
            _weak_user(backend, url) as weak,
            pytest.raises(StoreError, match="insufficient privilege") as caught,
        ):
            compact_store(weak)
        message = str(caught.value)
        assert "weakpass" not in message
        if backend == "postgresql":
            assert "needs its owner" in message and "episodes (owner " in message
        else:
            assert "ALTER, CREATE and INSERT privileges" in message
        assert _file_ids(backend, url) == nodes


@contextmanager
def _weak_user(backend: str, url: str) -> Iterator[str]:
    """A user who may open the store and write records but not rebuild its tables; yields
    the store URL as that user (password ``weakpass``)."""
    # the whole id (31 characters with the prefix, within MySQL's 32): its first ten are only
    # the millisecond, which two parallel workers may share
    name = f"weak_{new_id('ep')[3:].lower()}"
    parts = urlsplit(url)
    host = parts.netloc.rsplit("@", 1)[-1]
    weak = urlunsplit(parts._replace(netloc=f"{name}:weakpass@{host}"))
    if backend == "postgresql":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            schema = conn.execute("SELECT current_schema()").fetchone()[0]  # type: ignore[index]
            conn.execute(f"CREATE ROLE {name} LOGIN PASSWORD 'weakpass'")
            conn.execute(f'GRANT USAGE, CREATE ON SCHEMA "{schema}" TO {name}')
            conn.execute(
                f'GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA "{schema}" TO {name}'
            )
        try:
            yield weak
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP OWNED BY {name}")
                conn.execute(f"DROP ROLE {name}")
        return
    import pymysql

    from memstrata.store.server.mysql import connect_args

    args = connect_args(url)
    conn = pymysql.connect(**args)
    try:
        with conn.cursor() as cur:
            for h in ("127.0.0.1", "localhost"):
                cur.execute(f"CREATE USER '{name}'@'{h}' IDENTIFIED BY 'weakpass'")
                cur.execute(
                    f"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE ON `{args['database']}`.* "
                    f"TO '{name}'@'{h}'"
                )
        yield weak
    finally:
        with conn.cursor() as cur:
            for h in ("127.0.0.1", "localhost"):
                cur.execute(f"DROP USER IF EXISTS '{name}'@'{h}'")
        conn.close()


@pytest.mark.parametrize("backend", SERVERS)
def test_cli_compact_on_a_server(
    backend: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memstrata.cli import main

    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    turns = Turns()
    with fresh_url(backend, tmp_path) as url:
        with _snapshot(backend, url) as release:
            with Memory.open(tmp_path / "data", store_url=url) as mem:
                turns.remember_and_forget(mem)
            assert main(["--store-url", url, "compact", "--dry-run"]) == 0
            out = capsys.readouterr().out
            assert "would compact" in out and "episodes" in out and "nothing changed" in out
            code = main(["compact", "--store-url", url, "--table", "episodes"])
            out, err = capsys.readouterr()
            if backend == "postgresql":  # the open transaction still sees the forgotten rows
                assert code == 5 and "3 deleted row(s) were kept" in err
                assert "run compact again once it has ended" in err
            else:
                assert code == 0 and err.count("episodes:") == 1
            assert "compacted 1 table(s)" in out and "out of its reach" in out
            release()
        _compact_until_none_kept(url)  # no deleted row left: the next run keeps none
        assert main(["compact", "--store-url", url, "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert report["engine"] == backend and report["dead_kept"] == 0
        assert "episodes" in [t["table"] for t in report["tables"]]


def test_compact_on_a_mariadb_database_whose_name_innodb_encodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """InnoDB names a table ``database/table`` in its file-name encoding (``-`` is ``@002d``,
    a Chinese character ``@xxxx``): the check that each table got a new tablespace must find
    the tables of such a database, not report them as not rebuilt."""
    from tests.contract.backends import fresh_mysql, server_url

    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    with fresh_mysql(server_url("mysql"), suffix="-生产") as url:
        turns = Turns()
        with Memory.open(tmp_path / "data", store_url=url) as mem:
            turns.remember_and_forget(mem)
        store = open_store(url)
        try:
            conn = store._connect()  # type: ignore[attr-defined]
            try:
                with conn.cursor() as cur:
                    spaces = store._spaces(cur)  # type: ignore[attr-defined]
            finally:
                conn.close()
            assert spaces is not None and {"episodes", "erasures", "facts"} <= set(spaces)
            report = compact_store(url)
        finally:
            store.close()
        assert report.dead_kept == 0
        assert {t.table for t in report.tables} >= {"episodes", "erasures"}
        assert all(t.files_rewritten == 1 for t in report.tables)
        with Memory.open(tmp_path / "data", store_url=url) as mem:
            left = "\n".join(e.text for e in mem.store.list_episodes(ALICE))
        assert turns.kept in left and turns.kept_long in left
        assert not any(n in left for n in turns.gone)
