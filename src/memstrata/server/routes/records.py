"""Records: add facts; read, change and list items; an item's history."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from memstrata.codec import item_version_to_json, record_to_json
from memstrata.server.deps import (
    READER,
    WRITER,
    CursorId,
    ItemPath,
    Limit,
    MemoryDep,
    ScopeDep,
    body_scope,
    page,
)
from memstrata.server.responses import FactOut, Page, RecordOut, RecordPage, VersionPage
from memstrata.server.schemas.records import FactIn, ListKind, UpdateIn

router = APIRouter(tags=["records"])


@router.post("/v1/facts", dependencies=[WRITER], status_code=201, response_model=FactOut)
def add_fact(body: FactIn, request: Request, memory: MemoryDep) -> dict[str, Any]:
    fact = memory.add_fact(
        body.text,
        body_scope(body.scope, request),
        category=body.category,
        confidence=body.confidence,
        importance=body.importance,
        topic=body.topic,
        sources=body.sources,
        when=body.when_value(),
        slot=body.slot,
        value=body.value,
    )
    return record_to_json(fact)


@router.get("/v1/items/{item_id}", dependencies=[READER], response_model=RecordOut)
def get(item_id: ItemPath, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    return record_to_json(memory.get(item_id, scope))


@router.patch("/v1/items/{item_id}", dependencies=[WRITER], response_model=RecordOut)
def update(item_id: ItemPath, body: UpdateIn, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    record = memory.update(
        item_id,
        scope,
        expected_version=body.expected_version,
        **body.changes.model_dump(exclude_unset=True),
    )
    return record_to_json(record)


@router.get("/v1/items/{item_id}/history", dependencies=[READER], response_model=VersionPage)
def history(
    item_id: ItemPath,
    memory: MemoryDep,
    scope: ScopeDep,
    limit: Limit = 100,
    cursor: Annotated[
        int | None, Query(ge=0, description="the next_cursor of the page before")
    ] = None,
) -> Page[dict[str, Any]]:
    """Every version of a fact or document, oldest first, a page at a time."""
    entries = [e for e in memory.history(item_id, scope) if cursor is None or e.version > cursor]
    return page([item_version_to_json(e) for e in entries], limit, key="version")


@router.get("/v1/list", dependencies=[READER], response_model=RecordPage)
def list_(
    memory: MemoryDep,
    scope: ScopeDep,
    kind: ListKind = "episode",
    limit: Limit = 100,
    cursor: CursorId = None,
) -> Page[dict[str, Any]]:
    """One page of the scope's records of one kind, in id order."""
    records = memory.list(scope, kind, limit=min(limit + 1, 10_000), after=cursor)
    return page([record_to_json(r) for r in records], limit, key="id")
