"""Hybrid search: ``GET /v1/search``, a page of hits at a time."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from memstrata.api import Memory
from memstrata.codec import hit_to_json
from memstrata.model import Scope
from memstrata.server.deps import READER, MemoryDep, ScopeDep
from memstrata.server.responses import HitOut, HitPage
from memstrata.server.schemas.search import MAX_K, SearchIn

router = APIRouter(tags=["search"])


def search_page(memory: Memory, scope: Scope, params: SearchIn) -> HitPage:
    """The best ``k`` hits after the cursor's, and the cursor of the next page while there
    are more, up to the best 1000 (for the route and the MCP tool alike)."""
    offset = int(params.cursor or 0)
    if offset >= MAX_K:
        return HitPage(items=[], next_cursor=None, partial=False, pending=0)
    wanted = min(offset + params.k, MAX_K)
    hits = memory.search(
        params.q,
        scope,
        k=min(wanted + 1, MAX_K),
        granularity=params.granularity,
        filters=params.filters(),
        rerank=params.rerank,
        wait=params.wait,
    )
    return HitPage(
        items=[HitOut.model_validate(hit_to_json(h)) for h in hits[offset:wanted]],
        next_cursor=str(wanted) if len(hits) > wanted else None,
        partial=hits.partial,
        pending=hits.pending,
    )


@router.get("/v1/search", dependencies=[READER], response_model=HitPage)
def search(params: Annotated[SearchIn, Query()], memory: MemoryDep, scope: ScopeDep) -> HitPage:
    """The best ``k`` hits after the cursor's; a next page while there are more, up to the
    best 1000. Records still being embedded in the background are ranked by their words,
    and the page says so (``partial``, ``pending``) unless ``wait`` is set."""
    return search_page(memory, scope, params)
