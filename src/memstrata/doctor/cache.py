"""The embedding-cache part of ``doctor``: it opens, passes ``quick_check`` and each model's
vectors have one length; a damaged cache is deleted (derived data, rebuilt on use)."""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from pathlib import Path

from memstrata.doctor.database import check_read_only, delete_with_journal
from memstrata.doctor.report import LISTED, DoctorReport, Problem


def check_and_repair(path: Path, report: DoctorReport, repair: bool) -> None:
    """Check (and, when damaged, delete) the embedding cache at ``path``."""
    if not path.exists():
        report.checked.append(f"embedding cache: none yet at {path}")
        return
    report.checked.append(f"embedding cache: {path}")
    found = check_cache(path)
    problems = [Problem("cache", f) for f in found]
    report.problems.extend(problems)
    if repair and problems:
        try:
            delete_with_journal(path)
        except OSError as exc:
            report.problems.append(Problem("cache", f"cannot be deleted: {exc}"))
            return
        for p in problems:
            p.fixed = "deleted; it is rebuilt as texts are embedded again"


def check_cache(path: Path) -> list[str]:
    """What is wrong with the embedding cache (empty: nothing)."""
    return check_read_only(path, _cache_problems)


def _cache_problems(conn: sqlite3.Connection) -> list[str]:
    rows = [str(r[0]) for r in conn.execute(f"PRAGMA quick_check({LISTED})")]
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
