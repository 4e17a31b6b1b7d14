"""L1, the essentials document: what it should state now (:func:`selection`, from every
current fact within the L1 budget), and bringing the document to it while a person's edits
stand (:func:`bring`: a bullet a person edited, moved or deleted is left as they made it, and
the facts behind it are withheld from L1)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from memstrata.consolidate.parts import Parts
from memstrata.consolidate.report import ConsolidationReport
from memstrata.consolidate.state import all_facts, digest
from memstrata.curate.essentials import (
    Selection,
    choose_user,
    closed_states,
    select,
)
from memstrata.document.format import Citation
from memstrata.document.format import Document as CuratedDocument
from memstrata.document.ops import Operation, OpKind
from memstrata.document.service import ESSENTIALS_KEY
from memstrata.model import (
    DeleteReason,
    EpisodeFilter,
    Fact,
    FactFilter,
    JsonValue,
    Scope,
)
from memstrata.retry import retry_conflicts


def selection(parts: Parts, scope: Scope, facts: Sequence[Fact] | None = None) -> Selection:
    """What L1 should state for ``scope`` now (:func:`memstrata.curate.essentials.select`)
    from its current ``facts`` (read when not given)."""
    if facts is None:
        facts = all_facts(parts.store, scope, FactFilter(current_only=True))
    cited = {s for f in facts for s in f.sources}
    named = parts.user_speaker
    first = (
        parts.store.list_episodes(scope, EpisodeFilter(speaker=named), limit=1)
        if named and named not in ("user", "assistant")
        else []
    )
    if first:  # the user is named and speaks here: only the cited turns are read
        user: str | None = named
        turns = [*first, *parts.store.get_episodes(scope, sorted(cited - {first[0].id}))]
    else:  # the user is the speaker with the most user turns: every turn is counted
        every = list(parts.store.iter_episodes(scope))
        user = choose_user(every, named)
        turns = [e for e in every if e.id in cited or e.speaker == user]
    return select(
        facts,
        turns,
        counter=parts.counter,
        budget=parts.essentials_budget,
        user=user,
        now=parts.now(),
        closed=closed_states(parts.store, scope),  # a note of one of them leaves L1
    )


def managed_bullets(
    parts: Parts, scope: Scope, doc: CuratedDocument, previous: JsonValue | None
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
            if present is None or digest(present.text) != entry.get("digest"):
                withheld |= set(facts)  # deleted or edited by hand: as the person left it
            else:
                managed[bullet_id] = (present.text, facts)
    else:  # written before this record: bullets made from facts are consolidation's
        texts = {f.text for f in all_facts(parts.store, scope)}
        managed = {b.id: (b.text, []) for b in bullets.values() if b.text in texts}
    return managed, withheld


def withheld(parts: Parts, scope: Scope, previous: JsonValue | None) -> set[str]:
    """The facts the essentials, as a person left them, withhold from L1."""
    if not isinstance(previous, dict):
        return set()
    doc, _ = parts.docs.get(scope, ESSENTIALS_KEY)
    return managed_bullets(parts, scope, doc, previous)[1]


def bring(
    parts: Parts,
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
        doc, version = parts.docs.get(scope, ESSENTIALS_KEY)
        bullets = {b.id: (s.heading, b) for s in doc.sections for b in s.bullets}
        managed, withheld = managed_bullets(parts, scope, doc, previous)
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
            for e in parts.store.get_episodes(scope, sorted({s for e in wanted for s in e.sources}))
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
                Operation(OpKind.ADD, section=entry.section, text=entry.bullet, citations=citations)
            )
        ops += [
            Operation(OpKind.DELETE, bullet_id, reason=DeleteReason.LOW_SIGNAL)
            for bullet_id in managed
            if bullet_id not in keep
        ]
        if ops:
            with parts.runs.start("document", f"{scope}/{ESSENTIALS_KEY}"):
                after, report.documents[ESSENTIALS_KEY] = parts.docs.apply(
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
            bullet_id: {"digest": digest(text), "facts": list(facts)}
            for bullet_id, (text, facts) in sorted(keep.items())
        }
        record["withheld"] = sorted(withheld)

    retry_conflicts(attempt)
    return record
