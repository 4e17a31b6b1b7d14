"""Guards between extraction and memory: what a candidate must satisfy to be stored.

* Confidence: each category has a threshold (defaults below, configurable).
* Citations: every source must be an episode that exists in the candidate's scope (checked
  against the store; candidates citing nothing that exists are dropped and counted).
* The user's words: a candidate whose cited turns are all the assistant's, the system's or a
  tool's (:data:`NOT_USER_ROLES`) is not a fact about the user ("Noted, I'll never suggest
  shellfish", "Since you're allergic to shrimp, ...") and is refused (``not_user``), whatever
  its speaker is named.
* Overclaiming: phrasing a model wrote that asserts more than a conversation can show
  ("always", "never", "definitely", "总是", "从不", ...) is rejected. A rule's candidate (its
  ``rule`` names the rule) is the person's own sentence in the third person: "I never eat
  pork" is what they said, not a model's claim, and is kept.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from memstrata.citations import missing_among
from memstrata.model import Candidate, Category, JsonValue, Role, Scope
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

#: roles whose turns say nothing about the user on their own
NOT_USER_ROLES: Final = frozenset({Role.ASSISTANT, Role.SYSTEM, Role.TOOL})

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
    not_user: int = 0
    overclaiming: int = 0

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "kept": len(self.kept),
            "low_confidence": self.low_confidence,
            "bad_citations": self.bad_citations,
            "not_user": self.not_user,
            "overclaiming": self.overclaiming,
        }


def passes_confidence(candidate: Candidate, config: GuardConfig) -> bool:
    return candidate.confidence >= config.threshold(candidate.category)


def written_by_model(candidate: Candidate) -> bool:
    """Whether a model wrote the candidate's text: no rule made it (a rule's candidate names
    its rule)."""
    return not candidate.rule


def overclaims(candidate: Candidate, config: GuardConfig) -> bool:
    """Whether a model's candidate asserts more than a conversation can show; a rule's
    candidate, the speaker's own words, never does."""
    return written_by_model(candidate) and any(
        re.search(p, candidate.text, re.IGNORECASE) for p in config.banned
    )


def guard(
    candidates: Sequence[Candidate],
    scope: Scope,
    store: RecordStore,
    config: GuardConfig | None = None,
) -> GuardReport:
    """Apply every guard; the report counts what each one dropped."""
    config = config or GuardConfig()
    report = GuardReport()
    cited_ids = sorted({s for c in candidates for s in c.sources})
    cited = store.get_episodes(scope, cited_ids) if cited_ids else []  # one query
    missing = set(missing_among(cited, scope, cited_ids))
    role = {e.id: e.role for e in cited}
    for candidate in candidates:
        if not passes_confidence(candidate, config):
            report.low_confidence += 1
        elif not candidate.sources or missing & set(candidate.sources):
            report.bad_citations += 1
        elif all(role[s] in NOT_USER_ROLES for s in candidate.sources):
            report.not_user += 1
        elif overclaims(candidate, config):
            report.overclaiming += 1
        else:
            report.kept.append(candidate)
    return report
