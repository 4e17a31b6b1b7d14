"""The OpenAI-compatible memory proxy: chat completions with the user's memory in them.

``POST /v1/chat/completions`` finds the memory user (the header ``user_header``, else the
body's ``user`` field; with API keys, a key bound to one user needs neither and a user outside
the key's tenant is 403, as on the main server), puts the user's memory for the last user
message (:meth:`memstrata.api.Memory.context`: budgeted, escaped) at the head of the system
message, forwards the request to the upstream, and relays the answer byte for byte, streamed
(server-sent events, ``[DONE]`` included) or not. The user's message and the assembled answer
are then stored as turns of surface ``proxy`` in a worker thread, after the last byte has
gone: a failure to store is logged, never seen by the client. The user's message is stored
under the name the memory knows the user by (:func:`user_speaker`), the answer under the
assistant's. ``GET /v1/models`` is passed through.

A request is checked whole before anything is read from it, stored or sent: a body the main
API would refuse (text that is not valid Unicode, such as a lone surrogate, a number that is
not finite, objects and arrays nested past
:data:`memstrata.server.schemas.common.MAX_DEPTH`, bytes that are not UTF-8) or a query string
that is not UTF-8 text is 422 in the one error shape, by the same checks
(:func:`memstrata.server.schemas.common.check_json_values`,
:class:`memstrata.server.limits.QueryText`).

The upstream's own errors come back with their status and body; an upstream that cannot be
reached is 502 ``UpstreamError`` in the one error shape. The upstream's key is the setting
``proxy.upstream_api_key``; without it, in local mode, the client's ``Authorization`` goes
through (with API keys that header carries the memstrata key, which never leaves).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio
import httpx2 as httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from pydantic import SecretStr
from starlette.concurrency import run_in_threadpool

from memstrata import __version__
from memstrata.api.capture import MAX_LABEL_CHARS
from memstrata.errors import (
    ForbiddenError,
    InvalidInputError,
    MemstrataError,
    UpstreamError,
)
from memstrata.model import EpisodeFilter, KeyRole, Role, Scope
from memstrata.server.auth import AuthMiddleware, AuthPolicy, KeyAuth, Principal, tenant_user
from memstrata.server.errors import install_error_handlers, status_for
from memstrata.server.limits import BodySizeLimit, QueryText
from memstrata.server.proxy_messages import AnswerCollector, last_user_text, with_memory
from memstrata.server.schemas.common import MAX_DEPTH, check_json_values
from memstrata.settings import DEFAULT_MAX_REQUEST_BYTES, ProxySettings

if TYPE_CHECKING:
    from memstrata.api import Memory
    from memstrata.settings import Settings

log = logging.getLogger(__name__)

#: request headers passed to the upstream as they came (auth is decided on its own)
FORWARDED_HEADERS: Final = frozenset(
    {"accept", "content-type", "openai-organization", "openai-project", "openai-beta"}
)
#: response headers that belong to one connection, never relayed
HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "content-encoding",
    }
)
#: the most bytes of an answer kept for capture (the client gets every byte regardless)
CAPTURE_LIMIT: Final = 1024 * 1024
#: the surface captured exchanges are stored under
SURFACE: Final = "proxy"
#: the speaker the upstream model's answers are stored under
ASSISTANT: Final = Role.ASSISTANT.value
#: speaker names that name a role, not a person
_ROLE_NAMES: Final = frozenset(role.value for role in Role)


def user_speaker(memory: Memory, scope: Scope) -> str:
    """The speaker ``scope``'s user's turns are stored under: the name the memory knows the
    user by. Of the speaker the ``user_speaker`` setting names, the ``name`` of the user's
    profile and the user id, the first that already speaks in the user's memory (so a name
    learned later does not split one person into two speakers); when none does yet, the
    profile's name, else the user id."""
    user = Scope(scope.user)
    settings = memory.settings
    named = settings.user_speaker if settings is not None else None
    slot = memory.profile(user).fields.get("name")
    known = _person_name(slot.value) if slot is not None else None
    for candidate in dict.fromkeys((_person_name(named), known, _person_name(scope.user))):
        if candidate is not None and memory.list(
            user, "episode", episode_filter=EpisodeFilter(speaker=candidate), limit=1
        ):
            return candidate
    return known or scope.user


def _person_name(value: str | None) -> str | None:
    """``value`` as a speaker's name, or None when it names no one (empty, a role's name,
    longer than a speaker name may be)."""
    name = (value or "").strip()
    if not name or name.casefold() in _ROLE_NAMES or len(name) > MAX_LABEL_CHARS:
        return None
    return name


@dataclass
class Captures:
    """Exchanges being stored, one worker thread at a time, after their answers went out:
    the user's message under :func:`user_speaker`, the answer under :data:`ASSISTANT`."""

    memory: Memory
    _pool: ThreadPoolExecutor = field(
        default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="memstrata-capture")
    )
    _pending: set[Future[None]] = field(default_factory=set)

    def submit(self, scope: Scope, question: str, answer: str, *, complete: bool) -> None:
        try:
            future = self._pool.submit(self._store, scope, question, answer, complete)
        except RuntimeError:  # the proxy is stopping: the answer went out all the same
            log.warning("the proxy is stopping; an exchange of user %r is not stored", scope.user)
            return
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)

    def _store(self, scope: Scope, question: str, answer: str, complete: bool) -> None:
        if not question.strip() and not answer.strip():
            return
        try:
            turns: list[dict[str, Any]] = []
            if question.strip():
                speaker = user_speaker(self.memory, scope)
                turns.append({"role": "user", "speaker": speaker, "text": question})
            if answer.strip():
                meta = {} if complete else {"interrupted": True}
                turns.append(
                    {"role": "assistant", "speaker": ASSISTANT, "text": answer, "metadata": meta}
                )
            self.memory.remember(turns, scope, surface=SURFACE)
        except Exception:  # capture never breaks or slows the answer: logged, not raised
            log.warning("could not capture an exchange of user %r", scope.user, exc_info=True)

    def drain(self, timeout_s: float | None = None) -> None:
        """Wait until every exchange submitted so far is stored (or failed and logged)."""
        for future in list(self._pending):
            future.result(timeout_s)

    def close(self) -> None:
        self._pool.shutdown(wait=True)


@dataclass
class Upstream:
    """Where requests go, how they authenticate there, and the one client that sends them
    (its connections kept alive; made on first use in the serving event loop, since making
    one costs a TLS context, and closed when the app stops)."""

    base_url: str
    api_key: SecretStr | None
    timeout_s: float
    transport: httpx.AsyncBaseTransport | None = None
    _client: httpx.AsyncClient | None = None
    _loop: asyncio.AbstractEventLoop | None = None

    def client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = httpx.AsyncClient(
                timeout=httpx.Timeout(self.timeout_s, connect=min(self.timeout_s, 10.0)),
                transport=self.transport,
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path

    def headers(self, request: Request, *, keyed: bool) -> dict[str, str]:
        out = {k: v for k, v in request.headers.items() if k.lower() in FORWARDED_HEADERS}
        out["accept-encoding"] = "identity"  # the bytes relayed are the bytes parsed
        if self.api_key is not None:
            out["authorization"] = f"Bearer {self.api_key.get_secret_value()}"
        elif not keyed and "authorization" in request.headers:
            out["authorization"] = request.headers["authorization"]
        return out


def relayed_headers(headers: httpx.Headers) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k.lower() not in HOP_BY_HOP}


def _caller(request: Request, role: KeyRole) -> Principal:
    from memstrata.server.auth import principal

    caller = principal(request)
    if not caller.role.allows(role):
        raise ForbiddenError(
            f"this needs a {role.value} key; {caller.who} is a {caller.role.value} key"
        )
    return caller


def _refused(reason: str) -> RequestValidationError:
    """A body refused as the main API refuses it: the same words, details and shape."""
    return RequestValidationError(
        [{"loc": ("body",), "msg": f"Value error, {reason}", "type": "value_error"}]
    )


def _checked_json(raw: bytes) -> Any:
    """``raw`` as JSON, checked whole as every body of the main API is
    (:func:`memstrata.server.schemas.common.check_json_values`); refused with 422 otherwise."""
    try:
        body = json.loads(raw)
    except RecursionError:  # deeper than the reader goes, so far deeper than the bound
        raise _refused(f"objects and arrays nest deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"the request body is not JSON: {exc}") from None
    try:
        return check_json_values(body)
    except ValueError as exc:
        raise _refused(str(exc)) from None


async def _json_body(request: Request) -> dict[str, Any]:
    body = _checked_json(await request.body())
    if not isinstance(body, dict):
        raise InvalidInputError("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidInputError("'messages' must be a non-empty list of chat messages")
    if not all(isinstance(m, dict) for m in messages):
        raise InvalidInputError("every message must be a JSON object")
    return body


def _scope(
    request: Request, body: Mapping[str, Any], caller: Principal, cfg: ProxySettings
) -> Scope:
    named = request.headers.get(cfg.user_header)
    if named is None:
        value = body.get("user")
        if value is not None and not isinstance(value, str):
            raise InvalidInputError("'user' must be a string")
        named = value
    thread = request.headers.get(cfg.thread_header)
    try:
        return Scope(tenant_user(caller, named or None), thread or None)
    except InvalidInputError as exc:
        raise InvalidInputError(
            f"{exc} (the memory user is named by the {cfg.user_header} header or the body's "
            f"'user' field, the thread by the {cfg.thread_header} header)"
        ) from None


def _memory_block(memory: Memory, query: str, scope: Scope, budget: int) -> str:
    """The user's memory for ``query``, or '' (nothing to serve, or the memory failed: the
    answer goes on without it, and the failure is logged)."""
    if not query.strip():
        return ""
    limit = memory.max_turn_chars
    try:
        return memory.context(query[-limit:], scope, budget=budget).text
    except MemstrataError:
        log.warning("no memory for user %r: the context failed", scope.user, exc_info=True)
        return ""


def check_upstream(url: str | None) -> str:
    """``url`` when it can be an upstream (an http or https base URL), else why not."""
    if not url:
        raise InvalidInputError(
            "the proxy needs an upstream: --upstream URL (or MEMSTRATA_PROXY__UPSTREAM)"
        )
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidInputError(
            f"the upstream must be an http(s) base URL such as http://127.0.0.1:11434/v1, "
            f"not {url!r}"
        )
    return url


def create_proxy_app(
    memory: Memory,
    *,
    auth: AuthPolicy,
    config: ProxySettings,
    max_request_bytes: int | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
) -> FastAPI:
    """The proxy over ``memory``, forwarding to ``config.upstream``; ``transport`` replaces
    the network (tests). ``app.state.captures`` holds the exchanges being stored."""
    upstream = Upstream(
        check_upstream(config.upstream), config.upstream_api_key, config.timeout_s, transport
    )
    keyed = isinstance(auth, KeyAuth)
    captures = Captures(memory)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await upstream.aclose()
        await asyncio.to_thread(captures.close)  # exchanges in hand are stored before exit

    app = FastAPI(
        title="memstrata proxy",
        version=__version__,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
        lifespan=lifespan,
    )
    app.state.memory = memory
    app.state.captures = captures
    install_error_handlers(app, status_for)
    if max_request_bytes is None:
        settings = memory.settings
        max_request_bytes = (
            settings.max_request_bytes if settings is not None else DEFAULT_MAX_REQUEST_BYTES
        )
    app.add_middleware(QueryText)  # no query text that is not UTF-8 reaches a route
    app.add_middleware(BodySizeLimit, max_bytes=max_request_bytes)
    app.add_middleware(AuthMiddleware, policy=auth, status_for=status_for)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    async def models(request: Request) -> Response:
        _caller(request, KeyRole.READER)
        try:
            answer = await upstream.client().get(
                upstream.url("/models"), headers=upstream.headers(request, keyed=keyed)
            )
        except (httpx.HTTPError, OSError) as exc:
            raise _unreachable(upstream, exc) from exc
        return Response(answer.content, answer.status_code, headers=relayed_headers(answer.headers))

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        caller = _caller(request, KeyRole.WRITER if config.capture else KeyRole.READER)
        body = await _json_body(request)
        scope = _scope(request, body, caller, config)
        question = last_user_text(body["messages"])
        block = await run_in_threadpool(_memory_block, memory, question, scope, config.budget)
        if block:
            body["messages"] = with_memory(body["messages"], block)
        return await _forward(request, body, scope, question, keyed=keyed)

    async def _forward(
        request: Request, body: dict[str, Any], scope: Scope, question: str, *, keyed: bool
    ) -> Response:
        client = upstream.client()
        sent = client.build_request(
            "POST",
            upstream.url("/chat/completions"),
            json=body,
            headers=upstream.headers(request, keyed=keyed),
        )
        try:
            answer = await client.send(sent, stream=True)
        except (httpx.HTTPError, OSError) as exc:
            raise _unreachable(upstream, exc) from exc
        headers = relayed_headers(answer.headers)
        if answer.status_code >= 400:  # the upstream's error, as it gave it; nothing captured
            try:
                content = await answer.aread()
            except httpx.HTTPError as exc:
                raise _unreachable(upstream, exc) from exc
            finally:
                await answer.aclose()
            return Response(content, answer.status_code, headers=headers)
        streaming = "text/event-stream" in answer.headers.get("content-type", "")
        collector = AnswerCollector(streaming=streaming, limit=CAPTURE_LIMIT)

        async def relay() -> AsyncIterator[bytes]:
            complete = False
            try:
                async for chunk in answer.aiter_raw():
                    collector.feed(chunk)
                    yield chunk
                complete = True
            except httpx.HTTPError as exc:  # the upstream broke off: the client sees the end
                log.warning("the upstream broke off an answer: %s", exc)
            finally:
                with anyio.CancelScope(shield=True):  # a client gone still closes the upstream
                    await answer.aclose()
                if config.capture:
                    captures.submit(scope, question, collector.text(), complete=complete)

        return StreamingResponse(relay(), answer.status_code, headers=headers)

    return app


def _unreachable(upstream: Upstream, exc: BaseException) -> UpstreamError:
    reason = type(exc).__name__ + (f": {exc}" if str(exc) else "")
    return UpstreamError(f"the upstream {upstream.base_url} cannot be reached ({reason})")


def serve_proxy(settings: Settings, config: ProxySettings) -> None:
    """Open the memory and run the proxy on ``settings.host``:``config.port`` until stopped:
    the background indexer, and the debounce queue that curates a thread once it goes quiet
    (``auto_curate``), run beside it."""
    import uvicorn

    from memstrata.api import Memory
    from memstrata.server.app import auth_policy
    from memstrata.server.auth import check_local_host
    from memstrata.server.requestlog import configure_server_logging
    from memstrata.server.run import listen

    if settings.auth == "local":
        check_local_host(settings.host)
    sock = listen(settings.host, config.port)  # a busy port fails before anything loads
    configure_server_logging(settings.log_format)
    try:
        memory = Memory.open(settings=settings)
        try:
            app = create_proxy_app(memory, auth=auth_policy(memory, settings), config=config)
            memory.start_indexer()
            if settings.erasure_sweep_s > 0:
                memory.start_erasure_sweep(settings.erasure_sweep_s)
            if settings.auto_curate:
                memory.start_auto_curation(settings.curate_after_s)
            log.warning(
                "memstrata proxy on http://%s:%d/v1, forwarding to %s",
                settings.host,
                config.port,
                config.upstream,
            )
            uvicorn.Server(
                uvicorn.Config(app, log_config=None, log_level="info", access_log=False)
            ).run(sockets=[sock])
        finally:
            memory.close()
    finally:
        sock.close()
