"""Deletion and forgetting: an item (cascading to what derives from it), or a whole scope
(a thread, an agent, or a user)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from memstrata.server.auth import check_forget_scope
from memstrata.server.deps import WRITER, CallerDep, ItemPath, MemoryDep, ScopeDep
from memstrata.server.schemas.common import DeleteReasonIn
from memstrata.server.schemas.erasure import DeleteOut, ForgetPreviewOut

router = APIRouter(tags=["erasure"])


@router.delete("/v1/items/{item_id}", dependencies=[WRITER])
def delete(
    item_id: ItemPath,
    memory: MemoryDep,
    scope: ScopeDep,
    reason: DeleteReasonIn = "user-request",
) -> DeleteOut:
    """Delete an item; an episode's deletion cascades to the facts and bullets citing it."""
    return DeleteOut.model_validate(memory.delete(item_id, scope, reason=reason).to_json())


DryRun = Annotated[
    bool,
    Query(
        description="change nothing: answer what the forget would remove or rewrite "
        "(ForgetPreviewOut), computed by the same plan and store transaction, rolled back"
    ),
]


def _answer(report_json: dict[str, object], dry_run: bool) -> DeleteOut | ForgetPreviewOut:
    if dry_run:
        return ForgetPreviewOut.model_validate(report_json)
    return DeleteOut.model_validate(report_json)


@router.post("/v1/items/{item_id}/forget", dependencies=[WRITER])
def forget(
    item_id: ItemPath, memory: MemoryDep, scope: ScopeDep, dry_run: DryRun = False
) -> DeleteOut | ForgetPreviewOut:
    """Forget an item with everything derived from it, in every copy and every version
    (``dry_run``: list all of it, change nothing)."""
    return _answer(memory.forget(item_id, scope, dry_run=dry_run).to_json(), dry_run)


@router.delete("/v1/scopes", dependencies=[WRITER])
def forget_scope(
    memory: MemoryDep, scope: ScopeDep, caller: CallerDep, dry_run: DryRun = False
) -> DeleteOut | ForgetPreviewOut:
    """Forget everything the scope holds: a user (every thread and agent; an admin's), or one
    thread or agent of a user (a writer's). ``dry_run``: list all of it, change nothing (the
    same role is needed)."""
    check_forget_scope(caller, scope)
    return _answer(memory.forget_scope(scope, dry_run=dry_run).to_json(), dry_run)
