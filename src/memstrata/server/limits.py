"""Bounds on request bodies, enforced before a body is read into memory: their size and the
time they take to arrive.

A declared ``Content-Length`` over the limit is refused at once, before any of the body is
read: a client waiting for ``100 Continue`` never gets it (the server sends one only when the
app first asks for the body), and one already sending gets the answer without the server
waiting for the rest. A body without a declared length (chunked) is counted as it arrives and
refused as soon as it passes the limit. Either way the answer is 413 in the one error shape,
the connection is closed and the route never runs. A body that has not arrived in full
``body_timeout_s`` after the request's headers (a client trickling it, or one that stopped
sending) is answered 408 and its connection closed: no slow client holds the server for
longer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

import anyio

from memstrata.server.errors import ErrorResponse, error_response, too_large_details
from memstrata.settings import DEFAULT_REQUEST_BODY_TIMEOUT_S

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: how much of a refused body is read and dropped after the answer, in multiples of the limit
_DRAIN_FACTOR: Final = 8
#: the longest a refused body is read and dropped after the answer, in seconds
_DRAIN_S: Final = 2.0


class BodySizeLimit:
    """ASGI middleware: a request body of more than ``max_bytes`` is answered with 413, one
    that takes more than ``body_timeout_s`` to arrive with 408."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        body_timeout_s: float = DEFAULT_REQUEST_BODY_TIMEOUT_S,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            # before the first receive: no 100 Continue goes out, no byte of the body is read
            # (a client waiting for one sends nothing; one that did not wait is sending)
            refusal = self._too_large(declared)
            await self._refuse(scope, receive, send, refusal, more=not _waits_for_continue(scope))
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        client_gone: Message | None = None
        with anyio.move_on_after(self.body_timeout_s) as deadline:
            while more:
                message = await receive()
                if message["type"] != "http.request":  # the client went away
                    client_gone = message
                    break
                chunk = bytes(message.get("body", b""))
                size += len(chunk)
                more = bool(message.get("more_body", False))
                if size > self.max_bytes:
                    break
                chunks.append(chunk)
        if deadline.cancelled_caught:
            await self._refuse(scope, receive, send, self._too_slow(size), more=False)
            return
        if client_gone is not None:
            await self.app(scope, _replay([client_gone], receive), send)
            return
        if size > self.max_bytes:
            await self._refuse(scope, receive, send, self._too_large(size), more=more)
            return
        body = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([body], receive), send)

    def _too_large(self, size: int) -> ErrorResponse:
        return error_response(
            413,
            "TooLargeError",
            f"the request body is over the limit of {self.max_bytes} bytes "
            f"(at least {size}); the setting max_request_bytes sets the limit",
            details=[too_large_details(self.max_bytes, size)],
        )

    def _too_slow(self, size: int) -> ErrorResponse:
        return error_response(
            408,
            "RequestTimeoutError",
            f"the request body did not arrive within {self.body_timeout_s:g} s ({size} bytes "
            "came); nothing was done; the setting request_body_timeout_s sets the bound",
        )

    async def _refuse(
        self, scope: Scope, receive: Receive, send: Send, response: ErrorResponse, *, more: bool
    ) -> None:
        """Answer ``response`` now and close the connection. When the client may still be
        sending (``more``), what it sends is read and dropped for a short while, up to a
        bound, once the answer is out: a socket closed with unread data resets the
        connection, and the client may lose the answer."""
        response.headers["connection"] = "close"
        await send(
            {
                "type": "http.response.start",
                "status": response.status_code,
                "headers": response.raw_headers,
            }
        )
        await send({"type": "http.response.body", "body": response.body, "more_body": True})
        if more:
            drained = 0
            with anyio.move_on_after(min(_DRAIN_S, self.body_timeout_s)):
                while more and drained <= _DRAIN_FACTOR * self.max_bytes:
                    message = await receive()
                    if message["type"] != "http.request":
                        break
                    drained += len(message.get("body", b""))
                    more = bool(message.get("more_body", False))
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _waits_for_continue(scope: Scope) -> bool:
    """Whether the client sends its body only once told to (``Expect: 100-continue``)."""
    return any(
        name == b"expect" and value.strip().lower() == b"100-continue"
        for name, value in scope.get("headers", ())
    )


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
