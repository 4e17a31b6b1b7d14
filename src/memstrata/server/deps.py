"""What every route depends on: the memory, the scope it acts in, checked query parameters.

A route reaches the :class:`~memstrata.api.Memory` only through :func:`get_memory` and its
scope only through :func:`request_scope` (a scope in the query) or :func:`body_scope` (a scope
in the body), so who may act in which scope is decided here, in one place: the user comes
from what the caller's API key allows (:mod:`memstrata.server.auth`). Each route also names
the role it needs (``dependencies=[READER]``, ``[WRITER]`` or ``[ADMIN]``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Annotated, Any, Final

from fastapi import Depends, Path, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from pydantic import BaseModel

from memstrata.api import Memory
from memstrata.errors import InvalidInputError
from memstrata.ids import ID_PATTERN
from memstrata.model import SCOPE_PART_PATTERN, KeyRole, Scope
from memstrata.server.auth import Principal, principal, require, tenant_scope
from memstrata.server.requestlog import note_user
from memstrata.server.responses import Page
from memstrata.server.schemas.common import ScopeIn

#: the most items one page of an HTTP list holds
MAX_HTTP_PAGE: Final = 1000


def get_memory(request: Request) -> Memory:
    """The memory the app serves (``app.state.memory``)."""
    memory: Memory = request.app.state.memory
    return memory


def request_scope(
    caller: Annotated[Principal, Depends(principal)],
    user: Annotated[
        str | None,
        Query(
            pattern=SCOPE_PART_PATTERN,
            description="the user whose memory the request acts in; with a key bound to one "
            "user it may be left out, and a user outside the key's users is 403",
        ),
    ] = None,
    thread: Annotated[
        str | None, Query(pattern=SCOPE_PART_PATTERN, description="a thread of the user")
    ] = None,
    agent: Annotated[
        str | None, Query(pattern=SCOPE_PART_PATTERN, description="an agent of the user")
    ] = None,
) -> Scope:
    """The scope a request acts in, from its query, its user from what the caller's key
    allows (:func:`memstrata.server.auth.tenant_user`)."""
    scope = tenant_scope(caller, user, thread, agent)
    note_user(scope.user)  # for the access line
    return scope


def body_scope(scope: ScopeIn, request: Request) -> Scope:
    """The scope a request acts in, from a scope in its body, its user from what the
    caller's key allows."""
    acting = tenant_scope(principal(request), scope.user, scope.thread, scope.agent)
    note_user(acting.user)  # for the access line
    return acting


def _query_names(dependant: Dependant) -> set[str]:
    names: set[str] = set()
    for param in dependant.query_params:
        model = param.field_info.annotation
        if isinstance(model, type) and issubclass(model, BaseModel):  # a model of parameters
            names |= {f.alias or name for name, f in model.model_fields.items()}
        else:
            names.add(param.alias)
    for sub in dependant.dependencies:
        names |= _query_names(sub)
    return names


def known_query_only(request: Request) -> None:
    """Refuse query parameters the route does not take (a misspelt filter is not ignored),
    and any given twice (``?user=a&user=b`` must not read either)."""
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
    counts = Counter(name for name, _ in request.query_params.multi_items())
    repeated = sorted(name for name, n in counts.items() if n > 1)
    if repeated:
        raise InvalidInputError(
            f"repeated query parameter(s) {', '.join(map(repr, repeated))}; give each once"
        )


def page(items: Sequence[dict[str, Any]], limit: int, *, key: str) -> Page[dict[str, Any]]:
    """The first ``limit`` of ``items`` (fetched one over the limit, to know whether more
    follow), and the cursor of the next page: the ``key`` of the last item shown."""
    shown = list(items[:limit])
    more = len(items) > limit and bool(shown)
    return Page(items=shown, next_cursor=str(shown[-1][key]) if more else None)


MemoryDep = Annotated[Memory, Depends(get_memory)]
#: who is calling (their key's role and users)
CallerDep = Annotated[Principal, Depends(principal)]
#: what a route needs of the caller's role, as its ``dependencies``
READER = Depends(require(KeyRole.READER))
WRITER = Depends(require(KeyRole.WRITER))
ADMIN = Depends(require(KeyRole.ADMIN))
ScopeDep = Annotated[Scope, Depends(request_scope)]
#: how many items a page holds
Limit = Annotated[int, Query(ge=1, le=MAX_HTTP_PAGE, description="items per page")]
#: the cursor of a list in id order: the next_cursor of the page before
CursorId = Annotated[
    str | None, Query(pattern=ID_PATTERN, description="the next_cursor of the page before")
]
#: an item's id in a path
ItemPath = Annotated[str, Path(pattern=ID_PATTERN, description="the item's id")]
