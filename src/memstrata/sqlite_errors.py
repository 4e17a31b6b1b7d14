"""What a :mod:`sqlite3` error means, for every module that opens an SQLite file, and how each
of them opens one it cannot write and turns ``secure_delete`` on.

Leaf module: the record store and the embedding cache each decide what to do about it.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any


def error_name(exc: sqlite3.Error) -> str:
    return str(getattr(exc, "sqlite_errorname", "") or "")


def is_damage(exc: BaseException) -> bool:
    """Whether ``exc`` says the file itself is damaged (corrupt pages, not a database)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = error_name(exc)
    if name:
        return name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB"
    text = str(exc)  # a driver that does not name its errors
    return "database disk image is malformed" in text or "file is not a database" in text


def is_busy(exc: sqlite3.Error) -> bool:
    name = error_name(exc)
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "database is locked" in str(exc)


def is_full(exc: sqlite3.Error) -> bool:
    return error_name(exc) == "SQLITE_FULL" or "database or disk is full" in str(exc)


def is_read_only(exc: sqlite3.Error) -> bool:
    return error_name(exc).startswith("SQLITE_READONLY") or "readonly database" in str(exc)


def cannot_grow(exc: sqlite3.Error) -> bool:
    """Whether the file or its WAL index could not grow: a full disk (even opening for a read
    fails when the WAL index cannot be sized)."""
    name = error_name(exc)
    return is_full(exc) or name in ("SQLITE_IOERR_SHMSIZE", "SQLITE_IOERR_SHMMAP")


def turn_on_secure_delete(conn: sqlite3.Connection) -> bool:
    """Make ``conn`` overwrite deleted content; whether this SQLite honours it (a build may
    refuse)."""
    conn.execute("PRAGMA secure_delete = ON")
    return bool(conn.execute("PRAGMA secure_delete").fetchone()[0] == 1)


def read_only_file(path: Path) -> bool:
    """Whether an existing database file must be opened read-only: this process cannot write
    it or its directory (permissions, a read-only mount, an immutable file)."""
    if not path.exists():
        return False
    return not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))


def connect_read_only(path: Path, **kwargs: Any) -> sqlite3.Connection:
    """A connection that reads ``path`` and never writes it: ``mode=ro``, which sees what
    other processes commit, or, when the WAL index cannot be created beside a WAL database (a
    read-only directory), ``immutable``: then nothing can write the file from here either."""
    uri = path.resolve().as_uri()
    conn: sqlite3.Connection = sqlite3.connect(f"{uri}?mode=ro", uri=True, **kwargs)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    immutable: sqlite3.Connection = sqlite3.connect(f"{uri}?immutable=1", uri=True, **kwargs)
    return immutable
