"""HTTP routes: each one parses, calls :class:`memstrata.api.Memory`, encodes the result.

Errors of the exception tree map to status codes in one table (:data:`STATUS_CODES`); every
error answers in one shape (:mod:`memstrata.server.errors`), request bodies are bounded
(:mod:`memstrata.server.limits`) and unknown query parameters are refused.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Final, Literal

from fastapi import Depends, FastAPI, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute

from memstrata import __version__
from memstrata.api import Memory
from memstrata.codec import (
    hit_to_json,
    item_version_to_json,
    record_to_json,
    search_filter,
    stats_to_json,
)
from memstrata.document.format import serialize
from memstrata.document.ops import operation_from_json, operation_to_json
from memstrata.document.service import DocPreview
from memstrata.errors import (
    BusyError,
    ConfigError,
    ConflictError,
    InvalidInputError,
    MemstrataError,
    NotFoundError,
    StoreError,
    TooLargeError,
)
from memstrata.model import Layer, Role, Scope, Turn
from memstrata.server.errors import install_error_handlers
from memstrata.server.limits import BodySizeLimit
from memstrata.server.schemas import (
    DocChangeIn,
    ErrorOut,
    FactIn,
    IdentityIn,
    IdentityOut,
    IsoTime,
    RememberIn,
    ScopeIn,
    UpdateIn,
)
from memstrata.settings import DEFAULT_MAX_REQUEST_BYTES

STATUS_CODES: Final[tuple[tuple[type[MemstrataError], int], ...]] = (
    (TooLargeError, 413),
    (InvalidInputError, 422),
    (NotFoundError, 404),
    (ConflictError, 409),
    (BusyError, 409),
    (ConfigError, 500),
    (StoreError, 503),
    (MemstrataError, 500),
)


def status_for(exc: MemstrataError) -> int:
    return next(code for cls, code in STATUS_CODES if isinstance(exc, cls))


def _scope(scope: ScopeIn) -> Scope:
    return Scope(scope.user, scope.thread, scope.agent)


def _query_names(dependant: Dependant) -> set[str]:
    names = {p.alias for p in dependant.query_params}
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def known_query_only(request: Request) -> None:
    """Refuse query parameters the route does not take (a misspelt filter is not ignored)."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    allowed = _query_names(route.dependant)
    unknown = sorted(set(request.query_params) - allowed)
    if unknown:
        raise InvalidInputError(
            f"unknown query parameter(s) {', '.join(map(repr, unknown))}; "
            f"this route takes {', '.join(sorted(allowed)) or 'none'}"
        )


#: every route documents the one error shape
ERROR_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    "4XX": {"model": ErrorOut, "description": "the request cannot be served as sent"},
    "5XX": {"model": ErrorOut, "description": "the server or its store failed"},
}


def create_app(memory: Memory, *, max_request_bytes: int | None = None) -> FastAPI:
    """The app over ``memory``; request bodies over ``max_request_bytes`` (default: the
    ``max_request_bytes`` setting) are refused with 413."""
    app = FastAPI(
        title="memstrata",
        version=__version__,
        description="Layered, auditable long-term memory for LLM agents. Every 4xx and 5xx "
        "answer has the body ErrorOut.",
        responses=ERROR_RESPONSES,
        dependencies=[Depends(known_query_only)],
    )
    install_error_handlers(app, status_for)
    if max_request_bytes is None:
        settings = memory.settings
        max_request_bytes = (
            settings.max_request_bytes if settings is not None else DEFAULT_MAX_REQUEST_BYTES
        )
    app.add_middleware(BodySizeLimit, max_bytes=max_request_bytes)

    def scope_q(user: str, thread: str | None, agent: str | None) -> Scope:
        return Scope(user, thread, agent)

    @app.get("/healthz")
    def healthz() -> dict[str, Any]:
        return {
            "status": "ok",
            "version": __version__,
            "migrations": memory.store.applied_migrations(),
        }

    @app.post("/v1/remember", status_code=201)
    def remember(body: RememberIn) -> list[dict[str, Any]]:
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
            turns, _scope(body.scope), surface=body.surface, session_id=body.session_id
        )
        return [record_to_json(e) for e in episodes]

    @app.post("/v1/facts", status_code=201)
    def add_fact(body: FactIn) -> dict[str, Any]:
        fact = memory.add_fact(
            body.text,
            _scope(body.scope),
            category=body.category,
            confidence=body.confidence,
            importance=body.importance,
            topic=body.topic,
            sources=body.sources,
        )
        return record_to_json(fact)

    @app.get("/v1/items/{item_id}")
    def get(
        item_id: str, user: str, thread: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        return record_to_json(memory.get(item_id, scope_q(user, thread, agent)))

    @app.patch("/v1/items/{item_id}")
    def update(
        item_id: str, body: UpdateIn, user: str, thread: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        record = memory.update(
            item_id,
            scope_q(user, thread, agent),
            expected_version=body.expected_version,
            **body.changes.model_dump(exclude_unset=True),
        )
        return record_to_json(record)

    @app.delete("/v1/items/{item_id}")
    def delete(
        item_id: str,
        user: str,
        thread: str | None = None,
        agent: str | None = None,
        reason: str = "user-request",
    ) -> dict[str, Any]:
        report = memory.delete(item_id, scope_q(user, thread, agent), reason=reason)
        return report.to_json()

    @app.post("/v1/items/{item_id}/forget")
    def forget(
        item_id: str, user: str, thread: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        return memory.forget(item_id, scope_q(user, thread, agent)).to_json()

    @app.delete("/v1/scopes")
    def forget_scope(
        user: str, thread: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        return memory.forget_scope(scope_q(user, thread, agent)).to_json()

    @app.get("/v1/items/{item_id}/history")
    def history(
        item_id: str, user: str, thread: str | None = None, agent: str | None = None
    ) -> list[dict[str, Any]]:
        return [
            item_version_to_json(e) for e in memory.history(item_id, scope_q(user, thread, agent))
        ]

    @app.get("/v1/list")
    def list_(
        user: str,
        thread: str | None = None,
        agent: str | None = None,
        kind: Literal["episode", "fact", "document"] = "episode",
        limit: int = Query(100, ge=1, le=10_000),
        after: str | None = None,
    ) -> list[dict[str, Any]]:
        records = memory.list(scope_q(user, thread, agent), kind, limit=limit, after=after)
        return [record_to_json(r) for r in records]

    @app.get("/v1/search")
    def search(
        q: str,
        user: str,
        thread: str | None = None,
        agent: str | None = None,
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
        hits = memory.search(
            q,
            scope_q(user, thread, agent),
            k=k,
            granularity=granularity,
            filters=filters,
            rerank=rerank,
        )
        return [hit_to_json(h) for h in hits]

    def doc_change(body: DocChangeIn) -> Any:
        if (body.markdown is None) == (body.operations is None):
            raise InvalidInputError("give either markdown or operations")
        if body.markdown is not None:
            return body.markdown
        return [
            operation_from_json(op.model_dump(exclude_none=True), i)
            for i, op in enumerate(body.operations or [])
        ]

    def preview_json(preview: DocPreview) -> dict[str, Any]:
        return {
            "key": preview.key,
            "base_version": preview.base_version,
            "operations": [operation_to_json(op) for op in preview.operations],
            "diff": preview.diff,
            "after": preview.after,
        }

    @app.get("/v1/docs/{key}")
    def doc_show(
        key: str, user: str, thread: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        markdown, version = memory.doc_markdown(key, scope_q(user, thread, agent))
        return {"key": key, "version": version, "markdown": markdown}

    @app.post("/v1/docs/{key}/diff")
    def doc_diff(
        key: str, body: DocChangeIn, user: str, thread: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        preview = memory.preview_doc(
            key,
            scope_q(user, thread, agent),
            doc_change(body),
            expected_version=body.expected_version,
        )
        return preview_json(preview)

    @app.post("/v1/docs/{key}/apply")
    def doc_apply(
        key: str, body: DocChangeIn, user: str, thread: str | None = None, agent: str | None = None
    ) -> dict[str, Any]:
        if body.expected_version is None:
            raise InvalidInputError("apply needs expected_version (compare-and-swap)")
        scope = scope_q(user, thread, agent)
        preview = memory.preview_doc(
            key, scope, doc_change(body), expected_version=body.expected_version
        )
        applied, version = memory.apply_doc(
            key, scope, preview.operations, expected_version=body.expected_version
        )
        stored = replace(preview, after=serialize(applied))  # as stored: ids, citations
        return {**preview_json(stored), "version": version}

    @app.get("/v1/identity")
    def identity(user: str, thread: str | None = None, agent: str | None = None) -> IdentityOut:
        ident = memory.identity(scope_q(user, thread, agent))
        return IdentityOut(text=ident.text, version=ident.version)

    @app.put("/v1/identity")
    def set_identity(
        body: IdentityIn, user: str, thread: str | None = None, agent: str | None = None
    ) -> IdentityOut:
        ident = memory.set_identity(
            body.text, scope_q(user, thread, agent), expected_version=body.expected_version
        )
        return IdentityOut(text=ident.text, version=ident.version)

    @app.get("/v1/stats")
    def stats(user: str, thread: str | None = None, agent: str | None = None) -> dict[str, Any]:
        return stats_to_json(memory.stats(scope_q(user, thread, agent)))

    return app
