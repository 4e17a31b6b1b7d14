"""Deletion and forgetting: an item, or a whole scope."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memstrata.server.deps import MemoryDep, ScopeDep

router = APIRouter(tags=["erasure"])


@router.delete("/v1/items/{item_id}")
def delete(
    item_id: str, memory: MemoryDep, scope: ScopeDep, reason: str = "user-request"
) -> dict[str, Any]:
    return memory.delete(item_id, scope, reason=reason).to_json()


@router.post("/v1/items/{item_id}/forget")
def forget(item_id: str, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    return memory.forget(item_id, scope).to_json()


@router.delete("/v1/scopes")
def forget_scope(memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    return memory.forget_scope(scope).to_json()
