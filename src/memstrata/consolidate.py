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

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from memstrata.curate.profile import apply_promotions, promotions
from memstrata.curate.runs import RunRegistry
from memstrata.document.coverage import CONSOLIDATION_STATE_KEY, belongs_in_essentials
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.document.service import (
    ESSENTIALS_KEY,
    IDENTITY_KEY,
    DocumentService,
    topic_slug,
)
from memstrata.index.tokenize import tokenize
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
from memstrata.retry import retry_conflicts

STATE_KEY: Final = CONSOLIDATION_STATE_KEY
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

SUPPORT_THRESHOLD: Final = 0.3
DUPLICATE_THRESHOLD: Final = 0.8


@dataclass(slots=True)
class AuditFinding:
    key: str
    bullet_id: str
    problem: str  # "missing-evidence" or "unsupported"
    support: float


@dataclass(slots=True)
class ConsolidationReport:
    facts_read: int = 0
    documents: dict[str, int] = field(default_factory=dict)  # key -> new version
    added: int = 0
    removed: int = 0
    promoted: list[str] = field(default_factory=list)  # profile slots set by this run
    findings: list[AuditFinding] = field(default_factory=list)  # audit: unsupported bullets
    merged: int = 0  # dedup: bullets folded into a near-duplicate


def _support(text: str, evidence: str) -> float:
    """The share of a bullet's terms that its evidence contains."""
    terms = set(tokenize(text))
    return len(terms & set(tokenize(evidence))) / len(terms) if terms else 1.0


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def topic_key(fact: Fact) -> str:
    """The document a fact belongs to: its topic as a slug, or one per category."""
    if fact.topic:
        slug = topic_slug(fact.topic)
        if slug and slug not in (ESSENTIALS_KEY, IDENTITY_KEY):
            return slug
    return _DEFAULT_TOPICS[fact.category]


def _all_facts(
    store: RecordStore, scope: Scope, filters: FactFilter | None = None, after: str | None = None
) -> list[Fact]:
    return list(store.iter_facts(scope, filters, after=after))


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
        replaced = [
            f
            for f in _all_facts(self.store, scope, FactFilter(superseded_only=True))
            if f.superseded_by in new_ids
        ]
        surfaces = {
            e.id: e.surface
            for e in self.store.get_episodes(scope, sorted({s for f in new for s in f.sources}))
        }
        plans: dict[str, list[Fact]] = defaultdict(list)
        for fact in new:
            plans[topic_key(fact)].append(fact)
            if belongs_in_essentials(fact):
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

    def _documents(self, scope: Scope) -> list[str]:
        return sorted(
            d.key
            for d in self.store.list_documents(scope)
            if d.scope == scope and d.kind in (DocumentKind.TOPIC, DocumentKind.ESSENTIALS)
        )

    def audit(self, scope: Scope, *, remove: bool = False) -> ConsolidationReport:
        """Check every bullet against its cited evidence. A bullet whose episodes are gone, or
        whose words the episodes barely contain (share of its terms found below
        ``SUPPORT_THRESHOLD``), is flagged; with ``remove`` it is deleted (reason ``stale``
        for missing evidence, ``low-signal`` for unsupported text)."""
        report = ConsolidationReport()
        for key in self._documents(scope):
            doc, version = self.docs.get(scope, key)
            cited = sorted(
                {c.episode_id for s in doc.sections for b in s.bullets for c in b.citations}
            )
            texts = {e.id: e.text for e in self.store.get_episodes(scope, cited)}
            ops = []
            for bullet in (b for s in doc.sections for b in s.bullets):
                evidence = [texts[c.episode_id] for c in bullet.citations if c.episode_id in texts]
                if not evidence:
                    finding = AuditFinding(key, bullet.id, "missing-evidence", 0.0)
                else:
                    support = _support(bullet.text, " ".join(evidence))
                    if support >= SUPPORT_THRESHOLD:
                        continue
                    finding = AuditFinding(key, bullet.id, "unsupported", round(support, 3))
                report.findings.append(finding)
                reason = (
                    DeleteReason.STALE
                    if finding.problem == "missing-evidence"
                    else DeleteReason.LOW_SIGNAL
                )
                ops.append(Operation(OpKind.DELETE, bullet.id, reason=reason))
            if remove and ops:
                with self.runs.start("document", f"{scope}/{key}"):
                    _, report.documents[key] = self.docs.apply(
                        scope, key, ops, expected_version=version
                    )
                report.removed += len(ops)
        return report

    def dedup(self, scope: Scope) -> ConsolidationReport:
        """Merge near-duplicate bullets of each document (term-set Jaccard at least
        ``DUPLICATE_THRESHOLD``): the first keeps the union of the citations, the others are
        deleted (reason ``superseded``)."""
        report = ConsolidationReport()
        for key in self._documents(scope):
            doc, version = self.docs.get(scope, key)
            bullets = [b for s in doc.sections for b in s.bullets]
            terms = {b.id: set(tokenize(b.text)) for b in bullets}
            gone: set[str] = set()
            ops = []
            for i, keep in enumerate(bullets):
                if keep.id in gone:
                    continue
                citations = list(keep.citations)
                for other in bullets[i + 1 :]:
                    if other.id in gone or _jaccard(terms[keep.id], terms[other.id]) < (
                        DUPLICATE_THRESHOLD
                    ):
                        continue
                    gone.add(other.id)
                    citations.extend(c for c in other.citations if c not in citations)
                    ops.append(Operation(OpKind.DELETE, other.id, reason=DeleteReason.SUPERSEDED))
                if tuple(citations) != keep.citations:
                    ops.insert(0, Operation(OpKind.EDIT, keep.id, citations=tuple(citations)))
            if ops:
                with self.runs.start("document", f"{scope}/{key}"):
                    _, report.documents[key] = self.docs.apply(
                        scope, key, ops, expected_version=version
                    )
                report.merged += len(gone)
                report.removed += len(gone)
        return report

    def _promote(self, scope: Scope) -> list[str]:
        """Profile slots that two or more sessions now support (see :mod:`curate.profile`);
        a person's profile edit made meanwhile is re-read and kept (compare-and-swap retried)."""
        return retry_conflicts(lambda: self._promote_once(scope))

    def _promote_once(self, scope: Scope) -> list[str]:
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
        if self.docs.scrub is not None:  # the one scrub of curated text
            scrub = self.docs.scrub
            updated = Profile(
                fields={
                    k: replace(v, value=scrub(v.value, scope)) for k, v in updated.fields.items()
                },
                preferences={
                    k: replace(v, value=scrub(v.value, scope))
                    for k, v in updated.preferences.items()
                },
                version=updated.version,
            )
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

            def attempt() -> None:  # re-reads the document: a compare-and-swap retried
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
                _, new_version = self.docs.apply(scope, key, ops, expected_version=version)
                report.documents[key] = new_version
                report.added += sum(op.kind == OpKind.ADD for op in ops)
                report.removed += sum(op.kind == OpKind.DELETE for op in ops)
                run.emit("applied", key=key, operations=len(ops), version=new_version)

            retry_conflicts(attempt)
