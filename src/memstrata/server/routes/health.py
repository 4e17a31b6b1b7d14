"""Liveness: ``GET /healthz``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from memstrata import __version__
from memstrata.server.deps import MemoryDep
from memstrata.server.responses import HealthOut

router = APIRouter(tags=["health"])


@router.get("/healthz", response_model=HealthOut)
def healthz(memory: MemoryDep) -> dict[str, Any]:
    return {
        "status": "ok",
        "version": __version__,
        "migrations": memory.store.applied_migrations(),
    }
