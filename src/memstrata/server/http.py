"""The HTTP app: the routers of :mod:`memstrata.server.routes` over one
:class:`memstrata.api.Memory`.

Each route parses, calls the facade, encodes the result; it gets the memory and its scope
from the dependencies of :mod:`memstrata.server.deps`. Errors of the exception tree map to
status codes in one table, and every error answers in one shape (both in
:mod:`memstrata.server.errors`); request bodies are bounded in size and in the time they
take to arrive (:mod:`memstrata.server.limits`) and unknown or repeated query parameters are
refused.
"""

from __future__ import annotations

from typing import Any, Final

from fastapi import Depends, FastAPI

from memstrata import __version__
from memstrata.api import Memory
from memstrata.server.auth import AuthMiddleware, AuthPolicy
from memstrata.server.deps import known_query_only
from memstrata.server.errors import install_error_handlers, status_for
from memstrata.server.limits import BodySizeLimit, QueryText
from memstrata.server.operations import install_operations
from memstrata.server.routes import ROUTERS
from memstrata.server.routes.web import install_web
from memstrata.server.schemas.common import ErrorOut
from memstrata.settings import DEFAULT_MAX_REQUEST_BYTES, DEFAULT_REQUEST_BODY_TIMEOUT_S

#: every route documents the one error shape
ERROR_RESPONSES: Final[dict[int | str, dict[str, Any]]] = {
    "4XX": {"model": ErrorOut, "description": "the request cannot be served as sent"},
    "5XX": {"model": ErrorOut, "description": "the server or its store failed"},
}


def create_app(
    memory: Memory,
    *,
    auth: AuthPolicy,
    max_request_bytes: int | None = None,
    request_body_timeout_s: float | None = None,
) -> FastAPI:
    """The app over ``memory``, behind ``auth`` (API keys, or local mode: see
    :mod:`memstrata.server.auth`); request bodies over ``max_request_bytes`` are refused with
    413, and those that take more than ``request_body_timeout_s`` to arrive with 408 (each by
    default the setting of that name)."""
    app = FastAPI(
        title="memstrata",
        version=__version__,
        description="Layered, auditable long-term memory for LLM agents. Every 4xx and 5xx "
        "answer has the body ErrorOut.",
        responses=ERROR_RESPONSES,
        dependencies=[Depends(known_query_only)],
        docs_url=None,  # /docs and /redoc are served with local assets (operations)
        redoc_url=None,
    )
    app.state.memory = memory
    install_error_handlers(app, status_for)
    settings = memory.settings
    if max_request_bytes is None:
        max_request_bytes = (
            settings.max_request_bytes if settings is not None else DEFAULT_MAX_REQUEST_BYTES
        )
    if request_body_timeout_s is None:
        request_body_timeout_s = (
            settings.request_body_timeout_s
            if settings is not None
            else DEFAULT_REQUEST_BODY_TIMEOUT_S
        )
    app.add_middleware(QueryText)  # no query text that is not UTF-8 reaches a route
    app.add_middleware(
        BodySizeLimit, max_bytes=max_request_bytes, body_timeout_s=request_body_timeout_s
    )
    # outermost: who is calling is known before anything reads the request
    app.add_middleware(AuthMiddleware, policy=auth, status_for=status_for)
    for router in ROUTERS:
        app.include_router(router)
    install_operations(app, memory)
    install_web(app)  # the workbench page at /, on the API's origin
    from memstrata.server.mcp.http import mount_mcp

    mount_mcp(app, memory)  # MCP over streamable HTTP at /mcp, on the same memory
    return app
