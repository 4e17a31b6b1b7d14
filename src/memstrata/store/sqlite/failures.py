"""SQLite failures mapped to their true class, and the mark a damaged database leaves.

A held write lock past the busy timeout is :class:`BusyError`; a full disk, a read-only data
directory and other driver errors are :class:`StoreError` with a message that says what
happened; a damaged file (``SQLITE_CORRUPT``, ``SQLITE_NOTADB``) is :class:`DamagedStoreError`.
Once damage is seen, a mark file beside the database (``memstrata.db.damaged``) makes every
store of that file, in any process, refuse writes until ``memstrata doctor --repair`` clears it
(a store checks for it before each write: one stat while there is none).
"""

from __future__ import annotations

import logging
import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from memstrata.codec import format_time
from memstrata.errors import BusyError, DamagedStoreError, MemstrataError, StoreError
from memstrata.sqlite_errors import is_busy, is_damage, is_full, is_read_only

log = logging.getLogger(__name__)

#: how to recover from a damaged database
RECOVERY: Final = (
    "run `memstrata doctor --repair` to rebuild it from what is readable (the damaged file is "
    "kept aside), or restore a scope's episodes from the raw trace "
    "(`memstrata restore --from-trace --user U`)"
)


def damage_mark(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + ".damaged")


def read_damage(db_path: Path) -> str | None:
    """What the damage mark says, or None when the database is not marked damaged."""
    try:
        return damage_mark(db_path).read_text(encoding="utf-8").strip() or "damaged"
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"damage mark unreadable: {exc}"


def may_be_marked(mark: str) -> bool:
    """False only when the damage mark ``mark`` (see :func:`damage_mark`) is surely absent: one
    stat, cheap enough for every write; when True, :func:`read_damage` says what it holds."""
    try:
        os.stat(mark)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return True


def mark_damaged(db_path: Path, detail: str) -> None:
    """Leave the mark that makes every later open refuse writes (best effort)."""
    try:
        damage_mark(db_path).write_text(
            f"{format_time(datetime.now(UTC))} {detail}\n", encoding="utf-8"
        )
    except OSError:
        log.warning("cannot write the damage mark beside %s", db_path, exc_info=True)


def clear_damage(db_path: Path) -> None:
    damage_mark(db_path).unlink(missing_ok=True)


def damaged_error(db_path: Path, detail: str) -> DamagedStoreError:
    return DamagedStoreError(
        f"the database {db_path} is damaged ({detail}); writes are refused so nothing more is "
        f"lost; {RECOVERY}"
    )


def translate(exc: sqlite3.Error, db_path: Path, doing: str) -> MemstrataError:
    """The error of the exception tree that says what ``exc`` (raised while ``doing``) means."""
    if is_damage(exc):
        return damaged_error(db_path, str(exc))
    if is_busy(exc):
        return BusyError(
            f"cannot {doing} {db_path}: the database is locked by another writer past the busy "
            "timeout; retry later"
        )
    if is_full(exc):
        return StoreError(f"disk full: cannot {doing} {db_path}; nothing was written")
    if is_read_only(exc):
        return StoreError(
            f"the data directory {db_path.parent} is read-only: cannot {doing} {db_path}"
        )
    return StoreError(f"cannot {doing} {db_path}: {exc}")
