"""The saved-index part of ``doctor``: each user's snapshot in use can be read whole, and no
interrupted save left a directory behind; repair overwrites and removes them (derived data:
the index is rebuilt, and saved again, on next use)."""

from __future__ import annotations

from pathlib import Path

from memstrata.doctor.report import DoctorReport, Problem
from memstrata.index.snapshot import SnapshotStore


def check_and_repair(index_dir: Path, report: DoctorReport, repair: bool) -> None:
    """Check (and, when damaged, discard) the saved search indexes under ``index_dir``."""
    if not index_dir.is_dir():
        report.checked.append(f"saved indexes: none yet at {index_dir}")
        return
    report.checked.append(f"saved indexes: {index_dir}")
    store = SnapshotStore(index_dir)
    found = store.check()
    problems = [
        (directory, Problem("index", f"{directory.name}: {what}")) for directory, what in found
    ]
    report.problems.extend(p for _, p in problems)
    if not repair:
        return
    for directory in dict.fromkeys(d for d, _ in problems):
        try:
            store.discard(directory)
        except OSError as exc:
            report.problems.append(Problem("index", f"{directory.name}: cannot be removed: {exc}"))
            continue
        for where, problem in problems:
            if where == directory:
                problem.fixed = "removed; the index is rebuilt from the records on next use"
