"""Topic documents: new facts filed as bullets of their topic's document (by the model where
one is configured, by rules for what it could not do), facts of a merged topic refiled in the
one it was merged into, and topic merges carried out so that a run stopped midway is finished
by the next."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.consolidate.by_model import merge_topic
from memstrata.consolidate.measures import (
    SECTIONS,
)
from memstrata.consolidate.parts import Parts
from memstrata.consolidate.report import ConsolidationReport
from memstrata.consolidate.state import aliases_of, put_state
from memstrata.document.coverage import topic_key
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.model import (
    DeleteReason,
    Fact,
    JsonValue,
    Scope,
)
from memstrata.retry import retry_conflicts

if TYPE_CHECKING:
    from memstrata.consolidate.by_model import ModelSteps


def file_facts(
    parts: Parts,
    model: ModelSteps | None,
    scope: Scope,
    key: str,
    facts: Sequence[Fact],
    gone: set[str],
    surfaces: dict[str, str],
    report: ConsolidationReport,
) -> None:
    if model is not None and facts:
        if model.rewrite(scope, key, facts, gone, surfaces, report):
            return
        report.by_rules += len(facts)  # what the model could not do is done by rules
    with parts.runs.start("document", f"{scope}/{key}") as run:

        def attempt() -> None:  # re-reads the document: a compare-and-swap retried
            doc, version = parts.docs.get(scope, key)
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
                ops.append(Operation(OpKind.ADD, section=section, text=text, citations=citations))
            if not ops:
                return
            _, new_version = parts.docs.apply(scope, key, ops, expected_version=version)
            report.documents[key] = new_version
            report.added += sum(op.kind == OpKind.ADD for op in ops)
            report.removed += sum(op.kind == OpKind.DELETE for op in ops)
            run.emit("applied", key=key, operations=len(ops), version=new_version)

        retry_conflicts(attempt)


def refile(parts: Parts, scope: Scope, new: Sequence[Fact], aliases: dict[str, str]) -> bool:
    """New facts of a topic that was merged into another are filed in that one."""
    moved = False
    for fact in new:
        into = aliases.get(topic_key(fact))
        if into is not None and into != topic_key(fact):
            parts.store.update_fact(
                scope,
                fact.evolve(topic=into, updated_at=parts.now()),
                expected_version=fact.version,
            )
            moved = True
    return moved


def merges(
    parts: Parts,
    scope: Scope,
    merges: Sequence[tuple[str, str]],
    prior: dict[str, JsonValue],
    version: int,
    report: ConsolidationReport,
) -> int:
    """Carry out topic merges ((folded, kept) keys), recorded in the state first so that
    a run stopped midway is finished by the next; returns the state's version."""
    prior["merging"] = [[src, into] for src, into in merges]
    version = put_state(parts, scope, prior, version)
    aliases = aliases_of(prior.get("aliases"))
    for src, into in merges:
        target = aliases.get(into, into)
        merge_topic(parts, scope, src, target, report)
        aliases = {k: (target if v == src else v) for k, v in aliases.items()}
        aliases[src] = target
    prior["aliases"] = dict(sorted(aliases.items()))
    prior.pop("merging", None)
    return put_state(parts, scope, prior, version)
