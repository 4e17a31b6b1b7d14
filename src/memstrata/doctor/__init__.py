"""``memstrata doctor``: check a data directory, repair what can be repaired safely.

Four parts are checked:

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
  length. Repair deletes it (derived data: it is rebuilt as texts are embedded again);
- the saved search indexes: each user's snapshot in use reads whole, no interrupted save left
  a directory. Repair overwrites and removes them (derived data: rebuilt on next use).

Run the repair while no other process uses the data directory.
"""

from __future__ import annotations

from memstrata.doctor import cache, database, indexes, trace_check
from memstrata.doctor.cache import check_cache
from memstrata.doctor.database import check_database, delete_orphans, rebuild_database
from memstrata.doctor.report import DoctorReport, Problem
from memstrata.doctor.restore import restore_from_trace, trace_episodes
from memstrata.errors import NotFoundError
from memstrata.settings import Settings


def diagnose(settings: Settings, *, repair: bool = False) -> DoctorReport:
    """Check the data directory of ``settings``; with ``repair``, fix what can be fixed."""
    if not settings.data_dir.is_dir():
        raise NotFoundError(f"no data directory at {settings.data_dir}")
    report = DoctorReport(settings.data_dir, repair)
    db_readable = database.check_and_repair(settings.db_path, report, repair)
    cache.check_and_repair(settings.embedding_cache_path, report, repair)
    indexes.check_and_repair(settings.index_dir, report, repair)
    if settings.trace:
        trace_check.check_and_repair(settings, report, repair, db_readable=db_readable)
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
