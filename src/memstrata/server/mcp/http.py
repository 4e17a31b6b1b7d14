"""MCP over streamable HTTP, at ``/mcp`` of the HTTP server: same process, same memory.

:func:`mount_mcp` adds the route and makes the app's lifespan run the SDK's session manager.
The transport is stateless (every request stands alone), so any worker process can answer
any request. Each request's scope comes from a :class:`~.server.ScopeResolver` given the
request: checked once before the request reaches the SDK (a request with no scope is
answered in the one error shape with the status of its error class, like any route) and
again, with the tool's need to write, for each call. A request's body is read by
:func:`~.server.read_message`, as a line on stdio is: what it refuses is answered 400 with
the JSON-RPC error stdio answers (the body's size is bounded for every route, by the
``max_request_bytes`` setting).

By default the scope is the user the request's API key allows (:mod:`.access`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import TYPE_CHECKING, Any, Final

import anyio.to_thread
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message, Receive, Send
from starlette.types import Scope as AsgiScope

from memstrata.errors import ForbiddenError, MemstrataError
from memstrata.server.auth import local_refusal
from memstrata.server.errors import error_response, status_for
from memstrata.server.mcp.server import (
    MessageRefused,
    ScopeResolver,
    create_mcp_server,
    read_message,
)

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memstrata.api import Memory

#: where the MCP endpoint is served
MCP_PATH: Final = "/mcp"
#: host names a server bound to the loopback answers MCP requests for (DNS rebinding guard)
_LOOPBACK: Final = ("127.0.0.1", "localhost", "::1")


class _Endpoint:
    """The SDK's endpoint, behind a first check that the request has a scope.

    The SDK's session manager runs once only, so each run of the app's lifespan makes its
    own (an app can be started again, or twice at once by test clients); a request is served
    by the latest one still running."""

    def __init__(
        self,
        make: Callable[[], StreamableHTTPSessionManager],
        resolve: ScopeResolver,
        status_for: Callable[[MemstrataError], int],
        *,
        loopback: bool,
    ) -> None:
        self.make = make
        self.resolve = resolve
        self.status_for = status_for
        self.loopback = loopback
        self.running: list[StreamableHTTPSessionManager] = []

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        manager = self.make()
        async with manager.run():
            self.running.append(manager)
            try:
                yield
            finally:
                self.running.remove(manager)

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            if self.loopback:  # the SDK checks too, but answers outside the one shape
                refusal = local_refusal(scope.get("headers", ()), "MCP on the loopback")
                if refusal is not None:
                    raise ForbiddenError(refusal)
            await anyio.to_thread.run_sync(lambda: self.resolve(request, write=False))
        except MemstrataError as exc:
            response = error_response(self.status_for(exc), type(exc).__name__, str(exc))
            await response(scope, receive, send)
            return
        if not self.running:
            response = error_response(
                503, "InternalError", "the MCP endpoint is not running (the app was not started)"
            )
            await response(scope, receive, send)
            return
        if request.method == "POST":
            body = await request.body()
            try:
                read_message(body)
            except MessageRefused as refused:
                answer = refused.answer().model_dump_json(by_alias=True, exclude_unset=True)
                await Response(answer, 400, media_type="application/json")(scope, receive, send)
                return
            receive = _replay(body, receive)
        await self.running[-1].handle_request(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the body already read, then what the client sends next (its
    disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _security(host: str) -> TransportSecuritySettings | None:
    """A server bound to the loopback refuses requests whose Host or Origin names another
    site (a web page rebinding its DNS name to 127.0.0.1)."""
    if host.strip("[]") not in _LOOPBACK:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1", "127.0.0.1:*", "localhost", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def mount_mcp(
    app: FastAPI,
    memory: Memory,
    resolve: ScopeResolver | None = None,
    *,
    host: str | None = None,
) -> None:
    """Serve MCP over streamable HTTP at :data:`MCP_PATH` of ``app``, over ``memory``, every
    call in the scope ``resolve`` gives for its request (default: :func:`.access.key_scope`,
    the user from what the request's API key allows). ``host`` is the address the server
    binds (default: the ``host`` setting). The app's lifespan runs the session manager."""
    from memstrata.server.mcp.access import key_scope

    resolve = key_scope if resolve is None else resolve
    if host is None:
        host = memory.settings.host if memory.settings is not None else "127.0.0.1"
    server = create_mcp_server(memory, resolve)
    security = _security(host)

    def make() -> StreamableHTTPSessionManager:
        return StreamableHTTPSessionManager(
            app=server, stateless=True, json_response=True, security_settings=security
        )

    endpoint = _Endpoint(make, resolve, status_for, loopback=security is not None)
    app.router.routes.append(Route(MCP_PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    outer: Callable[[Any], AbstractAsyncContextManager[Any]] = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(asgi_app: Any) -> AsyncIterator[Any]:
        async with endpoint.run(), outer(asgi_app) as state:
            yield state

    app.router.lifespan_context = lifespan
