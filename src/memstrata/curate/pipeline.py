"""Extraction into memory: episodes -> extractor -> guards -> facts that cite them.

Idempotent by default: episodes some fact already cites are not extracted again, so running it
after every conversation only reads what is new.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memstrata.curate.guards import GuardConfig, guard
from memstrata.curate.scrubbing import scrub_for_storage
from memstrata.curate.supersede import supersede_older
from memstrata.ids import new_id
from memstrata.model import Episode, EpisodeFilter, Fact, Scope
from memstrata.ports import Extractor, RecordStore


@dataclass(slots=True)
class ExtractReport:
    """What one extraction step did."""

    extractor: str
    episodes: int = 0
    candidates: int = 0
    stored: list[Fact] = field(default_factory=list)
    superseded: list[Fact] = field(default_factory=list)
    low_confidence: int = 0
    bad_citations: int = 0
    overclaiming: int = 0
    failures: list[str] = field(default_factory=list)


def unextracted(store: RecordStore, scope: Scope) -> list[Episode]:
    """The scope's live episodes that no fact cites yet (and whose facts were not deleted
    on purpose: a deleted or forgotten fact is not extracted again)."""
    episodes = [
        e
        for e in store.iter_episodes(scope, EpisodeFilter(include_archived=False))
        if e.surface != "manual"
    ]
    ids = [e.id for e in episodes]
    cited = {s for f in store.facts_citing(scope, ids) for s in f.sources}
    cited |= store.settled_episodes(scope, ids)
    return [e for e in episodes if e.id not in cited]


def extract_into(
    store: RecordStore,
    scope: Scope,
    extractor: Extractor,
    episodes: Sequence[Episode],
    *,
    now: datetime,
    config: GuardConfig | None = None,
) -> ExtractReport:
    report = ExtractReport(extractor.name, episodes=len(episodes))
    result = extractor.extract(episodes)
    report.failures.extend(result.failures)
    report.bad_citations += result.dropped_citations
    report.candidates = len(result.candidates)
    checked = guard(result.candidates, scope, store, config)
    report.low_confidence += checked.low_confidence
    report.bad_citations += checked.bad_citations
    report.overclaiming += checked.overclaiming
    by_id = {e.id: e for e in episodes}
    for candidate in checked.kept:
        first = by_id.get(candidate.sources[0])
        fact_scope = first.scope if first is not None else scope
        fact = Fact(
            id=new_id("fa"),
            scope=fact_scope,
            text=scrub_for_storage(candidate.text, fact_scope, secrets_only=False),
            category=candidate.category,
            confidence=candidate.confidence,
            importance=candidate.importance,
            topic=candidate.topic,
            sources=candidate.sources,
            valid_from=first.time if first is not None else now,
            valid_to=None,
            superseded_by=None,
            created_at=now,
            updated_at=now,
        )
        stored = store.add_fact(scope, fact)
        report.stored.append(stored)
        report.superseded.extend(supersede_older(store, scope, stored, now=now))
    return report
