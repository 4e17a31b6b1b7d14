"""Consolidation steps a chat model does when one is configured; rules do what it cannot.

* Contradictions: each new fact is shown with the current facts it could contradict (the same
  topic, or sharing its terms); a contradiction supersedes the older fact (``valid_to``,
  ``superseded_by``, a ``supersede`` in its history), never deletes it.
* Topics: the new facts of a topic are folded into its bullets (rewritten, not appended), as
  one batch of document operations (edit, delete-superseded, add) applied through the
  documents' apply path; new facts the model did not state are filed by rules in the same
  batch.
* Themes: topics the model finds to be one theme are merged: the bullets of the folded topic
  join the kept one (citations and all), its facts are filed there, and the folded document is
  emptied by a batch of deletions (reason ``superseded``), its history kept. A merge is
  recorded in the state before it starts and finished by the next run if this one stops.
* Profile: slots the model proposes from the evidence fill slots the rules left empty.
* Audit and dedup: the model judges whether a bullet's cited turns support it and whether two
  bullets make the same claim.

Every text the model writes passes :mod:`memstrata.curate.llm_consolidate`'s guards (cited,
citations it was shown, supported by them, not overclaiming); a step whose reply is malformed
twice, or fails, or comes after the run's token budget is spent, is done by rules.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Final

from memstrata.consolidate.measures import SECTIONS, SUPPORT_THRESHOLD, jaccard, support
from memstrata.curate.llm_consolidate import (
    ShownBullet,
    find_contradictions,
    judge_same,
    judge_support,
    propose_merges,
    propose_slots,
    rewrite_topic,
)
from memstrata.document.coverage import topic_key
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.errors import ConflictError, MemstrataError
from memstrata.index.tokenize import tokenize
from memstrata.llm.metered import MeteredLLM
from memstrata.model import (
    Category,
    DeleteReason,
    DocumentKind,
    Episode,
    Fact,
    HistoryOp,
    JsonValue,
    Profile,
    Scope,
)
from memstrata.ports import LLM

if TYPE_CHECKING:
    from memstrata.consolidate.parts import Parts
    from memstrata.consolidate.report import ConsolidationReport

#: bounds on what one prompt shows
MAX_TOPIC_BULLETS: Final = 60
MAX_CANDIDATES_PER_FACT: Final = 6
MAX_NEW_FACTS_PER_CHECK: Final = 25
MAX_TOPICS_SHOWN: Final = 40
MAX_JUDGED_PER_CALL: Final = 25
#: dedup: pairs below the rules' threshold but at least this close are shown to the model
DEDUP_CANDIDATE: Final = 0.3
_USER_CATEGORIES: Final = (
    Category.PROFILE,
    Category.PREFERENCE,
    Category.PERSONAL,
    Category.EXPERTISE,
)


@contextmanager
def _step(llm: LLM, name: str) -> Iterator[None]:
    """Calls inside are recorded under step ``name`` when the model is metered."""
    with llm.step(name) if isinstance(llm, MeteredLLM) else nullcontext():
        yield


class ModelSteps:
    """The model's part of one :class:`memstrata.consolidate.Consolidator`."""

    def __init__(self, owner: Parts, llm: LLM) -> None:
        self.owner = owner
        self.llm = llm
        self.store = owner.store
        self.docs = owner.docs

    # contradictions -----------------------------------------------------------------
    def contradictions(
        self,
        scope: Scope,
        new: Sequence[Fact],
        current: Sequence[Fact],
        report: ConsolidationReport,
    ) -> bool:
        """Supersede the older current facts the new ones contradict; whether any was."""
        fresh = {f.id for f in new}
        older = [f for f in current if f.id not in fresh]
        if not older or not new:
            return False
        closed = False
        for start in range(0, len(new), MAX_NEW_FACTS_PER_CHECK):
            batch = list(new[start : start + MAX_NEW_FACTS_PER_CHECK])
            candidates = _candidates(batch, older, self._found(scope, batch))
            if not candidates:
                continue
            episodes = self._episodes(scope, [s for f in batch for s in f.sources])
            with _step(self.llm, "contradictions"):
                pairs = find_contradictions(
                    self.llm, batch, candidates, episodes, failures=report.model_failures
                )
            for newer, old in pairs or []:
                stored = self.store.get_fact(scope, old.id)
                if not stored.current:
                    continue
                ended = max(newer.valid_from, stored.valid_from)
                try:
                    self.store.update_fact(
                        scope,
                        stored.evolve(
                            valid_to=ended, superseded_by=newer.id, updated_at=self.owner.now()
                        ),
                        expected_version=stored.version,
                        op=HistoryOp.SUPERSEDE.value,
                    )
                except ConflictError:
                    continue  # changed meanwhile: left for the next run
                report.superseded.append(old.id)
                closed = True
        return closed

    def _found(self, scope: Scope, facts: Sequence[Fact]) -> dict[str, list[str]]:
        """For each fact, the ids of the facts a search for its text finds (none without a
        search, or when it fails: the topic and shared terms still choose candidates)."""
        if self.owner.related is None:
            return {}
        found: dict[str, list[str]] = {}
        for fact in facts:
            try:
                found[fact.id] = list(self.owner.related(scope, fact.text))
            except MemstrataError:
                found[fact.id] = []
        return found

    # topics -------------------------------------------------------------------------
    def rewrite(
        self,
        scope: Scope,
        key: str,
        facts: Sequence[Fact],
        gone: set[str],
        surfaces: dict[str, str],
        report: ConsolidationReport,
    ) -> bool:
        """Fold ``facts`` into topic ``key`` by the model, as one batch; False when the
        model could not (the caller files them by rules)."""
        with self.owner.runs.start("document", f"{scope}/{key}") as run:
            doc, version = self.docs.get(scope, key)
            bullets = [(s.heading, b) for s in doc.sections for b in s.bullets]
            shown = [
                ShownBullet(b.id, heading, b.text, tuple(c.episode_id for c in b.citations))
                for heading, b in bullets
                if b.text not in gone
            ]
            if len(shown) > MAX_TOPIC_BULLETS:
                report.model_failures.append(f"topic {key}: too many bullets for one prompt")
                return False
            for _, bullet in bullets:
                surfaces.update({c.episode_id: c.surface for c in bullet.citations})
            episodes = self._episodes(
                scope, [s for b in shown for s in b.sources] + [s for f in facts for s in f.sources]
            )
            surfaces.update({e.id: e.surface for e in episodes})
            with _step(self.llm, f"topic:{key}"):
                checked = rewrite_topic(
                    self.llm,
                    key,
                    shown,
                    [(f, SECTIONS[f.category]) for f in facts],
                    sorted(gone),
                    episodes,
                    support=support,
                    threshold=SUPPORT_THRESHOLD,
                    failures=report.model_failures,
                )
            if checked is None:
                return False
            report.rejected += checked.rejected
            ops = [
                Operation(OpKind.DELETE, b.id, reason=DeleteReason.SUPERSEDED)
                for _, b in bullets
                if b.text in gone
            ]
            deleted = {op.id for op in ops}
            present = {b.text for b in shown}
            stated: set[str] = set()
            written = 0
            for proposed in checked.bullets:
                citations = tuple(Citation(surfaces.get(e, "chat"), e) for e in proposed.sources)
                targets = [i for i in proposed.replaces if i not in deleted]
                stated.update(proposed.facts)
                if targets:
                    ops.append(
                        Operation(OpKind.EDIT, targets[0], text=proposed.text, citations=citations)
                    )
                    ops += [
                        Operation(OpKind.DELETE, other, reason=DeleteReason.SUPERSEDED)
                        for other in targets[1:]
                    ]
                    deleted.update(targets[1:])
                elif proposed.text in present:
                    continue  # the model repeated a bullet as it stands
                else:
                    ops.append(
                        Operation(
                            OpKind.ADD,
                            section=proposed.section,
                            text=proposed.text,
                            citations=citations,
                        )
                    )
                present.add(proposed.text)
                written += 1
            for fact in facts:  # what the model did not state is filed by rules
                if fact.id in stated or fact.text in present:
                    continue
                present.add(fact.text)
                report.by_rules += 1
                ops.append(
                    Operation(
                        OpKind.ADD,
                        section=SECTIONS[fact.category],
                        text=fact.text,
                        citations=tuple(Citation(surfaces.get(e, "chat"), e) for e in fact.sources),
                    )
                )
            if not ops:
                return True
            try:
                _, new_version = self.docs.apply(scope, key, ops, expected_version=version)
            except ConflictError:  # a person edited it meanwhile: rules, on the new version
                report.model_failures.append(f"topic {key}: changed while the model wrote")
                return False
            report.documents[key] = new_version
            report.by_model += written
            report.added += sum(op.kind == OpKind.ADD for op in ops)
            report.removed += sum(op.kind == OpKind.DELETE for op in ops)
            run.emit("applied", key=key, operations=len(ops), version=new_version, by="model")
            return True

    # themes -------------------------------------------------------------------------
    def propose_merges(self, scope: Scope, report: ConsolidationReport) -> list[tuple[str, str]]:
        """Topic documents the model finds to be one theme, as (folded key, kept key)."""
        shown = []
        stored_topics = self.store.list_documents(scope, DocumentKind.TOPIC)
        for stored in sorted(stored_topics, key=lambda d: d.key):
            if stored.scope != scope:
                continue
            doc, _ = self.docs.get(scope, stored.key)
            texts = [b.text for s in doc.sections for b in s.bullets]
            if texts:
                shown.append((stored.key, doc.title, texts[:5]))
        if len(shown) < 2:
            return []
        with _step(self.llm, "merge_topics"):
            merges = propose_merges(
                self.llm, shown[:MAX_TOPICS_SHOWN], failures=report.model_failures
            )
        return [(src, into) for into, sources in merges or [] for src in sources]

    # profile ------------------------------------------------------------------------
    def slots(
        self, scope: Scope, user: str | None, new: Sequence[Fact], report: ConsolidationReport
    ) -> dict[str, JsonValue]:
        """Profile slots the model proposes from the new facts about the user and their
        turns: key ("fields.role") -> {"value", "sources", "facts"}."""
        about = [f for f in new if f.category in _USER_CATEGORIES]
        if not about:
            return {}
        stored = self.store.get_document(scope, DocumentKind.PROFILE, "profile")
        profile = Profile() if stored is None else Profile.from_document(stored)
        episodes = self._episodes(scope, [s for f in about for s in f.sources])
        with _step(self.llm, "profile"):
            proposed = propose_slots(
                self.llm,
                user,
                profile,
                about,
                episodes,
                support=support,
                threshold=SUPPORT_THRESHOLD,
                failures=report.model_failures,
                rejected=report.rejected,
            )
        out: dict[str, JsonValue] = {}
        for slot in proposed or []:
            backing = sorted(f.id for f in about if set(f.sources) & set(slot.sources))
            out[f"{slot.section}.{slot.key}"] = {
                "value": slot.value,
                "sources": list(slot.sources),
                "facts": list(backing),
            }
        return out

    # audit and dedup ----------------------------------------------------------------
    def supported(
        self, key: str, items: Sequence[tuple[str, Sequence[str]]], report: ConsolidationReport
    ) -> dict[int, bool]:
        """The model's verdict on each (bullet text, evidence) it could judge."""
        verdicts: dict[int, bool] = {}
        for start in range(0, len(items), MAX_JUDGED_PER_CALL):
            chunk = items[start : start + MAX_JUDGED_PER_CALL]
            with _step(self.llm, f"audit:{key}"):
                found = judge_support(
                    self.llm, chunk, failures=report.model_failures, where=f"audit {key}"
                )
            verdicts.update({start + i: v for i, v in (found or {}).items()})
        return verdicts

    def same(
        self, key: str, pairs: Sequence[tuple[str, str]], report: ConsolidationReport
    ) -> set[int]:
        """The pairs the model finds to make the same claim."""
        same: set[int] = set()
        for start in range(0, len(pairs), MAX_JUDGED_PER_CALL):
            chunk = pairs[start : start + MAX_JUDGED_PER_CALL]
            with _step(self.llm, f"dedup:{key}"):
                found = judge_same(
                    self.llm, chunk, failures=report.model_failures, where=f"dedup {key}"
                )
            same.update(start + i for i in found or set())
        return same

    def _episodes(self, scope: Scope, ids: Sequence[str]) -> list[Episode]:
        episodes = self.store.get_episodes(scope, sorted(set(ids)))
        return sorted(episodes, key=lambda e: (e.time, e.id))


def merge_topic(
    owner: Parts, scope: Scope, src: str, into: str, report: ConsolidationReport
) -> None:
    """Fold topic ``src`` into ``into``: its bullets added there (a text already there is
    not added twice), its facts filed there, then its bullets deleted. Each step can be
    repeated: a merge stopped midway is finished by running it again."""
    from memstrata.retry import retry_conflicts

    folded, _ = owner.docs.get(scope, src)
    moving = [(s.heading, b) for s in folded.sections for b in s.bullets]

    def add() -> None:
        doc, version = owner.docs.get(scope, into)
        present = {b.text for s in doc.sections for b in s.bullets}
        ops = [
            Operation(OpKind.ADD, section=heading, text=b.text, citations=b.citations)
            for heading, b in moving
            if b.text not in present
        ]
        if ops:
            with owner.runs.start("document", f"{scope}/{into}"):
                _, report.documents[into] = owner.docs.apply(
                    scope, into, ops, expected_version=version
                )
            report.added += len(ops)

    retry_conflicts(add)
    for fact in list(owner.store.iter_facts(scope)):
        if fact.scope == scope and topic_key(fact) == src:
            owner.store.update_fact(
                scope,
                fact.evolve(topic=into, updated_at=owner.now()),
                expected_version=fact.version,
            )

    def empty() -> None:
        doc, version = owner.docs.get(scope, src)
        ops = [
            Operation(OpKind.DELETE, b.id, reason=DeleteReason.SUPERSEDED)
            for s in doc.sections
            for b in s.bullets
        ]
        if ops:
            with owner.runs.start("document", f"{scope}/{src}"):
                _, report.documents[src] = owner.docs.apply(
                    scope, src, ops, expected_version=version
                )
            report.removed += len(ops)

    retry_conflicts(empty)
    report.topics_merged[src] = into


def _candidates(
    new: Sequence[Fact], older: Sequence[Fact], found: Mapping[str, Sequence[str]]
) -> list[Fact]:
    """The current facts each new fact could contradict: those a search for it finds
    (``found``), of the same topic, or sharing its terms; closest first, a few per new fact."""
    chosen: dict[str, Fact] = {}
    terms = {f.id: set(tokenize(f.text)) for f in [*new, *older]}
    for fact in new:
        scored = []
        searched = set(found.get(fact.id, ()))
        for old in older:
            near = jaccard(terms[fact.id], terms[old.id])
            same_topic = topic_key(old) == topic_key(fact)
            if same_topic or near >= 0.15 or old.id in searched:
                scored.append((same_topic + (old.id in searched) + near, old.id, old))
        scored.sort(key=lambda t: (-t[0], t[1]))
        for _, _, old in scored[:MAX_CANDIDATES_PER_FACT]:
            chosen[old.id] = old
    return sorted(chosen.values(), key=lambda f: f.id)
