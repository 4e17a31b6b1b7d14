"""Consolidation, mode ``dedup``: near-duplicate bullets of each document merged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.consolidate.by_model import DEDUP_CANDIDATE
from memstrata.consolidate.measures import (
    DUPLICATE_THRESHOLD,
    jaccard,
)
from memstrata.consolidate.parts import Parts
from memstrata.consolidate.report import ConsolidationReport
from memstrata.consolidate.state import curated_keys
from memstrata.document.ops import Operation, OpKind
from memstrata.index.tokenize import tokenize
from memstrata.model import (
    DeleteReason,
    Scope,
)

if TYPE_CHECKING:
    from memstrata.consolidate.by_model import ModelSteps


def dedup(parts: Parts, model: ModelSteps | None, scope: Scope) -> ConsolidationReport:
    """Merge near-duplicate bullets of each document (term-set Jaccard at least
    ``DUPLICATE_THRESHOLD``): the first keeps the union of the citations, the others are
    deleted (reason ``superseded``). With a model, pairs less alike than that but still
    close (Jaccard at least ``DEDUP_CANDIDATE``) are shown to it, and the ones it finds to
    make the same claim are merged too."""
    report = ConsolidationReport()
    for key in curated_keys(parts, scope):
        doc, version = parts.docs.get(scope, key)
        bullets = [b for s in doc.sections for b in s.bullets]
        terms = {b.id: set(tokenize(b.text)) for b in bullets}
        same: set[tuple[str, str]] = {
            (a.id, b.id)
            for i, a in enumerate(bullets)
            for b in bullets[i + 1 :]
            if jaccard(terms[a.id], terms[b.id]) >= DUPLICATE_THRESHOLD
        }
        if model is not None:
            close = [
                (a, b)
                for i, a in enumerate(bullets)
                for b in bullets[i + 1 :]
                if (a.id, b.id) not in same and jaccard(terms[a.id], terms[b.id]) >= DEDUP_CANDIDATE
            ]
            found = model.same(key, [(a.text, b.text) for a, b in close], report)
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
            with parts.runs.start("document", f"{scope}/{key}"):
                _, report.documents[key] = parts.docs.apply(
                    scope, key, ops, expected_version=version
                )
            report.merged += len(gone)
            report.removed += len(gone)
    return report
