"""Hybrid search: ``GET /v1/search``, a page of hits at a time."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from memstrata.api import Memory
from memstrata.codec import hit_to_json
from memstrata.model import Scope, SearchHit
from memstrata.server.deps import READER, MemoryDep, ScopeDep
from memstrata.server.responses import HitPage, Page
from memstrata.server.schemas import MAX_K, SearchIn

router = APIRouter(tags=["search"])


def search_page(
    memory: Memory, scope: Scope, params: SearchIn
) -> tuple[list[SearchHit], str | None]:
    """The best ``k`` hits after the cursor's, and the cursor of the next page while there
    are more, up to the best 1000 (for the route and the MCP tool alike)."""
    offset = int(params.cursor or 0)
    if offset >= MAX_K:
        return [], None
    wanted = min(offset + params.k, MAX_K)
    hits = memory.search(
        params.q,
        scope,
        k=min(wanted + 1, MAX_K),
        granularity=params.granularity,
        filters=params.filters(),
        rerank=params.rerank,
    )
    return hits[offset:wanted], str(wanted) if len(hits) > wanted else None


@router.get("/v1/search", dependencies=[READER], response_model=HitPage)
def search(
    params: Annotated[SearchIn, Query()], memory: MemoryDep, scope: ScopeDep
) -> Page[dict[str, Any]]:
    """The best ``k`` hits after the cursor's; a next page while there are more, up to the
    best 1000."""
    hits, next_cursor = search_page(memory, scope, params)
    return Page(items=[hit_to_json(h) for h in hits], next_cursor=next_cursor)
