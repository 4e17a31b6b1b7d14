"""Guards between extraction and memory: what a candidate must satisfy to be stored.

* Confidence: each category has a threshold (defaults below, configurable).
* Citations: every source must be an episode that exists in the candidate's scope (checked
  against the store; candidates citing nothing that exists are dropped and counted).
* Overclaiming: phrasing that asserts more than a conversation can show ("always", "never",
  "definitely", "总是", "从不", ...) is rejected.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from memstrata.citations import missing_episodes
from memstrata.model import Candidate, Category, Scope
from memstrata.ports import RecordStore

DEFAULT_THRESHOLDS: Final[Mapping[Category, float]] = {
    Category.PROFILE: 0.8,
    Category.PREFERENCE: 0.7,
    Category.PERSONAL: 0.85,
    Category.EXPERTISE: 0.7,
    Category.DECISION: 0.7,
    Category.PLAN: 0.6,
    Category.EVENT: 0.6,
    Category.RELATIONSHIP: 0.7,
    # low: an allergy or a medication half-heard is better kept (and corrected) than lost
    Category.HEALTH: 0.6,
    Category.OTHER: 0.7,
}

BANNED_PHRASES: Final = (
    r"\balways\b",
    r"\bnever\b",
    r"\bdefinitely\b",
    r"\bcertainly\b",
    r"\bundoubtedly\b",
    r"\beveryone knows\b",
    r"\bobviously\b",
    r"\bguaranteed?\b",
    r"总是",
    r"从不",
    r"绝对",
    r"肯定是",
    r"毫无疑问",
)


@dataclass(frozen=True, slots=True)
class GuardConfig:
    thresholds: Mapping[Category, float] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    banned: tuple[str, ...] = BANNED_PHRASES

    def threshold(self, category: Category) -> float:
        return self.thresholds.get(category, DEFAULT_THRESHOLDS[Category.OTHER])


@dataclass(slots=True)
class GuardReport:
    kept: list[Candidate] = field(default_factory=list)
    low_confidence: int = 0
    bad_citations: int = 0
    overclaiming: int = 0


def passes_confidence(candidate: Candidate, config: GuardConfig) -> bool:
    return candidate.confidence >= config.threshold(candidate.category)


def overclaims(candidate: Candidate, config: GuardConfig) -> bool:
    return any(re.search(p, candidate.text, re.IGNORECASE) for p in config.banned)


def guard(
    candidates: Sequence[Candidate],
    scope: Scope,
    store: RecordStore,
    config: GuardConfig | None = None,
) -> GuardReport:
    """Apply every guard; the report counts what each one dropped."""
    config = config or GuardConfig()
    report = GuardReport()
    missing = set(missing_episodes(store, scope, (s for c in candidates for s in c.sources)))
    for candidate in candidates:
        if not passes_confidence(candidate, config):
            report.low_confidence += 1
        elif not candidate.sources or missing & set(candidate.sources):
            report.bad_citations += 1
        elif overclaims(candidate, config):
            report.overclaiming += 1
        else:
            report.kept.append(candidate)
    return report
