"""Records: remember turns, add facts, read, change and list items, an item's history."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request

from memstrata.codec import item_version_to_json, record_to_json
from memstrata.model import Role, Turn
from memstrata.server.deps import MemoryDep, ScopeDep, body_scope
from memstrata.server.schemas import FactIn, RememberIn, UpdateIn

router = APIRouter(tags=["records"])


@router.post("/v1/remember", status_code=201)
def remember(body: RememberIn, request: Request, memory: MemoryDep) -> list[dict[str, Any]]:
    turns = [
        Turn(
            text=t.text,
            speaker=t.speaker,
            role=Role(t.role),
            time=t.time,
            session_id=t.session_id,
            metadata=t.metadata,
        )
        for t in body.turns
    ]
    episodes = memory.remember(
        turns, body_scope(body.scope, request), surface=body.surface, session_id=body.session_id
    )
    return [record_to_json(e) for e in episodes]


@router.post("/v1/facts", status_code=201)
def add_fact(body: FactIn, request: Request, memory: MemoryDep) -> dict[str, Any]:
    fact = memory.add_fact(
        body.text,
        body_scope(body.scope, request),
        category=body.category,
        confidence=body.confidence,
        importance=body.importance,
        topic=body.topic,
        sources=body.sources,
    )
    return record_to_json(fact)


@router.get("/v1/items/{item_id}")
def get(item_id: str, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    return record_to_json(memory.get(item_id, scope))


@router.patch("/v1/items/{item_id}")
def update(item_id: str, body: UpdateIn, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    record = memory.update(
        item_id,
        scope,
        expected_version=body.expected_version,
        **body.changes.model_dump(exclude_unset=True),
    )
    return record_to_json(record)


@router.get("/v1/items/{item_id}/history")
def history(item_id: str, memory: MemoryDep, scope: ScopeDep) -> list[dict[str, Any]]:
    return [item_version_to_json(e) for e in memory.history(item_id, scope)]


@router.get("/v1/list")
def list_(
    memory: MemoryDep,
    scope: ScopeDep,
    kind: Literal["episode", "fact", "document"] = "episode",
    limit: int = Query(100, ge=1, le=10_000),
    after: str | None = None,
) -> list[dict[str, Any]]:
    records = memory.list(scope, kind, limit=limit, after=after)
    return [record_to_json(r) for r in records]
