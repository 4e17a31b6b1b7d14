"""The HTTP API's routes, one router per family; :func:`memstrata.server.http.create_app`
includes them all."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata.server.routes import (
    audit,
    browse,
    capture,
    documents,
    erasure,
    export,
    health,
    identity,
    keys,
    records,
    runs,
    search,
    serving,
    stats,
)

#: every router, in the order the OpenAPI document lists them
ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    capture.router,
    records.router,
    search.router,
    serving.router,
    documents.router,
    identity.router,
    runs.router,
    erasure.router,
    export.router,
    stats.router,
    keys.router,
    browse.router,
    audit.router,
)
