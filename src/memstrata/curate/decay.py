"""Forgetting by policy: decay scores, and archiving what falls beyond a scope's cap.

The score of an item is ``importance x recency x use``: recency halves every ``half_life_days``
since the item was said (or last used), and use grows with the log of how often it was used.
Episodes beyond a per-scope cap of live episodes are archived lowest score first; they stay
stored, searchable on request (``include_archived``) and exportable: never silently deleted.
Episodes that a current fact cites are kept live (they are the fact's evidence), and current
facts are never decayed away.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from memstrata.errors import InvalidInputError
from memstrata.model import EpisodeFilter, Scope
from memstrata.ports import RecordStore


@dataclass(frozen=True, slots=True)
class DecayPolicy:
    half_life_days: float = 90.0
    #: live (unarchived) episodes a scope keeps; None: no cap
    episode_cap: int | None = 50_000
    #: importance given to an episode (episodes carry none of their own)
    episode_importance: float = 0.5

    def __post_init__(self) -> None:
        if self.half_life_days <= 0:
            raise InvalidInputError("half_life_days must be positive")
        if self.episode_cap is not None and self.episode_cap < 0:
            raise InvalidInputError("episode_cap must be zero or more")


def decay_score(
    importance: float, said: datetime, now: datetime, *, uses: int = 0, policy: DecayPolicy
) -> float:
    """``importance x 0.5^(age / half-life) x (1 + ln(1 + uses))``."""
    age_days = max(0.0, (now - said).total_seconds() / 86_400.0)
    recency = 0.5 ** (age_days / policy.half_life_days)
    return float(importance * recency * (1.0 + math.log1p(max(0, uses))))


@dataclass(frozen=True, slots=True)
class ArchiveReport:
    live_before: int
    archived: tuple[str, ...]
    kept_as_evidence: int


def archive_beyond_cap(
    store: RecordStore, scope: Scope, *, now: datetime, policy: DecayPolicy | None = None
) -> ArchiveReport:
    """Archive the lowest-scoring live episodes of ``scope`` beyond the policy's cap."""
    policy = policy or DecayPolicy()
    live = list(store.iter_episodes(scope, EpisodeFilter(include_archived=False)))
    if policy.episode_cap is None or len(live) <= policy.episode_cap:
        return ArchiveReport(len(live), (), 0)
    uses: dict[str, int] = {}
    evidence: set[str] = set()
    for fact in store.facts_citing(scope, [e.id for e in live]):
        for source in fact.sources:
            uses[source] = uses.get(source, 0) + 1
            if fact.valid_to is None:
                evidence.add(source)
    candidates = sorted(
        (e for e in live if e.id not in evidence),
        key=lambda e: (
            decay_score(
                policy.episode_importance, e.time, now, uses=uses.get(e.id, 0), policy=policy
            ),
            e.id,
        ),
    )
    excess = len(live) - policy.episode_cap
    chosen = tuple(e.id for e in candidates[:excess])
    store.archive_episodes(scope, list(chosen))
    return ArchiveReport(len(live), chosen, len(evidence))
