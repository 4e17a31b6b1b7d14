"""The one error shape of the HTTP API, for every 4xx and 5xx.

``{"error": <class>, "message": <text>, "details": [...]}``: ``error`` names a class of the
exception tree (``InvalidInputError``, ``NotFoundError``, ``TooLargeError``...) or, for what
the tree has no class for, ``MethodNotAllowedError``, ``HTTPError`` or ``InternalError``;
``details`` lists each problem of a request that does not match the schema (for a 409
``ConflictError`` the version stored now, for a 413 ``TooLargeError`` the limit and the size
found). A failure the code did not expect is a 500 ``InternalError`` whose message says nothing
of its cause (the server log has the traceback).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from http import HTTPStatus
from typing import Any, Final

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from memstrata.errors import (
    BusyError,
    ConfigError,
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    MemstrataError,
    NotFoundError,
    StoreError,
    TooLargeError,
    UnauthenticatedError,
    UpstreamError,
)

log = logging.getLogger(__name__)

#: the error name of an HTTP condition raised by the framework, by status code
HTTP_ERRORS: Final[Mapping[int, str]] = {
    404: "NotFoundError",
    405: "MethodNotAllowedError",
    413: "TooLargeError",
    422: "InvalidInputError",
}


#: the status of each error of the tree, the first class that matches
STATUS_CODES: Final[tuple[tuple[type[MemstrataError], int], ...]] = (
    (TooLargeError, 413),
    (InvalidInputError, 422),
    (UnauthenticatedError, 401),
    (ForbiddenError, 403),
    (NotFoundError, 404),
    (ConflictError, 409),
    (BusyError, 409),
    (ConfigError, 500),
    (UpstreamError, 502),
    (StoreError, 503),
    (MemstrataError, 500),
)


def status_for(exc: MemstrataError) -> int:
    return next(code for cls, code in STATUS_CODES if isinstance(exc, cls))


class ErrorResponse(JSONResponse):
    """A JSON error body that always encodes: text the client sent that is not valid Unicode
    (a lone surrogate) comes back as ``?`` instead of failing the response."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8", "replace")


def error_response(
    status: int,
    error: str,
    message: str,
    *,
    details: Sequence[Mapping[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
) -> ErrorResponse:
    body: dict[str, Any] = {"error": error, "message": message}
    if details is not None:
        body["details"] = list(details)
    return ErrorResponse(status_code=status, content=body, headers=headers)


def _where(loc: Sequence[Any]) -> str:
    return ".".join(str(part) for part in loc) or "request"


def validation_details(errors: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each problem as location, message and type; never the input itself (it may not even
    encode)."""
    return [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg")), "type": e["type"]}
        for e in errors
    ]


def conflict_details(exc: ConflictError) -> dict[str, Any]:
    """A stale compare-and-swap's details: the item, the version named, the one stored now
    (None: deleted), so a client can show the conflict and re-read."""
    return {
        "type": "conflict",
        "item_id": exc.item_id,
        "expected_version": exc.expected,
        "current_version": exc.actual,
    }


def too_large_details(limit: int, size: int) -> dict[str, Any]:
    """An input over a size limit: the limit and the size found, in the unit the message
    names (characters of a text, bytes of a request body), so a client can rebuild the
    :class:`TooLargeError`."""
    return {"type": "too-large", "limit": limit, "size": size}


def error_details(exc: MemstrataError) -> list[dict[str, Any]] | None:
    """The ``details`` of an error of the tree that carries more than its message."""
    if isinstance(exc, ConflictError):
        return [conflict_details(exc)]
    if isinstance(exc, TooLargeError):
        return [too_large_details(exc.limit, exc.size)]
    return None


def install_error_handlers(app: FastAPI, status_for: Callable[[MemstrataError], int]) -> None:
    """Answer every error of ``app`` in the one shape."""

    @app.exception_handler(MemstrataError)
    async def _memstrata(_: Request, exc: MemstrataError) -> ErrorResponse:
        details = error_details(exc)
        return error_response(status_for(exc), type(exc).__name__, str(exc), details=details)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> ErrorResponse:
        details = validation_details(exc.errors())
        message = "; ".join(f"{_where(d['loc'])}: {d['msg']}" for d in details)
        return error_response(
            422, "InvalidInputError", message or "invalid request", details=details
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> ErrorResponse:
        status = 422 if exc.status_code == 400 else exc.status_code  # a body that won't parse
        error = HTTP_ERRORS.get(status, "InternalError" if status >= 500 else "HTTPError")
        detail = exc.detail if isinstance(exc.detail, str) else None
        message = detail or HTTPStatus(status).phrase
        return error_response(status, error, message, headers=exc.headers)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> ErrorResponse:
        log.error("unexpected failure in %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "InternalError", "internal error; the server log has details")
