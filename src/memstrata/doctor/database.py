"""The database part of ``doctor``: integrity and foreign keys checked, a damaged file
rebuilt from every readable row (row by row, stepping over damaged pages) and kept aside."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from memstrata.doctor.report import LISTED, DoctorReport, Problem
from memstrata.errors import MemstrataError
from memstrata.store.sqlite import SqliteStore
from memstrata.store.sqlite.failures import clear_damage, mark_damaged, read_damage

#: the tables a rebuild copies, parents before children
TABLES: Final = ("episodes", "facts", "fact_sources", "documents", "item_history", "changes")
_MIN_ROWID: Final = -(2**63)
_MAX_ROWID: Final = 2**63 - 1


def check_and_repair(db_path: Path, report: DoctorReport, repair: bool) -> bool:
    """Check (and repair) the database; whether its episodes can be read afterwards."""
    if not db_path.exists():
        report.checked.append(f"database: none yet at {db_path}")
        return False
    report.checked.append(f"database: {db_path}")
    found = check_database(db_path)
    mark = read_damage(db_path)
    damaged = any(not f.startswith("foreign key") for f in found)
    if mark is not None and not damaged:
        found.append(f"marked damaged ({mark}), though integrity_check finds the file sound")
    if not found:
        return True
    problems = [Problem("database", f) for f in found]
    report.problems.extend(problems)
    if not repair:
        if damaged and mark is None:
            mark_damaged(db_path, found[0])  # writes refuse until it is repaired
        return not damaged
    done = []
    try:
        if damaged:
            done.append(rebuild_database(db_path))
        removed = delete_orphans(db_path)
        if removed:
            done.append(f"removed {removed} row(s) naming a missing parent")
        if mark is not None:
            clear_damage(db_path)
            done.append("damage mark cleared")
    except (OSError, sqlite3.Error, MemstrataError) as exc:
        report.problems.append(Problem("database", f"the repair failed: {exc}"))
        return False
    for p in problems:
        p.fixed = "; ".join(done)
    report.problems.extend(
        Problem("database", f"after repair: {f}") for f in check_database(db_path)
    )
    return True


def delete_orphans(db_path: Path) -> int:
    """Delete the rows ``foreign_key_check`` names (a fact's sources whose fact is gone: what
    the cascade would have deleted); how many."""
    conn = sqlite3.connect(db_path, isolation_level=None)
    try:
        orphans = [(str(t), int(r)) for t, r, _, _ in conn.execute("PRAGMA foreign_key_check")]
        if orphans:
            conn.execute("BEGIN IMMEDIATE")
            for table, rowid in orphans:
                conn.execute(f"DELETE FROM {table} WHERE rowid = ?", (rowid,))
            conn.execute("COMMIT")
        return len(orphans)
    finally:
        conn.close()


def check_database(db_path: Path) -> list[str]:
    """What ``integrity_check`` and ``foreign_key_check`` find wrong (empty: nothing)."""
    return check_read_only(db_path, _database_problems)


def _database_problems(conn: sqlite3.Connection) -> list[str]:
    rows = [str(r[0]) for r in conn.execute(f"PRAGMA integrity_check({LISTED})")]
    found = [] if rows == ["ok"] else [f"integrity: {r}" for r in rows]
    for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
        found.append(f"foreign key: {table} row {rowid} names a missing {parent}")
    return found


def rebuild_database(db_path: Path) -> str:
    """Copy every readable row into a new database, keep the damaged one aside, swap them.

    Returns what was done (rows copied per table, unreadable stretches, where the old file is).
    """
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    new = db_path.with_name(db_path.name + ".rebuilt")
    delete_with_journal(new)
    try:
        copied, skipped = _copy_readable(db_path, new)
    except BaseException:
        delete_with_journal(new)
        raise  # the damaged file was left in place
    aside = db_path.with_name(f"{db_path.name}.damaged-{stamp}")
    os.replace(db_path, aside)
    wal = Path(f"{db_path}-wal")
    if wal.exists():
        os.replace(wal, Path(f"{aside}-wal"))
    Path(f"{db_path}-shm").unlink(missing_ok=True)
    os.replace(new, db_path)
    clear_damage(db_path)
    rows = ", ".join(f"{t} {n}" for t, n in copied.items() if n) or "no rows"
    lost = ", ".join(f"{t} {n}" for t, n in skipped.items() if n)
    return (
        f"rebuilt from what was readable ({rows}"
        + (f"; unreadable stretches skipped: {lost}" if lost else "")
        + f"); the damaged file is kept as {aside}"
    )


def delete_with_journal(path: Path) -> None:
    """Delete the SQLite file at ``path`` with its ``-wal`` and ``-shm`` (those that exist)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _copy_readable(db_path: Path, new: Path) -> tuple[dict[str, int], dict[str, int]]:
    """Copy the readable rows of ``db_path`` into a new database at ``new``; the rows copied
    and the unreadable stretches stepped over, per table."""
    SqliteStore(new).close()  # the schema, by the migrations
    copied: dict[str, int] = {}
    skipped: dict[str, int] = {}
    dst = sqlite3.connect(new, isolation_level=None)
    try:
        dst.execute("BEGIN")
        try:
            src = read_only(db_path)
        except sqlite3.Error:
            src = None  # nothing readable: an empty database
        if src is not None:
            try:
                for table in TABLES:
                    copied[table], skipped[table] = _copy_table(src, dst, table)
            finally:
                src.close()
        dst.execute("COMMIT")
    finally:
        dst.close()
    return copied, skipped


def _copy_table(src: sqlite3.Connection, dst: sqlite3.Connection, table: str) -> tuple[int, int]:
    """Copy the readable rows of ``table``; (rows copied, unreadable stretches stepped over)."""
    try:
        old = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
    except sqlite3.Error:
        return 0, 1
    new = {r[1] for r in dst.execute(f"PRAGMA table_info({table})")}
    columns = [c for c in old if c in new]
    if not columns:
        return 0, 0
    names = ", ".join(columns)
    insert = f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({','.join('?' * len(columns))})"
    copied = 0
    skipped = 0
    start: int | None = _MIN_ROWID
    while start is not None:
        cursor = src.execute(
            f"SELECT rowid, {names} FROM {table} WHERE rowid >= ? ORDER BY rowid", (start,)
        )
        while True:
            try:
                row = cursor.fetchone()
            except sqlite3.DatabaseError:
                skipped += 1
                start = _next_readable(src, table, start)
                break
            if row is None:
                start = None
                break
            dst.execute(insert, row[1:])
            copied += 1
            start = row[0] + 1
    return copied, skipped


def _next_readable(src: sqlite3.Connection, table: str, bad: int) -> int | None:
    """The smallest rowid past ``bad`` from which ``table`` reads again (None: none)."""

    def readable(at: int) -> bool:
        try:
            src.execute(
                f"SELECT rowid FROM {table} WHERE rowid >= ? ORDER BY rowid LIMIT 1", (at,)
            ).fetchall()
            return True
        except sqlite3.DatabaseError:
            return False

    low, step = bad, 1
    while True:
        high = min(bad + step, _MAX_ROWID)
        if readable(high):
            break
        if high == _MAX_ROWID:
            return None
        low, step = high, step * 2
    while high - low > 1:  # low fails, high reads
        mid = (low + high) // 2
        if readable(mid):
            high = mid
        else:
            low = mid
    return high


def check_read_only(
    db_path: Path, problems: Callable[[sqlite3.Connection], list[str]]
) -> list[str]:
    """What ``problems`` finds wrong in ``db_path``, opened read-only (empty: nothing); a file
    that cannot be opened, or a check SQLite cannot finish, is itself the problem found."""
    try:
        conn = read_only(db_path)
    except sqlite3.Error as exc:
        return [f"cannot be opened: {exc}"]
    try:
        return problems(conn)
    except sqlite3.Error as exc:
        return [f"cannot be checked: {exc}"]
    finally:
        conn.close()


def read_only(db_path: Path) -> sqlite3.Connection:
    """A connection that cannot write ``db_path`` (immutable when the directory is read-only
    and the WAL index cannot be created)."""
    uri = db_path.absolute().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
        return conn
    except sqlite3.OperationalError:
        conn.close()
    conn = sqlite3.connect(f"{uri}?immutable=1", uri=True)
    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    return conn
