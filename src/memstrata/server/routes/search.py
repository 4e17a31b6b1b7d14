"""Hybrid search: ``GET /v1/search``."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query

from memstrata.codec import hit_to_json, search_filter
from memstrata.model import Layer
from memstrata.server.deps import MemoryDep, ScopeDep
from memstrata.server.schemas import IsoTime

router = APIRouter(tags=["search"])


@router.get("/v1/search")
def search(
    q: str,
    memory: MemoryDep,
    scope: ScopeDep,
    k: int = Query(10, ge=1, le=1000),
    granularity: Literal["turn", "session", "fact", "topic"] = "turn",
    speaker: str | None = None,
    session_id: str | None = None,
    since: IsoTime | None = None,
    until: IsoTime | None = None,
    category: str | None = None,
    topic: str | None = None,
    layer: Layer | None = None,
    surface: str | None = None,
    include_archived: bool = False,
    current_only: bool = True,
    rerank: bool = False,
) -> list[dict[str, Any]]:
    filters = search_filter(
        speaker=speaker,
        session_id=session_id,
        surface=surface,
        since=since,
        until=until,
        category=category,
        topic=topic,
        layer=layer,
        include_archived=include_archived,
        current_only=current_only,
    )
    hits = memory.search(q, scope, k=k, granularity=granularity, filters=filters, rerank=rerank)
    return [hit_to_json(h) for h in hits]
