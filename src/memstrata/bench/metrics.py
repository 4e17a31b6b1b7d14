"""Retrieval metrics, defined once, tested on hand-made fixtures.

* ``recall_at(found, gold, k)``: fractional evidence recall, the share of the gold items found
  in the top ``k`` (MemPalace's definition, all categories).
* ``all_at(found, gold, k)``: 1 when every gold item is in the top ``k`` (strict recall).
* ``any_at(found, gold, k)``: 1 when at least one gold item is in the top ``k``
  (LongMemEval's ``recall_any``; ``all_at`` is its ``recall_all``).

``found`` is a ranked list (duplicates ignored after their first place); ``gold`` a set.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from memstrata.errors import InvalidInputError

_LOCOMO_ID_RE: Final = re.compile(r"^D(\d+):(\d+)$")
_SPLIT_RE: Final = re.compile(r"[;,\s]+")


def _top(found: Sequence[str], k: int) -> set[str]:
    out: list[str] = []
    for item in found:
        if item not in out:
            out.append(item)
            if len(out) == k:
                break
    return set(out)


def recall_at(found: Sequence[str], gold: Iterable[str], k: int) -> float:
    wanted = set(gold)
    if not wanted:
        raise InvalidInputError("recall needs at least one gold item")
    return len(_top(found, k) & wanted) / len(wanted)


def all_at(found: Sequence[str], gold: Iterable[str], k: int) -> float:
    return 1.0 if recall_at(found, gold, k) == 1.0 else 0.0


def any_at(found: Sequence[str], gold: Iterable[str], k: int) -> float:
    return 1.0 if recall_at(found, gold, k) > 0.0 else 0.0


@dataclass(slots=True)
class EvidenceIds:
    """LoCoMo evidence of one question, parsed: valid turn ids and what was skipped."""

    turns: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)

    @property
    def sessions(self) -> list[str]:
        return sorted({t.split(":", 1)[0][1:] for t in self.turns}, key=int)


def parse_locomo_evidence(raw: Iterable[str]) -> EvidenceIds:
    """Split entries like ``"D8:6; D9:17"``; keep ``D<session>:<turn>`` ids, skip the rest."""
    out = EvidenceIds()
    for entry in raw:
        for part in _SPLIT_RE.split(str(entry).strip()):
            if not part:
                continue
            if _LOCOMO_ID_RE.match(part):
                if part not in out.turns:
                    out.turns.append(part)
            else:
                out.malformed.append(part)
    return out


def session_of(dia_id: str) -> str:
    """``'D3:7'`` -> ``'3'``."""
    match = _LOCOMO_ID_RE.match(dia_id)
    if match is None:
        raise InvalidInputError(f"{dia_id!r} is not a LoCoMo turn id")
    return match.group(1)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0-100) by linear interpolation, as numpy's default."""
    if not values:
        raise InvalidInputError("no values")
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def mean(values: Iterable[float]) -> float:
    data = list(values)
    return statistics.fmean(data) if data else 0.0


def rss_mb() -> float:
    """This process's resident memory now, in MiB (0 where ``/proc`` is not there)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def peak_rss_mb() -> float:
    """The most resident memory this process has held, in MiB."""
    import resource
    import sys

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024  # bytes on macOS
