"""The HTTP API's routes, one router per family; :func:`memstrata.server.http.create_app`
includes them all."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata.server.routes import documents, erasure, health, identity, records, search, stats

#: every router, in the order the OpenAPI document lists them
ROUTERS: tuple[APIRouter, ...] = (
    health.router,
    records.router,
    search.router,
    documents.router,
    identity.router,
    erasure.router,
    stats.router,
)
