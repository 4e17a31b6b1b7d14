"""What a :mod:`sqlite3` error means, for every module that opens an SQLite file (and the
``secure_delete`` each of them turns on).

Leaf module: the record store and the embedding cache each decide what to do about it.
"""

from __future__ import annotations

import sqlite3


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
