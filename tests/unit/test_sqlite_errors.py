"""What an SQLite error means: only a damaged file counts as damage."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memstrata.errors import BusyError, DamagedStoreError, StoreError
from memstrata.sqlite_errors import is_damage
from memstrata.store.sqlite import SqliteStore
from memstrata.store.sqlite.failures import damage_mark, translate


def _error(sql: str) -> sqlite3.Error:
    conn = sqlite3.connect(":memory:")
    try:
        conn.execute(sql).fetchall()
    except sqlite3.Error as exc:
        return exc
    finally:
        conn.close()
    raise AssertionError(f"{sql} did not fail")


def test_malformed_json_is_not_a_damaged_file(tmp_path: Path) -> None:
    exc = _error("SELECT json_extract('{bad', '$')")
    assert "malformed" in str(exc) and not is_damage(exc)
    store = SqliteStore(tmp_path / "memstrata.db")
    try:
        with pytest.raises(StoreError) as caught:
            store._read("SELECT json_extract('{bad', '$')")
        assert not isinstance(caught.value, DamagedStoreError)
        assert store.damage is None and not damage_mark(store.path).exists()
    finally:
        store.close()


def test_a_file_that_is_not_a_database_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    path.write_bytes(b"garbage" * 1000)
    conn = sqlite3.connect(path)
    with pytest.raises(sqlite3.DatabaseError) as caught:
        conn.execute("SELECT * FROM sqlite_master").fetchall()
    conn.close()
    assert is_damage(caught.value)
    assert isinstance(translate(caught.value, path, "read"), DamagedStoreError)


def test_a_lock_is_busy() -> None:
    exc = sqlite3.OperationalError("database is locked")
    assert isinstance(translate(exc, Path("m.db"), "write to"), BusyError)
