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
