"""Consolidation, mode ``audit``: every bullet checked against the turns it cites."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from memstrata.consolidate.measures import (
    SUPPORT_THRESHOLD,
    support,
)
from memstrata.consolidate.parts import Parts
from memstrata.consolidate.report import AuditFinding, ConsolidationReport
from memstrata.consolidate.state import curated_keys
from memstrata.document.format import Bullet
from memstrata.document.ops import Operation, OpKind
from memstrata.model import (
    DeleteReason,
    Scope,
)

if TYPE_CHECKING:
    from memstrata.consolidate.by_model import ModelSteps


def audit(
    parts: Parts,
    model: ModelSteps | None,
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
    for key in curated_keys(parts, scope):
        doc, version = parts.docs.get(scope, key)
        bullets = [b for s in doc.sections for b in s.bullets if kept is None or not kept(b)]
        cited = sorted({c.episode_id for b in bullets for c in b.citations})
        texts = {e.id: e.text for e in parts.store.get_episodes(scope, cited)}
        evidence_of = {
            b.id: [texts[c.episode_id] for c in b.citations if c.episode_id in texts]
            for b in bullets
        }
        judged = [b for b in bullets if evidence_of[b.id]]
        verdicts = (
            model.supported(key, [(b.text, evidence_of[b.id]) for b in judged], report)
            if model is not None and judged
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
            with parts.runs.start("document", f"{scope}/{key}"):
                _, report.documents[key] = parts.docs.apply(
                    scope, key, ops, expected_version=version
                )
            report.removed += len(ops)
    return report
