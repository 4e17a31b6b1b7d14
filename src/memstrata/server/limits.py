"""A bound on request bodies, enforced before a body is read into memory.

A declared ``Content-Length`` over the limit is refused at once; a body without one (chunked)
is counted as it arrives and refused as soon as it passes the limit. Either way the answer is
413 in the one error shape and the route never runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from memstrata.server.errors import error_response

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodySizeLimit:
    """ASGI middleware: a request body of more than ``max_bytes`` is answered with 413."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(scope, receive, send, declared, more=declared > 0)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                await self.app(scope, _replay([message], receive), send)
                return
            chunk = bytes(message.get("body", b""))
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(
                    scope, receive, send, size, more=bool(message.get("more_body", False))
                )
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([body], receive), send)

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, size: int, *, more: bool
    ) -> None:
        # read (and drop) what the client is still sending, up to a bound, before answering:
        # a socket closed with unread data resets the connection, and the client may lose the
        # answer; past the bound the connection is closed all the same
        drained = 0
        while more and drained <= _DRAIN_FACTOR * self.max_bytes:
            message = await receive()
            if message["type"] != "http.request":
                break
            drained += len(message.get("body", b""))
            more = bool(message.get("more_body", False))
        response = error_response(
            413,
            "TooLargeError",
            f"the request body is over the limit of {self.max_bytes} bytes "
            f"(at least {size}); the setting max_request_bytes sets the limit",
        )
        response.headers["connection"] = "close"
        await response(scope, receive, send)


#: how much of a refused body is read and dropped, in multiples of the limit
_DRAIN_FACTOR: Final = 8


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(messages: list[Message], receive: Receive) -> Receive:
    """A receive that gives ``messages`` first, then what the client sends next."""
    pending = list(messages)

    async def replayed() -> Message:
        if pending:
            return pending.pop(0)
        return await receive()

    return replayed


class QueryText:
    """ASGI middleware: a query string that does not decode as UTF-8 (an invalid byte, an
    encoded lone surrogate such as ``%ED%A0%80``) is answered with 422 in the one error
    shape, as a body holding one is: the framework would decode it with replacement
    characters, and search for "���" or answer for a user of that name."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            bad = _bad_parameter(bytes(scope.get("query_string", b"")))
            if bad is not None:
                response = error_response(
                    422,
                    "InvalidInputError",
                    f"the query parameter {bad!r} is not valid UTF-8 text (an invalid byte "
                    "or a lone surrogate); nothing was done",
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _bad_parameter(query: bytes) -> str | None:
    """The name of the first parameter of ``query`` whose name or value is no UTF-8 text
    once percent-decoded (its name as far as it decodes), or None."""
    from urllib.parse import unquote_to_bytes

    for pair in query.split(b"&"):
        if not pair:
            continue
        name, _, value = pair.partition(b"=")
        for part in (name, value):
            try:
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
            except UnicodeDecodeError:
                return unquote_to_bytes(name).decode("utf-8", "replace")[:60]
    return None
