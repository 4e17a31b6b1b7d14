"""Audit flags: the consolidator's audit of curated bullets against the turns they cite,
shown to a person, and what they decide about each (keep, delete, edit)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memstrata.server.deps import READER, WRITER, MemoryDep, ScopeDep
from memstrata.server.responses import AuditOut, AuditResolutionOut
from memstrata.server.schemas.audit import AuditResolveIn

router = APIRouter(tags=["audit"])


@router.get("/v1/audit", dependencies=[READER], response_model=AuditOut)
def audit(
    memory: MemoryDep,
    scope: ScopeDep,
    use_llm: Annotated[
        bool,
        Query(description="let the configured chat model judge the evidence (false: rules only)"),
    ] = True,
) -> dict[str, Any]:
    """The audit's current flags on the scope's curated documents (run now; nothing is
    changed): each bullet with its document key and version, text, problem, support and
    citations (with the cited turns that still exist). Bullets a person kept, as they still
    stand, are left out."""
    return {"items": [flag.to_json() for flag in memory.audit(scope, use_llm=use_llm)]}


@router.post("/v1/audit/resolve", dependencies=[WRITER], response_model=AuditResolutionOut)
def resolve(body: AuditResolveIn, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    """Resolve a flag against the document version it was shown at: ``delete`` and ``edit``
    are previewed and applied by compare-and-swap, ``keep`` is recorded so the bullet is not
    flagged again while its text and citations stay. A stale ``expected_version`` is 409
    with the version stored now in ``details``; nothing is written."""
    resolution = memory.resolve_audit(
        scope,
        body.key,
        body.bullet_id,
        body.action,
        expected_version=body.expected_version,
        text=body.text,
        reason=body.reason,
    )
    return resolution.to_json()
