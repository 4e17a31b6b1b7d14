"""Deletion and forgetting: an item (cascading to what derives from it), or a whole scope
(a thread, an agent, or a user)."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata.server.auth import check_forget_scope
from memstrata.server.deps import WRITER, CallerDep, ItemPath, MemoryDep, ScopeDep
from memstrata.server.schemas import DeleteOut, DeleteReasonIn

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


@router.post("/v1/items/{item_id}/forget", dependencies=[WRITER])
def forget(item_id: ItemPath, memory: MemoryDep, scope: ScopeDep) -> DeleteOut:
    """Forget an item with everything derived from it, in every copy and every version."""
    return DeleteOut.model_validate(memory.forget(item_id, scope).to_json())


@router.delete("/v1/scopes", dependencies=[WRITER])
def forget_scope(memory: MemoryDep, scope: ScopeDep, caller: CallerDep) -> DeleteOut:
    """Forget everything the scope holds: a user (every thread and agent; an admin's), or one
    thread or agent of a user (a writer's)."""
    check_forget_scope(caller, scope)
    return DeleteOut.model_validate(memory.forget_scope(scope).to_json())
