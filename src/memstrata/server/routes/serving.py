"""Serving an agent: ``wake-up`` (L0 and L1), ``recall`` (L2), ``context`` (for a query)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from memstrata.server.deps import READER, MemoryDep, ScopeDep
from memstrata.server.schemas.serving import (
    ContextIn,
    ContextOut,
    RecallIn,
    RecallOut,
    WakeUpIn,
    WakeUpOut,
)

router = APIRouter(tags=["serving"])


@router.get("/v1/wake-up", dependencies=[READER])
def wake_up(params: Annotated[WakeUpIn, Query()], memory: MemoryDep, scope: ScopeDep) -> WakeUpOut:
    """The ``<memory>`` block to start a conversation with: identity and essentials."""
    return WakeUpOut.of(memory.wake_up(scope, budget=params.budget))


@router.get("/v1/recall", dependencies=[READER])
def recall(params: Annotated[RecallIn, Query()], memory: MemoryDep, scope: ScopeDep) -> RecallOut:
    """What memory holds about a topic: its documents and facts."""
    return RecallOut.of(memory.recall(params.topic, scope, budget=params.budget))


@router.get("/v1/context", dependencies=[READER])
def context(
    params: Annotated[ContextIn, Query()], memory: MemoryDep, scope: ScopeDep
) -> ContextOut:
    """The ``<memory>`` block for a query, routed and assembled by priority; with
    ``explain``, why each item is in and what was cut."""
    result = memory.context(params.q, scope, budget=params.budget)
    return ContextOut.of(result, explain=params.explain)
