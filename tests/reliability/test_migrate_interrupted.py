"""An interrupted ``memstrata migrate`` strands nobody: the copy is one transaction on the
target, so a migration killed with SIGKILL midway, or stopped by a lost connection, an error
or Ctrl-C on its Nth page, leaves the target without a single copied row, and running the same
command again completes and verifies. On SQLite always; on PostgreSQL and MariaDB/MySQL when
their test servers are set (see :mod:`tests.contract.backends`)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from memstrata.errors import StoreError
from memstrata.store.copy import migrate_store
from memstrata.store.opening import open_store
from memstrata.store.sql.copying import TABLES, CopyTables
from tests.conftest import FixedClock
from tests.contract.backends import fresh_url
from tests.contract.test_store_contract import BOB, episode
from tests.integration.test_store_migrate import _fill, _read_back

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("sqlite", "postgresql", "mysql")
WAIT_S = 120.0  # generous: the machine is shared


def _rows_in(url: str) -> list[str]:
    """The tables of memstrata's own that hold rows at ``url`` (read from a new connection)."""
    store = open_store(url)
    try:
        assert isinstance(store, CopyTables)
        return store.holds_rows()
    finally:
        store.close()


def _wait_for(path: Path, proc: subprocess.Popen[str]) -> str:
    """What the paused migration wrote to ``path``, once it did; fails if it died first."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if path.exists() and path.read_text(encoding="utf-8"):
            return path.read_text(encoding="utf-8")
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the migration ended before pausing ({proc.returncode}): {out}{err}")
        time.sleep(0.05)  # polling an observable condition, not timing the copy
    pytest.fail(f"the migration did not reach its first page within {WAIT_S} s")


def _memstrata(*args: str) -> subprocess.CompletedProcess[str]:
    exe = str(Path(sys.executable).with_name("memstrata"))
    return subprocess.run(
        [exe, *args], capture_output=True, text=True, timeout=WAIT_S, stdin=subprocess.DEVNULL
    )


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
@pytest.mark.parametrize("target", ENGINES)
def test_a_migration_killed_midway_leaves_nothing_and_a_rerun_completes(
    target: str, signum: int, tmp_path: Path, clock: FixedClock
) -> None:
    """SIGKILL: no handler, no rollback by the process itself (the engine discards the open
    transaction). SIGINT (Ctrl-C): the process rolls back and exits 130."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with fresh_url("sqlite", tmp_path / "a") as src, fresh_url(target, tmp_path / "b") as dst:
        want = _fill(src, clock)
        paused_at = tmp_path / "paused-at"
        command = ["migrate", "--from", src, "--to", dst]
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.reliability.migrate_paused", *command],
            cwd=ROOT,
            env={**os.environ, "MEMSTRATA_TEST_PAUSED_AT": str(paused_at)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert _wait_for(paused_at, proc) == next(iter(TABLES))
            # the first page is in the target, in a transaction no one else sees
            assert _rows_in(dst) == []
            proc.send_signal(signum)
            _, err = proc.communicate(timeout=WAIT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=WAIT_S)
        assert proc.returncode == (-9 if signum == signal.SIGKILL else 130), err
        if signum == signal.SIGINT:
            assert "interrupted: " in err and "keeps no copied row" in err
        assert _rows_in(dst) == []  # nothing to clean by hand
        done = _memstrata("migrate", "--from", src, "--to", dst)
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines()[-1].startswith("copied "), done.stdout  # copied now
        assert done.stdout.rstrip().endswith("; verified")
        _read_back(dst, want)


def _drop_connection(store: CopyTables) -> None:
    """Cut the store's connection of the open copy from the server's side, for real."""
    conn = store._copy_tx.conn  # the copy's own connection
    if store.dialect.name == "postgresql":
        import psycopg

        pid = conn.info.backend_pid
        with psycopg.connect(conn.info.dsn, password=conn.info.password, autocommit=True) as k:
            k.execute("SELECT pg_terminate_backend(%s)", (pid,))
    else:
        import pymysql

        from memstrata.store.server.mysql import connect_args

        thread = conn.thread_id()
        killer = pymysql.connect(**connect_args(store.url.raw))  # type: ignore[attr-defined]
        try:
            killer.cursor().execute(f"KILL {int(thread)}")
        finally:
            killer.close()


def _failing_on_page(
    monkeypatch: pytest.MonkeyPatch, n: int, fail: Callable[[CopyTables], None]
) -> list[str]:
    """Make the copy's ``n``-th insert of a page fail as ``fail`` makes it; the tables of the
    pages inserted."""
    original = CopyTables.insert_rows
    pages: list[str] = []

    def insert(self: CopyTables, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
        pages.append(table)
        if len(pages) == n:
            fail(self)
        original(self, table, rows)

    monkeypatch.setattr(CopyTables, "insert_rows", insert)
    return pages


def _disk_full(store: CopyTables) -> None:
    raise sqlite3.OperationalError("database or disk is full")


def _interrupt(store: CopyTables) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("target", "fail", "error"),
    [
        ("sqlite", _disk_full, StoreError),
        ("sqlite", _interrupt, KeyboardInterrupt),
        ("postgresql", _drop_connection, StoreError),
        ("postgresql", _interrupt, KeyboardInterrupt),
        ("mysql", _drop_connection, StoreError),
        ("mysql", _interrupt, KeyboardInterrupt),
    ],
)
def test_a_copy_failing_on_its_third_page_keeps_nothing(
    target: str,
    fail: Callable[[CopyTables], None],
    error: type[BaseException],
    tmp_path: Path,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with fresh_url("sqlite", tmp_path / "a") as src, fresh_url(target, tmp_path / "b") as dst:
        want = _fill(src, clock)
        pages = _failing_on_page(monkeypatch, 3, fail)
        with pytest.raises(error) as raised:
            migrate_store(src, dst)
        assert len(pages) == 3  # two pages were inserted before it failed
        if error is StoreError:
            assert "nothing was" in str(raised.value)
        assert _rows_in(dst) == []
        monkeypatch.undo()
        tables = migrate_store(src, dst).tables
        assert tables["episodes"]["rows"] == 6
        _read_back(dst, want)


def test_a_source_written_during_the_copy_fails_verification_and_keeps_nothing(
    tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    src, dst = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    _fill(src, clock)

    finish = CopyTables.finish_copy

    def write_to_the_source_then_finish(store: CopyTables) -> None:
        other = open_store(src, clock=clock)  # every table was read already
        try:
            other.add_episodes(BOB, [episode(BOB, "written meanwhile")])
        finally:
            other.close()
        finish(store)

    monkeypatch.setattr(CopyTables, "finish_copy", write_to_the_source_then_finish)
    with pytest.raises(StoreError, match="differs from its source in episodes"):
        migrate_store(src, dst)
    assert _rows_in(dst) == []
