"""``memstrata doctor``: check a data directory, repair what can be repaired safely.

Four parts are checked:

- the database: ``PRAGMA integrity_check`` and ``foreign_key_check``, and the damage mark a
  store leaves when it sees damage. Repair copies every readable row into a new file (row by
  row, stepping over damaged pages), keeps the damaged file aside as
  ``memstrata.db.damaged-<time>`` and puts the new one in its place. When ``store_url`` names
  a database server (PostgreSQL, MySQL/MariaDB) the file's checks do not apply and are skipped
  (the report says so): the server is reached, and its recorded schema migrations are
  compared with this version's; repair only applies the missing ones, as any open would
  (:mod:`memstrata.doctor.server`);
- the raw trace: torn lines (a last line with no newline, a line that is not JSON), episodes
  (of the SQLite file or of the server store) with no trace line, and trace lines whose
  episode is not stored and that are not tombstones. Repair mends torn lines in place and
  appends the missing episodes to the trace; lines without episodes are only reported (they
  may be episodes the database lost: restore them with :func:`restore_from_trace`, or a
  deletion whose redaction failed);
- the embedding cache: it opens, passes ``quick_check``, and each model's vectors have one
  length. Repair deletes it (derived data: it is rebuilt as texts are embedded again);
- the saved search indexes: each user's snapshot in use reads whole, no interrupted save left
  a directory. Repair overwrites and removes them (derived data: rebuilt on next use).

Run the repair while no other process uses the data directory.
"""

from __future__ import annotations

from collections.abc import Callable

from memstrata.doctor import cache, database, indexes, server, trace_check
from memstrata.doctor.cache import check_cache
from memstrata.doctor.database import check_database, delete_orphans, rebuild_database
from memstrata.doctor.report import DoctorReport, Problem
from memstrata.doctor.restore import restore_from_trace, trace_episodes
from memstrata.errors import NotFoundError
from memstrata.ports import RecordStore
from memstrata.settings import Settings
from memstrata.store.sqlite import SqliteStore
from memstrata.store.url import parse_store_url


def diagnose(settings: Settings, *, repair: bool = False) -> DoctorReport:
    """Check the data directory of ``settings`` and its record store; with ``repair``, fix
    what can be fixed."""
    url = settings.store_url.get_secret_value().strip() if settings.store_url else ""
    if not settings.data_dir.is_dir() and not settings.server_store:
        raise NotFoundError(f"no data directory at {settings.data_dir}")
    report = DoctorReport(settings.data_dir, repair)
    records: Callable[[], RecordStore] | None
    if settings.server_store:
        records = server.check_and_repair(url, report, repair)
    else:
        path = parse_store_url(url).sqlite_path if url else settings.db_path
        readable = database.check_and_repair(path, report, repair)
        records = (lambda: SqliteStore(path)) if readable else None
    if not settings.data_dir.is_dir():
        report.checked.append(
            f"data directory: none at {settings.data_dir} (no trace, embedding cache or "
            "saved indexes to check)"
        )
        return report
    cache.check_and_repair(settings.embedding_cache_path, report, repair)
    indexes.check_and_repair(settings.index_dir, report, repair)
    if settings.trace:
        trace_check.check_and_repair(settings, report, repair, records=records)
    else:
        report.checked.append("trace: off (not compared)")
    return report


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
