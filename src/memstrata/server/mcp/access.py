"""Who an MCP call acts for: its scope from an API key, over HTTP and over stdio.

A key is bound to a tenant (one user, a list, or all) and a role. A call that reads needs a
``reader`` key, one that writes a ``writer``; its user is the key's one user, or the user the
client names (``X-Memstrata-User`` over HTTP, ``--user`` on stdio) when the key's tenant holds
it, never another (:func:`memstrata.server.auth.tenant_scope`, the rule every HTTP route
follows). Thread and agent come from ``X-Memstrata-Thread`` and ``X-Memstrata-Agent``, or
``--thread`` and ``--agent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from memstrata.errors import InvalidInputError
from memstrata.model import KeyRole, Scope
from memstrata.server.auth import Principal, principal, require, tenant_scope
from memstrata.server.mcp.server import ScopeResolver

if TYPE_CHECKING:
    from starlette.requests import Request

    from memstrata.api.keys import KeyService

USER_HEADER: Final = "X-Memstrata-User"
THREAD_HEADER: Final = "X-Memstrata-Thread"
AGENT_HEADER: Final = "X-Memstrata-Agent"


def _allowed(caller: Principal, *, write: bool) -> Principal:
    return require(KeyRole.WRITER if write else KeyRole.READER)(caller)


def key_scope(request: Request | None, *, write: bool) -> Scope:
    """The scope of an HTTP request, from the caller the server's authentication found (the
    key it presents, or local mode) and the ``X-Memstrata-*`` headers."""
    if request is None:
        raise InvalidInputError("an MCP call over HTTP needs its request")
    caller = _allowed(principal(request), write=write)
    headers = request.headers
    return tenant_scope(
        caller, headers.get(USER_HEADER), headers.get(THREAD_HEADER), headers.get(AGENT_HEADER)
    )


def key_resolver(
    keys: KeyService,
    secret: str,
    user: str | None = None,
    thread: str | None = None,
    agent: str | None = None,
) -> ScopeResolver:
    """Every call in the scope the key ``secret`` allows (``memstrata mcp --key``). The key
    is checked at each call, so a revoked key stops at the next one."""

    def resolve(request: Request | None, *, write: bool) -> Scope:
        del request
        caller = _allowed(Principal.of(keys.authenticate(secret)), write=write)
        return tenant_scope(caller, user, thread, agent)

    resolve(None, write=False)  # a bad key, or a user outside it, fails before serving
    return resolve
