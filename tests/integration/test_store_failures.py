"""Store failures surface as their true class: a held lock is busy, a full disk says so."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memstrata.cli import exit_code_for
from memstrata.errors import BusyError, DamagedStoreError, StoreError
from memstrata.model import Episode, Role, Scope
from memstrata.store.sqlite import SqliteStore, failures
from tests.conftest import FixedClock
from tests.mounts import needs_mounts, read_only, run_in_mount_namespace, small_disk


def _episode(i: int, text: str = "hello") -> Episode:
    clock = FixedClock()
    return Episode(
        id=f"ep_{i:026d}",
        scope=Scope("alice"),
        surface="chat",
        session_id="s1",
        speaker="alice",
        role=Role.USER,
        text=text,
        time=clock.now(),
    )


def test_a_held_write_lock_is_busy_not_a_store_failure(tmp_path: Path) -> None:
    path = tmp_path / "memstrata.db"
    store = SqliteStore(path, busy_timeout_ms=50)
    other = sqlite3.connect(path, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(BusyError, match="locked") as caught:
            store.add_episodes(Scope("alice"), [_episode(1)])
        assert exit_code_for(caught.value) == 5
        other.execute("ROLLBACK")
        store.add_episodes(Scope("alice"), [_episode(1)])
        assert [e.id for e in store.list_episodes(Scope("alice"))] == [_episode(1).id]
    finally:
        other.close()
        store.close()


def test_a_damage_mark_left_after_open_refuses_the_next_write(tmp_path: Path) -> None:
    path = tmp_path / "memstrata.db"
    store = SqliteStore(path)
    try:
        store.add_episodes(Scope("alice"), [_episode(1)])
        failures.mark_damaged(path, "seen by another process")  # as another process would
        with pytest.raises(DamagedStoreError, match="seen by another process"):
            store.add_episodes(Scope("alice"), [_episode(2)])
        assert [e.id for e in store.list_episodes(Scope("alice"))] == [_episode(1).id]
    finally:
        store.close()


@needs_mounts
def test_a_full_disk_is_a_clear_store_error_and_nothing_is_written(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    result = run_in_mount_namespace(
        small_disk(disk, "400k"),
        f"""
        from memstrata.errors import StoreError
        from memstrata.model import Scope
        from memstrata.store.sqlite import SqliteStore, failures
        from tests.integration.test_store_failures import _episode

        store = SqliteStore({str(disk / "memstrata.db")!r})
        store.add_episodes(Scope("alice"), [_episode(0)])
        try:
            store.add_episodes(Scope("alice"), [_episode(i, "x" * 2000) for i in range(1, 400)])
        except StoreError as exc:
            print("ERROR", type(exc).__name__, exc)
        else:
            print("NO ERROR")
        print("COUNT", len(store.list_episodes(Scope("alice"), limit=1000)))
        store.add_episodes(Scope("alice"), [_episode(500)])
        print("AFTER", len(store.list_episodes(Scope("alice"), limit=1000)))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "ERROR StoreError disk full" in result.stdout, result.stdout
    assert "nothing was written" in result.stdout
    assert "rollback" not in result.stdout
    assert "COUNT 1" in result.stdout
    assert "AFTER 2" in result.stdout


def test_a_failing_rollback_never_masks_the_original_error(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "memstrata.db")

    def engine_gave_up() -> None:
        with store._write() as tx:
            tx.execute("ROLLBACK")  # the engine ended the transaction itself, as on SQLITE_FULL
            raise sqlite3.OperationalError("database or disk is full")

    try:
        with pytest.raises(StoreError, match="disk full"):
            engine_gave_up()
    finally:
        store.close()


@needs_mounts
def test_a_read_only_data_directory_serves_reads_and_refuses_writes(tmp_path: Path) -> None:
    data = tmp_path / "mem"
    with SqliteStore(data / "memstrata.db") as store:
        store.add_episodes(Scope("alice"), [_episode(1, "tea in the morning")])
    result = run_in_mount_namespace(
        read_only(data),
        f"""
        from memstrata.errors import StoreError
        from memstrata.model import Scope
        from memstrata.store.sqlite import SqliteStore, failures
        from tests.integration.test_store_failures import _episode

        store = SqliteStore({str(data / "memstrata.db")!r})
        print("READ", [e.text for e in store.list_episodes(Scope("alice"))])
        try:
            store.add_episodes(Scope("alice"), [_episode(2)])
        except StoreError as exc:
            print("WRITE", type(exc).__name__, exc)
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "READ ['tea in the morning']" in result.stdout, result.stdout
    assert f"WRITE StoreError the data directory {data} is read-only" in result.stdout


@needs_mounts
def test_remember_on_a_full_disk_is_exit_7_disk_full_and_reads_still_work(
    tmp_path: Path,
) -> None:
    disk = tmp_path / "disk"
    result = run_in_mount_namespace(
        small_disk(disk, "1m"),
        f"""
        from pathlib import Path
        from memstrata.cli import main
        from tests.mounts import fill_disk

        data = {str(disk / "mem")!r}
        assert main(["remember", "kept turn", "--user", "alice", "--data-dir", data]) == 0
        fill_disk(Path(data))
        turns = ["a long turn " * 3000]
        print("RC", main(["remember", *turns, "--user", "alice", "--data-dir", data]), flush=True)
        print("LIST", main(["list", "--user", "alice", "--data-dir", data]), flush=True)
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "RC 7" in result.stdout, result.stdout + result.stderr
    assert "LIST 0" in result.stdout and "kept turn" in result.stdout
    assert "disk full" in result.stderr and "nothing was written" in result.stderr
    assert "Traceback" not in result.stderr
