"""Extraction into memory: episodes -> extractor -> guards -> facts that cite them.

A fact that repeats a current one is not stored again: the current fact gains its citations
and, for each new session, importance (:mod:`memstrata.curate.merge`); a fact that sets a
state repeats only one that sets the same slot to the same value ("is allergic to shrimp" and
"is not allergic to shrimp" share most of their words, and are not a repeat). A fact stored
closes the older ones it replaces (:mod:`memstrata.curate.supersede`). It keeps the time its
words named, and the slot and the value of the state it sets.

Idempotent by default: episodes some fact already cites are not extracted again, so running it
after every conversation only reads what is new.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from memstrata.curate.guards import GuardConfig, guard
from memstrata.curate.merge import RepeatIndex, raised
from memstrata.curate.scrubbing import scrub_for_storage
from memstrata.curate.supersede import Change, same_value, supersede_older
from memstrata.ids import new_id
from memstrata.model import Episode, EpisodeFilter, Fact, FactFilter, HistoryOp, JsonValue, Scope
from memstrata.ports import Extractor, RecordStore


@dataclass(slots=True)
class ExtractReport:
    """What one extraction step did."""

    extractor: str
    episodes: int = 0
    candidates: int = 0
    stored: list[Fact] = field(default_factory=list)
    superseded: list[Fact] = field(default_factory=list)
    merged: list[Fact] = field(default_factory=list)  # current facts a repeat added support to
    low_confidence: int = 0
    bad_citations: int = 0
    not_user: int = 0  # candidates resting only on the assistant's, system's or tools' turns
    overclaiming: int = 0
    failures: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "extractor": self.extractor,
            "episodes": self.episodes,
            "candidates": self.candidates,
            "stored": [f.id for f in self.stored],
            "superseded": [f.id for f in self.superseded],
            "merged": [f.id for f in self.merged],
            "low_confidence": self.low_confidence,
            "bad_citations": self.bad_citations,
            "not_user": self.not_user,
            "overclaiming": self.overclaiming,
            "failures": list(self.failures),
        }


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
    report.not_user += checked.not_user
    report.overclaiming += checked.overclaiming
    by_id = {e.id: e for e in episodes}
    index = RepeatIndex(
        store.iter_facts(scope, FactFilter(current_only=True)) if checked.kept else ()
    )
    turn_facts: dict[str, list[Fact]] = {}  # the facts stored from each turn
    for candidate in checked.kept:
        first = by_id.get(candidate.sources[0])
        fact_scope = first.scope if first is not None else scope
        text = scrub_for_storage(candidate.text, fact_scope, secrets_only=False)
        value = None if candidate.ended is not None else candidate.value
        if value is not None:
            value = scrub_for_storage(value, fact_scope, secrets_only=False).strip() or None
        same = index.repeated(text, category=candidate.category)
        if same is not None and not _same_state(same, candidate.slot, value):
            same = None
        if same is None and candidate.slot is not None and value is not None:
            same = _holding(
                store, scope, fact_scope, candidate.slot, value, index, only=candidate.exclusive
            )
        if same is not None and same.scope == fact_scope:
            merged = _merge(
                store, scope, same, candidate.sources, candidate.importance, now, value=value
            )
            index.put(merged)
            report.merged.append(merged)
            continue
        fact = Fact(
            id=new_id("fa"),
            scope=fact_scope,
            text=text,
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
            when=candidate.when,
            slot=candidate.slot,
            value=value if candidate.slot is not None else None,
        )
        stored = store.add_fact(scope, fact)
        index.put(stored)
        report.stored.append(stored)
        together = turn_facts.setdefault(candidate.sources[0], [])
        change = Change(candidate.ended, candidate.exclusive)
        closed = supersede_older(store, scope, stored, now=now, change=change, with_it=together)
        for old in closed:
            index.drop(old.id)  # no longer current: nothing repeats it
        report.superseded.extend(closed)
        together.append(stored)
    return report


def _holding(
    store: RecordStore,
    scope: Scope,
    fact_scope: Scope,
    slot: str,
    value: str,
    index: RepeatIndex,
    *,
    only: bool = False,
) -> Fact | None:
    """The current fact that already sets ``slot`` to ``value`` (the same thing said again in
    other words: "I'm from Sweden" and "I'm from Sweden, it was hard to leave"), if any;
    ``only``: the value is said to be the only one ("turns out it's only sesame"), which
    repeats no fact that holds more than it ("sesame and basically all seeds")."""
    for fact in store.iter_facts(scope, FactFilter(current_only=True, slot=slot)):
        if fact.scope != fact_scope or not index.current(fact.id):
            continue
        if same_value(fact.value, value) and not (
            only and (fact.value or "").casefold().strip() != value.casefold().strip()
        ):
            return fact
    return None


def _same_state(fact: Fact, slot: str | None, value: str | None) -> bool:
    """Whether a current fact can be what a candidate repeats: a candidate that sets no state
    repeats any fact its words repeat; one that sets a state, only a fact setting the same
    slot to the same value (both ending it: no value)."""
    if slot is None:
        return True
    if fact.slot != slot:
        return False
    return (fact.value or "").casefold() == (value or "").casefold()


def _merge(
    store: RecordStore,
    scope: Scope,
    fact: Fact,
    sources: tuple[str, ...],
    importance: float,
    now: datetime,
    *,
    value: str | None = None,
) -> Fact:
    """``fact`` supported by ``sources`` too: citations united, importance raised by each
    session that newly supports it (:func:`memstrata.curate.merge.raised`); a ``value`` said
    again with more words that hold the old one ("wife" then "wife Meera", "Tencent" then
    "Tencent in Shenzhen") becomes the slot's value: the name a later turn gives is kept."""
    added = tuple(s for s in sources if s not in fact.sources)
    fuller = _fuller(fact.value, value) if fact.slot is not None else None
    if not added and fuller is None:
        return fact
    known = store.get_episodes(scope, [*fact.sources, *added])
    session = {e.id: (e.scope.thread, e.session_id) for e in known}
    before = {session[s] for s in fact.sources if s in session}
    new_sessions = {session[s] for s in added if s in session} - before
    return store.update_fact(
        scope,
        fact.evolve(
            sources=(*fact.sources, *added),
            importance=raised(max(fact.importance, importance), len(new_sessions)),
            updated_at=now,
            value=fuller or fact.value,
        ),
        expected_version=fact.version,
        op=HistoryOp.UPDATE.value,
    )


def _fuller(held: str | None, said: str | None) -> str | None:
    """``said`` when it says the held value in more words (holds it whole, and more), else
    None."""
    if not held or not said:
        return None
    x, y = " ".join(held.casefold().split()), " ".join(said.casefold().split())
    return said if x != y and x in y and len(y) > len(x) else None
