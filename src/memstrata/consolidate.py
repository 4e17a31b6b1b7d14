"""Consolidation into curated documents, mode ``update``: incremental by id difference.

Facts created since the last run (their ids sort after the one recorded in the scope's
``state/consolidation`` document) become bullets of their topic's document, citing the same
episodes; important profile and preference facts also go to ``essentials``. Bullets of facts
that a new fact superseded are deleted with reason ``superseded``. Every change goes through the
document operations (compare-and-swap, per-bullet history) inside a run that holds its
(layer, key), so two consolidations of the same document never interleave. Profile slots are
promoted from facts only when two or more sessions support them (:mod:`curate.profile`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from memstrata.curate.profile import apply_promotions, promotions
from memstrata.curate.runs import RunRegistry
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.document.service import ESSENTIALS_KEY, DocumentService
from memstrata.errors import ConflictError
from memstrata.model import (
    Category,
    DeleteReason,
    DocumentKind,
    Fact,
    FactFilter,
    Profile,
    Scope,
)
from memstrata.ports import RecordStore

STATE_KEY: Final = "consolidation"
_SECTIONS: Final = {
    Category.PROFILE: "Profile",
    Category.PREFERENCE: "Preferences",
    Category.PERSONAL: "Personal",
    Category.EXPERTISE: "Expertise",
    Category.DECISION: "Decisions",
    Category.PLAN: "Plans",
    Category.EVENT: "Events",
    Category.RELATIONSHIP: "People",
    Category.OTHER: "Notes",
}
_DEFAULT_TOPICS: Final = {
    Category.PROFILE: "profile",
    Category.PREFERENCE: "preferences",
    Category.PERSONAL: "personal",
    Category.EXPERTISE: "work",
    Category.DECISION: "decisions",
    Category.PLAN: "plans",
    Category.EVENT: "events",
    Category.RELATIONSHIP: "people",
    Category.OTHER: "notes",
}
ESSENTIAL_IMPORTANCE: Final = 0.8


@dataclass(slots=True)
class ConsolidationReport:
    facts_read: int = 0
    documents: dict[str, int] = field(default_factory=dict)  # key -> new version
    added: int = 0
    removed: int = 0
    promoted: list[str] = field(default_factory=list)  # profile slots set by this run


def topic_key(fact: Fact) -> str:
    """The document a fact belongs to: its topic as a slug, or one per category."""
    if fact.topic:
        slug = re.sub(r"[^\w.-]+", "-", fact.topic.strip().lower()).strip("-.")
        if slug and slug != ESSENTIALS_KEY:
            return slug[:100]
    return _DEFAULT_TOPICS[fact.category]


def _all_facts(
    store: RecordStore, scope: Scope, filters: FactFilter | None = None, after: str | None = None
) -> list[Fact]:
    out: list[Fact] = []
    while True:
        page = store.list_facts(scope, filters, after=after, limit=1000)
        out.extend(page)
        if len(page) < 1000:
            return out
        after = page[-1].id


class Consolidator:
    def __init__(self, store: RecordStore, docs: DocumentService, runs: RunRegistry) -> None:
        self.store = store
        self.docs = docs
        self.runs = runs

    def update(self, scope: Scope) -> ConsolidationReport:
        report = ConsolidationReport()
        state = self.store.get_document(scope, DocumentKind.STATE, STATE_KEY)
        last = state.content.get("last_fact_id") if state is not None else None
        new = _all_facts(
            self.store, scope, FactFilter(current_only=True), after=str(last) if last else None
        )
        report.facts_read = len(new)
        if not new:
            return report
        new_ids = {f.id for f in new}
        replaced = [f for f in _all_facts(self.store, scope) if f.superseded_by in new_ids]
        surfaces = {
            e.id: e.surface
            for e in self.store.get_episodes(scope, sorted({s for f in new for s in f.sources}))
        }
        plans: dict[str, list[Fact]] = defaultdict(list)
        for fact in new:
            plans[topic_key(fact)].append(fact)
            if fact.category in (Category.PROFILE, Category.PREFERENCE) or (
                fact.importance >= ESSENTIAL_IMPORTANCE
            ):
                plans[ESSENTIALS_KEY].append(fact)
        gone_texts = {f.text for f in replaced}
        for key, facts in sorted(plans.items()):
            self._apply(scope, key, facts, gone_texts, surfaces, report)
        for key in sorted({topic_key(f) for f in replaced} - set(plans)):
            self._apply(scope, key, [], gone_texts, surfaces, report)
        report.promoted = self._promote(scope)
        marker = max(new_ids)
        self.store.put_document(
            scope,
            DocumentKind.STATE,
            STATE_KEY,
            {"last_fact_id": marker},
            expected_version=0 if state is None else state.version,
        )
        return report

    def _promote(self, scope: Scope) -> list[str]:
        """Profile slots that two or more sessions now support (see :mod:`curate.profile`)."""
        facts = [
            f
            for f in _all_facts(self.store, scope, FactFilter(current_only=True))
            if f.category in (Category.PROFILE, Category.PREFERENCE, Category.PERSONAL)
        ]
        if not facts:
            return []
        episodes = self.store.get_episodes(scope, sorted({s for f in facts for s in f.sources}))
        found = promotions(facts, episodes)
        stored = self.store.get_document(scope, DocumentKind.PROFILE, "profile")
        current = Profile() if stored is None else Profile.from_document(stored)
        updated = apply_promotions(current, found)
        if updated.to_content() == current.to_content():
            return []
        self.store.put_document(
            scope,
            DocumentKind.PROFILE,
            "profile",
            updated.to_content(),
            expected_version=current.version,
        )
        before = current.to_content()
        after = updated.to_content()
        return [
            f"{section}.{key}"
            for section in ("fields", "preferences")
            for key in after[section]
            if before[section].get(key) != after[section][key]
        ]

    def _apply(
        self,
        scope: Scope,
        key: str,
        facts: Sequence[Fact],
        gone: set[str],
        surfaces: dict[str, str],
        report: ConsolidationReport,
    ) -> None:
        with self.runs.start("document", f"{scope}/{key}") as run:
            for attempt in (1, 2):  # compare-and-swap with one retry
                doc, version = self.docs.get(scope, key)
                present = {b.text for s in doc.sections for b in s.bullets}
                ops = [
                    Operation(OpKind.DELETE, b.id, reason=DeleteReason.SUPERSEDED)
                    for s in doc.sections
                    for b in s.bullets
                    if b.text in gone
                ]
                for fact in facts:
                    if fact.text in present:
                        continue  # already there (dedup of exact repeats)
                    present.add(fact.text)
                    citations = tuple(Citation(surfaces.get(e, "chat"), e) for e in fact.sources)
                    section = (
                        "Key facts"
                        if key == ESSENTIALS_KEY
                        and fact.category not in (Category.PROFILE, Category.PREFERENCE)
                        else _SECTIONS[fact.category]
                    )
                    ops.append(
                        Operation(OpKind.ADD, section=section, text=fact.text, citations=citations)
                    )
                if not ops:
                    return
                try:
                    _, new_version = self.docs.apply(scope, key, ops, expected_version=version)
                except ConflictError:
                    if attempt == 2:
                        raise
                    continue
                report.documents[key] = new_version
                report.added += sum(op.kind == OpKind.ADD for op in ops)
                report.removed += sum(op.kind == OpKind.DELETE for op in ops)
                run.emit("applied", key=key, operations=len(ops), version=new_version)
                return
