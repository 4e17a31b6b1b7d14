"""Counts: ``GET /v1/stats``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memstrata.codec import stats_to_json
from memstrata.server.deps import READER, MemoryDep, ScopeDep
from memstrata.server.responses import StatsOut

router = APIRouter(tags=["stats"])


@router.get("/v1/stats", dependencies=[READER], response_model=StatsOut)
def stats(memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    """What the scope holds: counts per layer and kind, the time span of its turns, and the
    bytes of its stored text per kind."""
    return {**stats_to_json(memory.stats(scope)), "bytes": memory.sizes(scope)}
