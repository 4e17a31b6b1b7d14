"""The read-only checks of ``doctor``: a file they cannot open, or cannot finish checking, is
the problem they report, never an exception."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memstrata.doctor import check_cache, check_database


def test_a_file_that_is_not_a_database_cannot_be_opened(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(b"not a database at all" * 400)
    [db_problem] = check_database(path)
    [cache_problem] = check_cache(path)
    assert db_problem.startswith("cannot be opened: ") and "not a database" in db_problem
    assert cache_problem == db_problem


def test_a_cache_without_its_table_cannot_be_checked(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE other (x)")
    conn.close()
    assert check_cache(path) == ["cannot be checked: no such table: vectors"]
    assert check_database(path) == []
