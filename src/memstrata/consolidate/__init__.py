"""Consolidation into curated documents, mode ``update``: incremental by id difference.

Facts created since the last run (their ids sort after the one recorded in the scope's
``state/consolidation`` document) become bullets of their topic's document, citing the same
episodes. Bullets of facts that a new fact superseded are deleted with reason ``superseded``.
L1 is then brought (also when no fact is new but one changed, e.g. a repeat merged into it: the
state keeps a digest of the current facts' versions) to what :mod:`memstrata.curate.essentials`
selects from every current fact within the L1 budget (the user's profile slots, preferences
and key facts, then the people's): the user's slots fill the profile document, the rest the
``essentials`` document. Bullets it wrote that are no longer selected are deleted (reason
``low-signal``: they stay in their topic documents), bullets a person edited, moved or deleted
are left as the person made them, and the facts of edited or deleted ones are not offered
again. The profile is kept the same way: a slot a person deleted or edited withholds its facts
from L1 and its value from that slot; a slot a person wrote or edited is theirs; a slot this
wrote that L1 no longer states is removed (the state records each slot's value digest and
facts). Style preferences (tone, verbosity, code style) are promoted only when two or more
sessions support them (:mod:`curate.profile`). Every change goes through the document
operations (compare-and-swap, per-bullet history) inside a run that holds its (layer, key), so
two consolidations of the same document never interleave.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Final

from memstrata.consolidate.by_model import DEDUP_CANDIDATE, ModelSteps, merge_topic
from memstrata.consolidate.measures import (
    DUPLICATE_THRESHOLD,
    SECTIONS,
    SUPPORT_THRESHOLD,
    jaccard,
    support,
)
from memstrata.curate.essentials import (
    DEFAULT_ESSENTIALS_BUDGET,
    Selection,
    choose_user,
    closed_states,
    select,
)
from memstrata.curate.profile import promotions
from memstrata.curate.runs import RunRegistry
from memstrata.document.coverage import CONSOLIDATION_STATE_KEY, topic_key
from memstrata.document.format import Bullet, Citation
from memstrata.document.format import Document as CuratedDocument
from memstrata.document.ops import Operation, OpKind
from memstrata.document.service import ESSENTIALS_KEY, DocumentService
from memstrata.index.tokenize import tokenize
from memstrata.model import (
    Category,
    DeleteReason,
    DocumentKind,
    EpisodeFilter,
    Fact,
    FactFilter,
    JsonValue,
    Profile,
    Scope,
    Slot,
)
from memstrata.ports import LLM, Clock, RecordStore, SystemClock
from memstrata.retry import retry_conflicts
from memstrata.tokens import HeuristicTokenCounter, TokenCounter

__all__ = ["STATE_KEY", "ConsolidationReport", "Consolidator", "topic_key"]

STATE_KEY: Final = CONSOLIDATION_STATE_KEY


@dataclass(slots=True)
class AuditFinding:
    key: str
    bullet_id: str
    problem: str  # "missing-evidence" or "unsupported"
    support: float
    by: str = "rules"  # who judged it: "rules", or "model" (its evidence shown to the model)


@dataclass(slots=True)
class ConsolidationReport:
    facts_read: int = 0
    documents: dict[str, int] = field(default_factory=dict)  # key -> new version
    added: int = 0
    removed: int = 0
    promoted: list[str] = field(default_factory=list)  # profile slots set by this run
    findings: list[AuditFinding] = field(default_factory=list)  # audit: unsupported bullets
    merged: int = 0  # dedup: bullets folded into a near-duplicate
    by_model: int = 0  # bullets the model wrote or rewrote that passed the guards
    by_rules: int = 0  # with a model: new facts it did not state, filed by rules instead
    rejected: list[str] = field(default_factory=list)  # model output the guards refused
    model_failures: list[str] = field(default_factory=list)  # steps the model could not do
    superseded: list[str] = field(default_factory=list)  # facts a contradiction closed
    topics_merged: dict[str, str] = field(default_factory=dict)  # folded topic -> kept one
    usage: dict[str, JsonValue] | None = None  # the model's calls, tokens and time, summed

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "facts_read": self.facts_read,
            "documents": dict(self.documents),
            "bullets_added": self.added,
            "bullets_removed": self.removed,
            "bullets_merged": self.merged,
            "promoted": list(self.promoted),
            "findings": [
                {
                    "document": f.key,
                    "bullet": f.bullet_id,
                    "problem": f.problem,
                    "support": f.support,
                    "by": f.by,
                }
                for f in self.findings
            ],
            "model": {
                "bullets_written": self.by_model,
                "facts_by_rules": self.by_rules,
                "rejected": list(self.rejected),
                "failures": list(self.model_failures),
                "superseded": list(self.superseded),
                "topics_merged": dict(self.topics_merged),
                "usage": self.usage,
            },
        }


def _digest(text: str) -> str:
    """What the state records of a bullet's text: enough to see a hand edit, not the text (a
    forgotten text must not survive in the state)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _facts_digest(facts: Sequence[Fact]) -> str:
    """A digest of which facts are current and at which version."""
    joined = "\n".join(sorted(f"{f.id}:{f.version}" for f in facts))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


@dataclass(slots=True)
class _ProfileHands:
    """The profile slots consolidation wrote that a person left as they were (``managed``,
    "fields.<key>" / "preferences.<key>"), the facts behind slots a person deleted or edited
    (``withheld`` from L1), and the values a person took out of a slot (``refused``: slot ->
    digests); ``legacy``: a state from before this record."""

    managed: set[str]
    withheld: set[str]
    refused: dict[str, set[str]]
    legacy: bool = False


def _profile_values(profile: Profile) -> dict[str, str]:
    return {
        f"{section}.{key}": slot.value
        for section, slots in (("fields", profile.fields), ("preferences", profile.preferences))
        for key, slot in slots.items()
    }


def _list(value: JsonValue | None) -> list[JsonValue]:
    return list(value) if isinstance(value, list) else []


def _pairs(value: JsonValue | None) -> list[tuple[str, str]]:
    """Recorded merges: [[folded, kept], ...]."""
    return [(str(p[0]), str(p[1])) for p in _list(value) if isinstance(p, list) and len(p) == 2]


def _aliases(value: JsonValue | None) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def _slots(value: JsonValue | None) -> dict[str, JsonValue]:
    return dict(value) if isinstance(value, dict) else {}


def _all_facts(
    store: RecordStore, scope: Scope, filters: FactFilter | None = None, after: str | None = None
) -> list[Fact]:
    return list(store.iter_facts(scope, filters, after=after))


class Consolidator:
    def __init__(
        self,
        store: RecordStore,
        docs: DocumentService,
        runs: RunRegistry,
        *,
        essentials_budget: int = DEFAULT_ESSENTIALS_BUDGET,
        user_speaker: str | None = None,
        counter: TokenCounter | None = None,
        llm: LLM | None = None,
        clock: Clock | None = None,
        related: Callable[[Scope, str], Sequence[str]] | None = None,
    ) -> None:
        self.store = store
        self.docs = docs
        self.runs = runs
        self.essentials_budget = essentials_budget
        self.user_speaker = user_speaker
        self.counter = counter or HeuristicTokenCounter()
        self.clock = clock or SystemClock()
        #: ids of the facts a search finds for a text (the candidates a new fact could
        #: contradict, beside those of its topic and those sharing its terms)
        self.related = related
        #: the model's steps (see :mod:`memstrata.consolidate.by_model`), None: rules only
        self.model = None if llm is None else ModelSteps(self, llm)

    def now(self) -> datetime:
        return self.clock.now()

    def update(self, scope: Scope) -> ConsolidationReport:
        report = ConsolidationReport()
        state = self.store.get_document(scope, DocumentKind.STATE, STATE_KEY)
        prior: dict[str, JsonValue] = dict(state.content) if state is not None else {}
        version = 0 if state is None else state.version
        last = prior.get("last_fact_id")
        merging = _pairs(prior.get("merging"))
        if merging:  # a merge a run began and did not finish is finished first
            version = self._merges(scope, merging, prior, version, report)
        current = _all_facts(self.store, scope, FactFilter(current_only=True))
        new = [f for f in current if not last or f.id > str(last)]
        report.facts_read = len(new)
        seen = _facts_digest(current)  # a repeat merged into a fact changes its support
        if not new and (state is None or prior.get("facts") == seen) and not merging:
            return report
        new_ids = {f.id for f in new}
        refiled = bool(new) and self._refile(scope, new, _aliases(prior.get("aliases")))
        closed = self.model is not None and self.model.contradictions(scope, new, current, report)
        if refiled or closed:  # facts changed: read again
            current = _all_facts(self.store, scope, FactFilter(current_only=True))
            new = [f for f in current if f.id in new_ids]
            seen = _facts_digest(current)
        replaced = [
            f
            for f in _all_facts(self.store, scope, FactFilter(superseded_only=True))
            if f.superseded_by in new_ids
        ]
        surfaces = {
            e.id: e.surface
            for e in self.store.get_episodes(scope, sorted({s for f in new for s in f.sources}))
        }
        filed = {str(f) for f in _list(prior.get("filed"))}  # by a run that did not finish
        plans: dict[str, list[Fact]] = defaultdict(list)
        for fact in new:
            if fact.id not in filed:
                plans[topic_key(fact)].append(fact)
        gone_texts = {f.text for f in replaced}
        for key, facts in sorted(plans.items()):
            self._apply(scope, key, facts, gone_texts, surfaces, report)
            if self.model is not None:  # a run stopped after this resumes after it
                filed |= {f.id for f in facts}
                prior["filed"] = sorted(filed)
                version = self._put_state(scope, prior, version)
        for key in sorted({topic_key(f) for f in replaced} - set(plans)):
            self._apply(scope, key, [], gone_texts, surfaces, report)
        if self.model is not None and new:
            proposed = self.model.propose_merges(scope, report)
            if proposed:
                version = self._merges(scope, proposed, prior, version, report)
                current = _all_facts(self.store, scope, FactFilter(current_only=True))
                seen = _facts_digest(current)
        withheld = self._essentials_withheld(scope, prior.get("essentials"))
        withheld |= self._profile_record(scope, prior).withheld
        kept = [f for f in current if f.id not in withheld]  # a person's edits stand for them
        selection = self.selection(scope, kept)
        model_slots = _slots(prior.get("model_slots"))
        if self.model is not None and new:
            model_slots.update(self.model.slots(scope, selection.user, new, report))
        current_ids = {f.id for f in current}
        model_slots = {  # a proposal whose facts were superseded is withdrawn
            k: v
            for k, v in model_slots.items()
            if isinstance(v, dict) and set(map(str, _list(v.get("facts")))) <= current_ids
        }
        record = self._essentials(scope, selection, prior.get("essentials"), report)
        profile_record, report.promoted = self._promote(scope, selection, kept, prior, model_slots)
        marker = max(new_ids) if new_ids else last
        content: dict[str, JsonValue] = {
            "last_fact_id": marker,
            "essentials": record,
            "profile": profile_record,
            "facts": seen,
        }
        for key, value in (
            ("aliases", prior.get("aliases")),
            ("model_slots", model_slots or None),
        ):
            if value:
                content[key] = value
        self._put_state(scope, content, version)
        return report

    def _put_state(self, scope: Scope, content: dict[str, JsonValue], version: int) -> int:
        """Write the consolidation state (compare-and-swap on ``version``); its new version."""
        return self.store.put_document(
            scope, DocumentKind.STATE, STATE_KEY, content, expected_version=version
        ).version

    def _refile(self, scope: Scope, new: Sequence[Fact], aliases: dict[str, str]) -> bool:
        """New facts of a topic that was merged into another are filed in that one."""
        moved = False
        for fact in new:
            into = aliases.get(topic_key(fact))
            if into is not None and into != topic_key(fact):
                self.store.update_fact(
                    scope,
                    fact.evolve(topic=into, updated_at=self.now()),
                    expected_version=fact.version,
                )
                moved = True
        return moved

    def _merges(
        self,
        scope: Scope,
        merges: Sequence[tuple[str, str]],
        prior: dict[str, JsonValue],
        version: int,
        report: ConsolidationReport,
    ) -> int:
        """Carry out topic merges ((folded, kept) keys), recorded in the state first so that
        a run stopped midway is finished by the next; returns the state's version."""
        prior["merging"] = [[src, into] for src, into in merges]
        version = self._put_state(scope, prior, version)
        aliases = _aliases(prior.get("aliases"))
        for src, into in merges:
            target = aliases.get(into, into)
            merge_topic(self, scope, src, target, report)
            aliases = {k: (target if v == src else v) for k, v in aliases.items()}
            aliases[src] = target
        prior["aliases"] = dict(sorted(aliases.items()))
        prior.pop("merging", None)
        return self._put_state(scope, prior, version)

    def selection(self, scope: Scope, facts: Sequence[Fact] | None = None) -> Selection:
        """What L1 should state for ``scope`` now (:func:`memstrata.curate.essentials.select`)
        from its current ``facts`` (read when not given)."""
        if facts is None:
            facts = _all_facts(self.store, scope, FactFilter(current_only=True))
        cited = {s for f in facts for s in f.sources}
        named = self.user_speaker
        first = (
            self.store.list_episodes(scope, EpisodeFilter(speaker=named), limit=1)
            if named and named not in ("user", "assistant")
            else []
        )
        if first:  # the user is named and speaks here: only the cited turns are read
            user: str | None = named
            turns = [*first, *self.store.get_episodes(scope, sorted(cited - {first[0].id}))]
        else:  # the user is the speaker with the most user turns: every turn is counted
            every = list(self.store.iter_episodes(scope))
            user = choose_user(every, named)
            turns = [e for e in every if e.id in cited or e.speaker == user]
        return select(
            facts,
            turns,
            counter=self.counter,
            budget=self.essentials_budget,
            user=user,
            now=self.now(),
            closed=closed_states(self.store, scope),  # a note of one of them leaves L1
        )

    def _essentials_managed(
        self, scope: Scope, doc: CuratedDocument, previous: JsonValue | None
    ) -> tuple[dict[str, tuple[str, list[str]]], set[str]]:
        """The essentials bullets consolidation wrote and the person left as they were (id ->
        text, facts), and the facts of the bullets a person edited or deleted (withheld)."""
        bullets = {b.id: b for s in doc.sections for b in s.bullets}
        known = previous if isinstance(previous, dict) else None
        managed: dict[str, tuple[str, list[str]]] = {}
        withheld: set[str] = set()
        if known is not None:
            withheld = {str(f) for f in known.get("withheld", [])}
            for bullet_id, entry in dict(known.get("bullets", {})).items():
                facts = [str(f) for f in entry.get("facts", [])]
                present = bullets.get(bullet_id)
                if present is None or _digest(present.text) != entry.get("digest"):
                    withheld |= set(facts)  # deleted or edited by hand: as the person left it
                else:
                    managed[bullet_id] = (present.text, facts)
        else:  # written before this record: bullets made from facts are consolidation's
            texts = {f.text for f in _all_facts(self.store, scope)}
            managed = {b.id: (b.text, []) for b in bullets.values() if b.text in texts}
        return managed, withheld

    def _essentials_withheld(self, scope: Scope, previous: JsonValue | None) -> set[str]:
        """The facts the essentials, as a person left them, withhold from L1."""
        if not isinstance(previous, dict):
            return set()
        doc, _ = self.docs.get(scope, ESSENTIALS_KEY)
        return self._essentials_managed(scope, doc, previous)[1]

    def _essentials(
        self,
        scope: Scope,
        selection: Selection,
        previous: JsonValue | None,
        report: ConsolidationReport,
    ) -> dict[str, JsonValue]:
        """Bring the essentials document to ``selection``; return the record of the bullets
        this wrote (id -> a digest of its text, its facts) and of the facts a person's edits
        withhold."""
        record: dict[str, JsonValue] = {}

        def attempt() -> None:
            doc, version = self.docs.get(scope, ESSENTIALS_KEY)
            bullets = {b.id: (s.heading, b) for s in doc.sections for b in s.bullets}
            managed, withheld = self._essentials_managed(scope, doc, previous)
            by_text: dict[str, list[str]] = defaultdict(list)  # a bullet a person moved: kept
            for bullet_id, (text, _) in managed.items():
                by_text[text].append(bullet_id)
            wanted = list(
                {  # the user's slots are the profile document's
                    (e.section, e.bullet): e
                    for e in selection.entries
                    if e.section != "Profile" and not (set(e.facts) & withheld)
                }.values()
            )
            surfaces = {
                e.id: e.surface
                for e in self.store.get_episodes(
                    scope, sorted({s for e in wanted for s in e.sources})
                )
            }
            ops: list[Operation] = []
            keep: dict[str, tuple[str, list[str]]] = {}
            for entry in wanted:
                citations = tuple(Citation(surfaces.get(s, "chat"), s) for s in entry.sources)
                same = by_text.get(entry.bullet)
                if same:
                    bullet_id = same.pop(0)
                    keep[bullet_id] = (entry.bullet, list(entry.facts))
                    if bullets[bullet_id][1].citations != citations:
                        ops.append(Operation(OpKind.EDIT, bullet_id, citations=citations))
                    continue
                ops.append(
                    Operation(
                        OpKind.ADD, section=entry.section, text=entry.bullet, citations=citations
                    )
                )
            ops += [
                Operation(OpKind.DELETE, bullet_id, reason=DeleteReason.LOW_SIGNAL)
                for bullet_id in managed
                if bullet_id not in keep
            ]
            if ops:
                with self.runs.start("document", f"{scope}/{ESSENTIALS_KEY}"):
                    after, report.documents[ESSENTIALS_KEY] = self.docs.apply(
                        scope, ESSENTIALS_KEY, ops, expected_version=version
                    )
                report.added += sum(op.kind == OpKind.ADD for op in ops)
                report.removed += sum(op.kind == OpKind.DELETE for op in ops)
                placed = {(s.heading, b.text): b.id for s in after.sections for b in s.bullets}
                for entry in wanted:
                    found = placed.get((entry.section, entry.bullet))
                    if found is not None and found not in keep:
                        keep[found] = (entry.bullet, list(entry.facts))
            record.clear()
            record["bullets"] = {
                bullet_id: {"digest": _digest(text), "facts": list(facts)}
                for bullet_id, (text, facts) in sorted(keep.items())
            }
            record["withheld"] = sorted(withheld)

        retry_conflicts(attempt)
        return record

    def _documents(self, scope: Scope) -> list[str]:
        return sorted(
            d.key
            for d in self.store.list_documents(scope)
            if d.scope == scope and d.kind in (DocumentKind.TOPIC, DocumentKind.ESSENTIALS)
        )

    def audit(
        self,
        scope: Scope,
        *,
        remove: bool = False,
        kept: Callable[[Bullet], bool] | None = None,
    ) -> ConsolidationReport:
        """Check every bullet against its cited evidence. A bullet whose episodes are gone, or
        whose words the episodes barely contain (share of its terms found below
        ``SUPPORT_THRESHOLD``), is flagged; with ``remove`` it is deleted (reason ``stale``
        for missing evidence, ``low-signal`` for unsupported text). With a model, the model
        judges whether the cited turns support each bullet that has evidence (a paraphrase or
        a translation can be supported with few shared words); the rules judge what it could
        not. A bullet ``kept`` accepts (a person kept it as it stands) is neither judged nor
        removed."""
        report = ConsolidationReport()
        for key in self._documents(scope):
            doc, version = self.docs.get(scope, key)
            bullets = [b for s in doc.sections for b in s.bullets if kept is None or not kept(b)]
            cited = sorted({c.episode_id for b in bullets for c in b.citations})
            texts = {e.id: e.text for e in self.store.get_episodes(scope, cited)}
            evidence_of = {
                b.id: [texts[c.episode_id] for c in b.citations if c.episode_id in texts]
                for b in bullets
            }
            judged = [b for b in bullets if evidence_of[b.id]]
            verdicts = (
                self.model.supported(key, [(b.text, evidence_of[b.id]) for b in judged], report)
                if self.model is not None and judged
                else {}
            )
            by_model = {judged[i].id: v for i, v in verdicts.items()}
            ops = []
            for bullet in bullets:
                evidence = evidence_of[bullet.id]
                if not evidence:
                    finding = AuditFinding(key, bullet.id, "missing-evidence", 0.0)
                else:
                    share = round(support(bullet.text, " ".join(evidence)), 3)
                    verdict = by_model.get(bullet.id)
                    if verdict is not None:
                        if verdict:
                            continue
                        finding = AuditFinding(key, bullet.id, "unsupported", share, "model")
                    elif share >= SUPPORT_THRESHOLD:
                        continue
                    else:
                        finding = AuditFinding(key, bullet.id, "unsupported", share)
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
        deleted (reason ``superseded``). With a model, pairs less alike than that but still
        close (Jaccard at least ``DEDUP_CANDIDATE``) are shown to it, and the ones it finds to
        make the same claim are merged too."""
        report = ConsolidationReport()
        for key in self._documents(scope):
            doc, version = self.docs.get(scope, key)
            bullets = [b for s in doc.sections for b in s.bullets]
            terms = {b.id: set(tokenize(b.text)) for b in bullets}
            same: set[tuple[str, str]] = {
                (a.id, b.id)
                for i, a in enumerate(bullets)
                for b in bullets[i + 1 :]
                if jaccard(terms[a.id], terms[b.id]) >= DUPLICATE_THRESHOLD
            }
            if self.model is not None:
                close = [
                    (a, b)
                    for i, a in enumerate(bullets)
                    for b in bullets[i + 1 :]
                    if (a.id, b.id) not in same
                    and jaccard(terms[a.id], terms[b.id]) >= DEDUP_CANDIDATE
                ]
                found = self.model.same(key, [(a.text, b.text) for a, b in close], report)
                same |= {(close[i][0].id, close[i][1].id) for i in found}
            gone: set[str] = set()
            ops = []
            for i, keep in enumerate(bullets):
                if keep.id in gone:
                    continue
                citations = list(keep.citations)
                for other in bullets[i + 1 :]:
                    if other.id in gone or (keep.id, other.id) not in same:
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

    def _profile_record(
        self, scope: Scope, prior: Mapping[str, JsonValue], current: Profile | None = None
    ) -> _ProfileHands:
        """What a person did to the profile since consolidation last wrote it (``current``:
        the stored profile, read when not given)."""
        if current is None:
            stored = self.store.get_document(scope, DocumentKind.PROFILE, "profile")
            current = Profile() if stored is None else Profile.from_document(stored)
        values = _profile_values(current)
        known = prior.get("profile")
        if not isinstance(known, dict):  # no record: first run, or a state from before it
            legacy = bool(prior)  # the older rule wrote the slots it found over the profile
            return _ProfileHands(set(values) if legacy else set(), set(), {}, legacy)
        hands = _ProfileHands(
            set(),
            {str(f) for f in known.get("withheld", [])},
            {str(k): {str(d) for d in v} for k, v in dict(known.get("refused", {})).items()},
        )
        for key, entry in dict(known.get("slots", {})).items():
            present = values.get(key)
            if present is not None and _digest(present) == entry.get("digest"):
                hands.managed.add(key)
                continue
            # deleted or edited by hand: its facts and its value are not written again
            hands.withheld |= {str(f) for f in entry.get("facts", [])}
            hands.refused.setdefault(key, set()).add(str(entry.get("digest")))
        return hands

    def _promote(
        self,
        scope: Scope,
        selection: Selection,
        facts: Sequence[Fact],
        prior: Mapping[str, JsonValue],
        proposed: Mapping[str, JsonValue] | None = None,
    ) -> tuple[dict[str, JsonValue], list[str]]:
        """The user's slots into the profile, and style preferences that two or more sessions
        now support (see :mod:`curate.profile`); a person's profile edit made meanwhile is
        re-read and kept (compare-and-swap retried). Returns the record of what this wrote and
        the slots it changed."""
        return retry_conflicts(
            lambda: self._promote_once(scope, selection, facts, prior, proposed or {})
        )

    def _promote_once(
        self,
        scope: Scope,
        selection: Selection,
        facts: Sequence[Fact],
        prior: Mapping[str, JsonValue],
        proposed: Mapping[str, JsonValue],
    ) -> tuple[dict[str, JsonValue], list[str]]:
        liked = [f for f in facts if f.category == Category.PREFERENCE]
        episodes = self.store.get_episodes(scope, sorted({s for f in liked for s in f.sources}))
        stored = self.store.get_document(scope, DocumentKind.PROFILE, "profile")
        current = Profile() if stored is None else Profile.from_document(stored)
        hands = self._profile_record(scope, prior, current)
        wanted: dict[str, tuple[Slot, tuple[str, ...]]] = {
            f"fields.{k}": (slot, selection.profile_facts.get(k, ()))
            for k, slot in selection.profile.items()
        }
        for found in promotions(liked, episodes):
            wanted[f"{found.section}.{found.key}"] = (
                Slot(found.value, found.sources, 1.0),
                found.facts,
            )
        for key, entry in proposed.items():  # the model's, where the rules set nothing
            if key in wanted or not isinstance(entry, dict):
                continue
            value, sources = entry.get("value"), _list(entry.get("sources"))
            if isinstance(value, str) and sources:
                slot = Slot(value, tuple(str(e) for e in sources), 0.9)
                wanted[key] = (slot, tuple(str(f) for f in _list(entry.get("facts"))))
        sections = {"fields": dict(current.fields), "preferences": dict(current.preferences)}
        if not hands.legacy:  # a slot consolidation wrote that L1 no longer states goes
            for key in hands.managed - set(wanted):
                section, name = key.split(".", 1)
                sections[section].pop(name, None)
        written: dict[str, JsonValue] = {}
        for key, (slot, backing) in wanted.items():
            section, name = key.split(".", 1)
            if name in sections[section] and key not in hands.managed:
                continue  # a slot a person wrote or edited is theirs
            if self.docs.scrub is not None:  # the one scrub of curated text
                slot = replace(slot, value=self.docs.scrub(slot.value, scope))
            if _digest(slot.value) in hands.refused.get(key, ()):
                continue  # a value a person took out of this slot stays out
            sections[section][name] = slot
            written[key] = {"digest": _digest(slot.value), "facts": list(backing)}
        if hands.legacy:  # the older rule: what it wrote and L1 still states is now recorded
            written.update(
                {
                    key: {"digest": _digest(value), "facts": []}
                    for key, value in _profile_values(
                        Profile(sections["fields"], sections["preferences"])
                    ).items()
                    if key in hands.managed and key not in written
                }
            )
        record: dict[str, JsonValue] = {
            "slots": dict(sorted(written.items())),
            "withheld": sorted(hands.withheld),
            "refused": {k: sorted(v) for k, v in sorted(hands.refused.items())},
        }
        updated = Profile(sections["fields"], sections["preferences"], current.version)
        if updated.to_content() == current.to_content():
            return record, []
        self.store.put_document(
            scope,
            DocumentKind.PROFILE,
            "profile",
            updated.to_content(),
            expected_version=current.version,
        )
        before = current.to_content()
        after = updated.to_content()
        return record, [
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
        if self.model is not None and facts:
            if self.model.rewrite(scope, key, facts, gone, surfaces, report):
                return
            report.by_rules += len(facts)  # what the model could not do is done by rules
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
                    text = fact.text
                    if text in present:
                        continue  # already there (dedup of exact repeats)
                    present.add(text)
                    citations = tuple(Citation(surfaces.get(e, "chat"), e) for e in fact.sources)
                    section = SECTIONS[fact.category]
                    ops.append(
                        Operation(OpKind.ADD, section=section, text=text, citations=citations)
                    )
                if not ops:
                    return
                _, new_version = self.docs.apply(scope, key, ops, expected_version=version)
                report.documents[key] = new_version
                report.added += sum(op.kind == OpKind.ADD for op in ops)
                report.removed += sum(op.kind == OpKind.DELETE for op in ops)
                run.emit("applied", key=key, operations=len(ops), version=new_version)

            retry_conflicts(attempt)
