"""``memstrata doctor``: check a data directory, repair what can be repaired safely.

Three parts are checked:

- the database: ``PRAGMA integrity_check`` and ``foreign_key_check``, and the damage mark a
  store leaves when it sees damage. Repair copies every readable row into a new file (row by
  row, stepping over damaged pages), keeps the damaged file aside as
  ``memstrata.db.damaged-<time>`` and puts the new one in its place;
- the raw trace: torn lines (a last line with no newline, a line that is not JSON), episodes
  with no trace line, and trace lines whose episode is not stored and that are not
  tombstones. Repair mends torn lines in place and appends the missing episodes to the trace;
  lines without episodes are only reported (they may be episodes the database lost: restore
  them with :func:`restore_from_trace`, or a deletion whose redaction failed);
- the embedding cache: it opens, passes ``quick_check``, and each model's vectors have one
  length. Repair deletes it (derived data: it is rebuilt as texts are embedded again).

Run the repair while no other process uses the data directory.
"""

from __future__ import annotations

import os
import sqlite3
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Final, Literal

from memstrata.codec import episode_from_json, episode_to_json
from memstrata.errors import InvalidInputError, MemstrataError, NotFoundError, StoreError
from memstrata.model import Episode, EpisodeFilter, JsonValue, Scope
from memstrata.ports import RecordStore
from memstrata.settings import Settings
from memstrata.store.sqlite import SqliteStore
from memstrata.store.sqlite.failures import clear_damage, mark_damaged, read_damage
from memstrata.trace import JsonlTrace, mend_torn, scan_file, torn_event

Part = Literal["database", "trace", "cache"]

#: the tables a rebuild copies, parents before children
TABLES: Final = ("episodes", "facts", "fact_sources", "documents", "item_history", "changes")
_MIN_ROWID: Final = -(2**63)
_MAX_ROWID: Final = 2**63 - 1
_LISTED: Final = 20  # ids named in one problem at most


@dataclass(slots=True)
class Problem:
    """One thing found wrong; ``fixed`` says what the repair did about it."""

    part: Part
    what: str
    fixed: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        return {"part": self.part, "problem": self.what, "fixed": self.fixed}


@dataclass(slots=True)
class DoctorReport:
    data_dir: Path
    repair: bool
    checked: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def remaining(self) -> list[Problem]:
        return [p for p in self.problems if p.fixed is None]

    @property
    def ok(self) -> bool:
        return not self.remaining

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "data_dir": str(self.data_dir),
            "repair": self.repair,
            "ok": self.ok,
            "checked": list(self.checked),
            "problems": [p.to_json() for p in self.problems],
        }


def diagnose(settings: Settings, *, repair: bool = False) -> DoctorReport:
    """Check the data directory of ``settings``; with ``repair``, fix what can be fixed."""
    if not settings.data_dir.is_dir():
        raise NotFoundError(f"no data directory at {settings.data_dir}")
    report = DoctorReport(settings.data_dir, repair)
    db_readable = _database(settings.db_path, report, repair)
    _cache(settings.embedding_cache_path, report, repair)
    if settings.trace:
        _trace(settings, report, repair, db_readable=db_readable)
    else:
        report.checked.append("trace: off (not compared)")
    return report


# database -------------------------------------------------------------------------------
def _database(db_path: Path, report: DoctorReport, repair: bool) -> bool:
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
    try:
        conn = _read_only(db_path)
    except sqlite3.Error as exc:
        return [f"cannot be opened: {exc}"]
    try:
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA integrity_check({_LISTED})")]
        found = [] if rows == ["ok"] else [f"integrity: {r}" for r in rows]
        for table, rowid, parent, _ in conn.execute("PRAGMA foreign_key_check"):
            found.append(f"foreign key: {table} row {rowid} names a missing {parent}")
        return found
    except sqlite3.Error as exc:
        return [f"cannot be checked: {exc}"]
    finally:
        conn.close()


def rebuild_database(db_path: Path) -> str:
    """Copy every readable row into a new database, keep the damaged one aside, swap them.

    Returns what was done (rows copied per table, unreadable stretches, where the old file is).
    """
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    new = db_path.with_name(db_path.name + ".rebuilt")
    for suffix in ("", "-wal", "-shm"):
        Path(f"{new}{suffix}").unlink(missing_ok=True)
    try:
        copied, skipped = _copy_readable(db_path, new)
    except BaseException:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{new}{suffix}").unlink(missing_ok=True)
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
            src = _read_only(db_path)
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


def _read_only(db_path: Path) -> sqlite3.Connection:
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


# embedding cache --------------------------------------------------------------------------
def _cache(path: Path, report: DoctorReport, repair: bool) -> None:
    if not path.exists():
        report.checked.append(f"embedding cache: none yet at {path}")
        return
    report.checked.append(f"embedding cache: {path}")
    found = check_cache(path)
    problems = [Problem("cache", f) for f in found]
    report.problems.extend(problems)
    if repair and problems:
        try:
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        except OSError as exc:
            report.problems.append(Problem("cache", f"cannot be deleted: {exc}"))
            return
        for p in problems:
            p.fixed = "deleted; it is rebuilt as texts are embedded again"


def check_cache(path: Path) -> list[str]:
    """What is wrong with the embedding cache (empty: nothing)."""
    try:
        conn = _read_only(path)
    except sqlite3.Error as exc:
        return [f"cannot be opened: {exc}"]
    try:
        rows = [str(r[0]) for r in conn.execute(f"PRAGMA quick_check({_LISTED})")]
        if rows != ["ok"]:
            return [f"integrity: {r}" for r in rows]
        lengths: dict[str, set[int]] = defaultdict(set)
        for model, size in conn.execute(
            "SELECT model, length(vec) FROM vectors GROUP BY model, length(vec)"
        ):
            lengths[str(model)].add(int(size))
        return [
            f"vectors of model {model!r} have lengths {sorted(sizes)} bytes"
            for model, sizes in sorted(lengths.items())
            if len(sizes) > 1 or any(s % 4 for s in sizes)
        ]
    except sqlite3.Error as exc:
        return [f"cannot be checked: {exc}"]
    finally:
        conn.close()


# raw trace --------------------------------------------------------------------------------
def _trace(settings: Settings, report: DoctorReport, repair: bool, *, db_readable: bool) -> None:
    trace = JsonlTrace(settings.trace_dir)
    report.checked.append(f"trace: {settings.trace_dir}")
    traced: dict[str, str] = {}  # episode id -> surface of its line
    tombstoned: set[str] = set()
    for file in trace.files():
        torn = 0
        try:
            lines = list(scan_file(file))
        except OSError as exc:
            report.problems.append(Problem("trace", f"{file}: cannot be read: {exc}"))
            continue
        for line in lines:
            event = line.event
            if (event is None and line.raw.strip()) or not line.terminated:
                torn += 1
                event = event or torn_event(line.raw)  # what mending keeps of it
            if event is not None and isinstance(event.get("id"), str):
                item = str(event["id"])
                if event.get("event") == "redacted":
                    tombstoned.add(item)
                elif event.get("event") == "episode":
                    traced.setdefault(item, str(event.get("surface", "")))
        if torn:
            problem = Problem("trace", f"{file}: {torn} torn line(s)")
            report.problems.append(problem)
            if repair:
                try:
                    problem.fixed = f"mended {mend_torn(file)} line(s) in place"
                except OSError as exc:
                    report.problems.append(Problem("trace", f"{file}: cannot be mended: {exc}"))
    if not db_readable:
        return
    try:
        store = SqliteStore(settings.db_path)
    except MemstrataError as exc:
        report.problems.append(Problem("trace", f"not compared with the database: {exc}"))
        return
    try:
        stored = _episode_users(store)
        missing = sorted(set(stored) - set(traced))
        orphans = sorted(set(traced) - set(stored) - tombstoned)
        if missing:
            problem = Problem(
                "trace", f"{len(missing)} episode(s) with no trace line: " + _some(missing)
            )
            report.problems.append(problem)
            if repair:
                written = _backfill(store, trace, missing, stored)
                if written == len(missing):
                    problem.fixed = f"appended {written} episode(s) to the trace"
                else:
                    report.problems.append(
                        Problem("trace", f"only {written} of {len(missing)} could be appended")
                    )
        if orphans:
            report.problems.append(
                Problem(
                    "trace",
                    f"{len(orphans)} trace line(s) whose episode is not stored and that are not "
                    f"tombstones: {_some(orphans)} (episodes the database lost: add them back "
                    "with `memstrata restore --from-trace --missing --user U`; or a deletion "
                    "whose trace line could not be erased: delete them again)",
                )
            )
    finally:
        store.close()


def _episode_users(store: SqliteStore) -> dict[str, str]:
    """Every stored episode id (archived ones too) and its user."""
    everything = EpisodeFilter(include_archived=True)
    return {
        ep.id: user for user in store.users() for ep in store.iter_episodes(Scope(user), everything)
    }


def _backfill(
    store: SqliteStore, trace: JsonlTrace, missing: Sequence[str], users: dict[str, str]
) -> int:
    """Append the ``missing`` episodes to the trace; how many were written."""
    by_user: dict[str, list[str]] = defaultdict(list)
    for episode_id in missing:
        by_user[users[episode_id]].append(episode_id)
    written = 0
    for user, ids in sorted(by_user.items()):
        episodes = store.get_episodes(Scope(user), ids)
        by_surface: dict[str, list[Episode]] = defaultdict(list)
        for ep in episodes:
            by_surface[ep.surface].append(ep)
        for surface, eps in by_surface.items():
            events = [{"event": "episode", **episode_to_json(e)} for e in eps]
            if trace.append(surface, events):
                written += len(eps)
    return written


def _some(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:_LISTED])
    return shown + (f" and {len(ids) - _LISTED} more" if len(ids) > _LISTED else "")


# restore ----------------------------------------------------------------------------------
def trace_episodes(trace: JsonlTrace, scope: Scope) -> list[Episode]:
    """The episodes of ``scope`` as the trace holds them (verbatim, same ids and times), in id
    order; a deleted episode left only a tombstone and is not among them."""
    found: dict[str, Episode] = {}
    for file in trace.files():
        try:
            lines = list(scan_file(file))
        except OSError as exc:
            raise StoreError(f"cannot read the trace file {file}: {exc}") from exc
        for line in lines:
            event = line.event
            if event is None or event.get("event") != "episode" or event.get("id") in found:
                continue
            try:
                episode = episode_from_json(event)
            except (KeyError, TypeError, ValueError) as exc:
                raise InvalidInputError(
                    f"{file}:{line.number}: not an episode event ({exc})"
                ) from exc
            if scope.contains(episode.scope):
                found[episode.id] = episode
    return [found[k] for k in sorted(found)]


def restore_from_trace(
    store: RecordStore, trace: JsonlTrace, scope: Scope, *, missing: bool = False
) -> list[Episode]:
    """Restore the episodes of ``scope`` from the trace into the store; what was restored.

    The scope must be empty (no episodes, facts or documents), unless ``missing``: then only
    the episodes the store lacks are added (after a repair that could not read them all)."""
    episodes = trace_episodes(trace, scope)
    if not episodes:
        raise InvalidInputError(f"the trace holds no episodes of scope {scope}")
    if not missing:
        store.restore(scope, episodes, [], [])
        return episodes
    stored = {e.id for e in store.get_episodes(scope, [e.id for e in episodes])}
    lacking = [e for e in episodes if e.id not in stored]
    if lacking:
        store.add_episodes(scope, lacking)
    return lacking


__all__ = [
    "DoctorReport",
    "Problem",
    "check_cache",
    "check_database",
    "delete_orphans",
    "diagnose",
    "rebuild_database",
    "restore_from_trace",
    "trace_episodes",
]
