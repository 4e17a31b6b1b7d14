"""Who is calling, and what they may do: API keys by default, local mode only when asked for.

Two policies, chosen by the ``auth`` setting and given to ``create_app`` explicitly:

* :class:`KeyAuth` (the default): every request, except the public paths (:data:`PUBLIC_PATHS`:
  liveness and the API's own description), carries an active key as ``Authorization: Bearer
  <key>`` or ``X-API-Key: <key>``; none, or one that is malformed, unknown or revoked, is 401
  before the body is read. The key is checked against the store on every request (nothing is
  cached), so a revocation holds at the next request, in every process on the database.
* :class:`LocalAuth`: no keys, every caller is an admin of every user; the server binds a
  loopback address only (:func:`check_local_host`) and refuses (403) a request whose ``Host``
  does not name the loopback or whose ``Origin`` is another site: a web page that rebinds its
  DNS name to 127.0.0.1, or posts to it, gets nothing.

:class:`AuthMiddleware` decides who is calling and leaves a :class:`Principal` in the request;
routes then ask for a role (:func:`require`) and take their user from what the key allows
(:func:`tenant_user`): a key bound to one user needs no ``user``, and a user outside the key's
tenant is 403, never silently another user.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Final
from urllib.parse import urlsplit

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPBearer
from starlette.concurrency import run_in_threadpool

from memstrata.api.keys import KeyService
from memstrata.errors import (
    ConfigError,
    ForbiddenError,
    InvalidInputError,
    MemstrataError,
    UnauthenticatedError,
)
from memstrata.model import ApiKey, KeyRole, Scope
from memstrata.server.errors import error_response
from memstrata.server.limits import ASGIApp, Receive, Send
from memstrata.server.limits import Scope as AsgiScope
from memstrata.util.durable import write_temp
from memstrata.web import WEB_PATHS, WEB_PREFIXES

log = logging.getLogger(__name__)

#: paths served without a key: liveness, the API's description and the workbench page (no
#: memory in them)
PUBLIC_PATHS: Final = (
    frozenset({"/healthz", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"}) | WEB_PATHS
)
#: path prefixes served without a key: the documentation pages' and the workbench's files
PUBLIC_PREFIXES: Final = ("/docs/assets/", *WEB_PREFIXES)
#: host names a local-mode server answers to (any port)
LOCAL_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
#: where the middleware leaves the caller in the ASGI scope
PRINCIPAL_KEY: Final = "memstrata.principal"


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: its key (None in local mode), its role and its tenant (None: all users)."""

    key: ApiKey | None
    role: KeyRole
    users: tuple[str, ...] | None

    @classmethod
    def of(cls, key: ApiKey) -> Principal:
        return cls(key, key.role, key.users)

    @property
    def who(self) -> str:
        return "local mode" if self.key is None else f"the key {self.key.id}"

    def serves(self, user: str) -> bool:
        return self.users is None or user in self.users


#: the caller in local mode: an admin of every user
LOCAL: Final = Principal(None, KeyRole.ADMIN, None)


@dataclass(frozen=True, slots=True)
class KeyAuth:
    """Every request needs an active API key of ``keys``."""

    keys: KeyService


@dataclass(frozen=True, slots=True)
class LocalAuth:
    """No keys: loopback only, and a Host (and Origin) check against DNS rebinding."""


AuthPolicy = KeyAuth | LocalAuth


# --- local mode ---------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a bind address or a Host header's name) is this machine only."""
    name = host.strip().lower().rstrip(".")
    if name in LOCAL_HOSTS:
        return True
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(name.strip("[]")).is_loopback
    return False


def check_local_host(host: str) -> None:
    """Local mode serves without keys, so it binds nothing but the loopback."""
    if not is_loopback(host):
        raise ConfigError(
            f"local mode (no API keys) binds only 127.0.0.1, ::1 or localhost, not {host!r}; "
            'serve with keys (auth = "keys", the default) to listen on other addresses'
        )


def _host_name(value: str) -> str:
    """The name in a Host header (``[::1]:8765`` -> ``[::1]``, ``localhost:80`` ->
    ``localhost``); '' for one that does not parse."""
    try:
        parts = urlsplit(f"//{value}")
        name = parts.hostname or ""
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        return ""
    return f"[{name}]" if ":" in name else name


def local_refusal(
    headers: Iterable[tuple[bytes, bytes]], server: str = "a server without API keys"
) -> str | None:
    """Why local mode (or another ``server`` bound to the loopback) refuses a request with
    these headers, or None: its Host must name the loopback (DNS rebinding), and an Origin,
    when sent, must be a loopback origin."""
    hosts = [v.decode("latin-1") for k, v in headers if k == b"host"]
    origins = [v.decode("latin-1") for k, v in headers if k == b"origin"]
    if len(hosts) != 1 or not is_loopback(_host_name(hosts[0])):
        shown = hosts[0][:100] if hosts else "none"
        return (
            f"Host {shown!r} is not this machine's loopback: {server} answers only requests "
            "for localhost, 127.0.0.1 or [::1]"
        )
    for origin in origins:
        name = urlsplit(origin).hostname if "://" in origin else None
        if name is None or not is_loopback(name):
            return f"Origin {origin[:100]!r} is another site: {server} answers no page but its own"
    return None


# --- keys ---------------------------------------------------------------------------------


def presented_key(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The key a request presents (``Authorization: Bearer`` or ``X-API-Key``), or
    :class:`UnauthenticatedError` when there is none, or more than one."""
    found: set[str] = set()
    for name, raw in headers:
        if name == b"authorization":
            scheme, _, value = raw.decode("latin-1").strip().partition(" ")
            if scheme.lower() != "bearer" or not value.strip():
                raise UnauthenticatedError("the Authorization header must be 'Bearer <key>'")
            found.add(value.strip())
        elif name == b"x-api-key":
            found.add(raw.decode("latin-1").strip())
    if not found:
        raise UnauthenticatedError(
            "this server needs an API key: send 'Authorization: Bearer <key>' or "
            "'X-API-Key: <key>' (memstrata keys create; the first start wrote an admin key "
            "to admin.key in the data directory)"
        )
    if len(found) > 1:
        raise UnauthenticatedError("the request presents more than one key; send one")
    return found.pop()


def is_public(path: str) -> bool:
    """Whether ``path`` is served without a key (:data:`PUBLIC_PATHS`, :data:`PUBLIC_PREFIXES`)."""
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


class AuthMiddleware:
    """ASGI middleware: decide who is calling before anything else reads the request.

    ``status_for`` maps an error of the tree to its status (a store that fails while a key
    is checked answers as any store failure does)."""

    def __init__(
        self, app: ASGIApp, policy: AuthPolicy, status_for: Callable[[MemstrataError], int]
    ) -> None:
        self.app = app
        self.policy = policy
        self.status_for = status_for

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers", ())
        try:
            if isinstance(self.policy, LocalAuth):
                refusal = local_refusal(headers)
                if refusal is not None:
                    raise ForbiddenError(refusal)
                scope[PRINCIPAL_KEY] = LOCAL
            elif not is_public(str(scope.get("path", ""))):
                key = await run_in_threadpool(self.policy.keys.authenticate, presented_key(headers))
                scope[PRINCIPAL_KEY] = Principal.of(key)
        except MemstrataError as exc:
            if scope["type"] == "websocket":  # refused before it is accepted
                await send({"type": "websocket.close", "code": 1008, "reason": str(exc)[:120]})
                return
            status = self.status_for(exc)
            extra = {"www-authenticate": 'Bearer realm="memstrata"'} if status == 401 else None
            response = error_response(status, type(exc).__name__, str(exc), headers=extra)
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


# --- route dependencies -------------------------------------------------------------------

_bearer = HTTPBearer(auto_error=False, description="an API key: Authorization: Bearer ms_...")
_api_key = APIKeyHeader(name="X-API-Key", auto_error=False, description="an API key, ms_...")


def principal(
    request: Request,
    _bearer_key: Annotated[object, Security(_bearer)] = None,
    _header_key: Annotated[object, Security(_api_key)] = None,
) -> Principal:
    """The caller the middleware found (the two security parameters only describe, in the
    OpenAPI schema, how a key is sent; the middleware has read it already)."""
    found = request.scope.get(PRINCIPAL_KEY)
    if not isinstance(found, Principal):
        raise UnauthenticatedError("this route needs an API key")
    return found


def require(role: KeyRole) -> Callable[[Principal], Principal]:
    """A dependency that lets through a caller whose role includes ``role``."""

    def allowed(caller: Annotated[Principal, Depends(principal)]) -> Principal:
        if not caller.role.allows(role):
            raise ForbiddenError(
                f"this needs a {role.value} key; {caller.who} is a {caller.role.value} key"
            )
        return caller

    allowed.__name__ = f"require_{role.value}"
    return allowed


ReaderDep = Annotated[Principal, Depends(require(KeyRole.READER))]
WriterDep = Annotated[Principal, Depends(require(KeyRole.WRITER))]
AdminDep = Annotated[Principal, Depends(require(KeyRole.ADMIN))]


def tenant_user(caller: Principal, user: str | None) -> str:
    """The user a request acts for: ``user`` when the caller's tenant holds it (else 403),
    or, when no user is named, the one user the caller's key is bound to."""
    if user is None:
        if caller.users is not None and len(caller.users) == 1:
            return caller.users[0]
        raise InvalidInputError(
            f"name the user: {caller.who} is not bound to one user"
            if caller.key is not None or caller.users is None
            else "name the user"
        )
    if not caller.serves(user):
        raise ForbiddenError(f"{caller.who} does not serve the user {user!r}")
    return user


def tenant_scope(
    caller: Principal, user: str | None, thread: str | None, agent: str | None
) -> Scope:
    """The scope a request acts in, its user taken from what the caller's key allows."""
    return Scope(tenant_user(caller, user), thread, agent)


def check_forget_scope(caller: Principal, scope: Scope) -> None:
    """Forgetting a thread or an agent's records is a writer's; a whole user, an admin's."""
    needed = KeyRole.WRITER if scope.thread or scope.agent else KeyRole.ADMIN
    if not caller.role.allows(needed):
        what = "a thread or agent" if needed is KeyRole.WRITER else "a whole user"
        raise ForbiddenError(
            f"forgetting {what} needs a {needed.value} key; {caller.who} is a "
            f"{caller.role.value} key"
        )


# --- the first start ----------------------------------------------------------------------


def first_admin_key(keys: KeyService, path: Path) -> bool:
    """On the first start (no active key in the store), create an admin key for all users
    and write it to ``path`` (mode 0600); True when it did. The key is written before it is
    stored, so a file that cannot be written stores no key; of several servers starting at
    once, one stores its key and the others discard theirs."""
    if any(k.active for k in keys.list()):
        return False
    created = keys.prepare(KeyRole.ADMIN, None, name="admin (first start)")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = write_temp(path, f"{created.secret}\n".encode("ascii"), mode=0o600)
    except OSError as exc:
        raise ConfigError(
            f"cannot write the first admin key to {path}: {exc.strerror or exc}; make a key "
            "with `memstrata keys create` where the data directory can be written"
        ) from exc
    try:
        stored = keys.add(created, only_if_none=True)
        if stored:
            try:
                os.replace(temp, path)
            except OSError as exc:
                keys.revoke(created.key.id)  # nobody could read it: it must not stay usable
                raise ConfigError(
                    f"cannot write the first admin key to {path}: {exc.strerror or exc}"
                ) from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
    return stored
