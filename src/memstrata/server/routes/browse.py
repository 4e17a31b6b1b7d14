"""Browsing memory as a person looks at it (the web workbench): who is calling, the users
it may act on, a user's threads and agents, the sessions of a scope and their turns, and
facts by category, topic and validity."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from memstrata.api.browse import Validity, scope_summary_to_json, session_summary_to_json
from memstrata.api.capture import MAX_LABEL_CHARS
from memstrata.codec import episode_to_json, record_to_json
from memstrata.model import (
    SCOPE_PART_PATTERN,
    SLOT_KIND_PATTERN,
    SLOT_MAX,
    SLOT_PATTERN,
    Category,
    Scope,
)
from memstrata.server.auth import LOCAL, tenant_user
from memstrata.server.deps import (
    READER,
    CallerDep,
    CursorId,
    Limit,
    MemoryDep,
    ScopeDep,
    page,
)
from memstrata.server.requestlog import note_user
from memstrata.server.responses import (
    FactViewPage,
    MeOut,
    Page,
    ScopesOut,
    SessionOut,
    SessionPage,
    UserPage,
)

router = APIRouter(tags=["browse"])

#: the cursor of a list in a computed order: how many items the pages before showed
Offset = Annotated[int | None, Query(ge=0, description="the next_cursor of the page before")]
SessionPath = Annotated[
    str, Path(min_length=1, max_length=MAX_LABEL_CHARS, description="the session's id")
]


@router.get("/v1/me", dependencies=[READER], response_model=MeOut)
def me(caller: CallerDep) -> dict[str, Any]:
    """Who is calling: ``keys`` or ``local`` mode, the caller's role, the users its key
    allows (null: every user) and the key's public fields (never the key itself)."""
    key = caller.key
    return {
        "mode": "local" if caller is LOCAL or key is None else "keys",
        "role": caller.role.value,
        "users": None if caller.users is None else list(caller.users),
        "key": None if key is None else {"id": key.id, "name": key.name, "prefix": key.prefix},
    }


@router.get("/v1/users", dependencies=[READER], response_model=UserPage)
def users(
    memory: MemoryDep,
    caller: CallerDep,
    limit: Limit = 100,
    cursor: Annotated[
        str | None,
        Query(pattern=SCOPE_PART_PATTERN, description="the next_cursor of the page before"),
    ] = None,
) -> Page[dict[str, Any]]:
    """The users the caller may act on that hold memory, in name order, each with its
    counts and the time of its latest turn."""
    found = memory.users(caller.users, after=cursor, limit=limit + 1)
    return page([u.to_json() for u in found], limit, key="user")


@router.get("/v1/scopes", dependencies=[READER], response_model=ScopesOut)
def scopes(
    memory: MemoryDep,
    caller: CallerDep,
    user: Annotated[
        str | None,
        Query(
            pattern=SCOPE_PART_PATTERN,
            description="the user; with a key bound to one user it may be left out",
        ),
    ] = None,
) -> dict[str, Any]:
    """The threads and agents of a user present in the store (the entry whose thread and
    agent are null holds the records outside any thread or agent), newest activity first,
    each with its counts."""
    name = tenant_user(caller, user)
    note_user(name)
    return {"user": name, "items": [scope_summary_to_json(s) for s in memory.scopes(Scope(name))]}


@router.get("/v1/sessions", dependencies=[READER], response_model=SessionPage)
def sessions(
    memory: MemoryDep, scope: ScopeDep, limit: Limit = 100, cursor: Offset = None
) -> Page[dict[str, Any]]:
    """The sessions of the scope, newest first (by their last turn): when they ran, how
    many turns, who spoke, on which surface."""
    start = cursor or 0
    found = memory.sessions(scope)
    shown = [session_summary_to_json(s) for s in found[start : start + limit]]
    more = start + limit < len(found)
    return Page(items=shown, next_cursor=str(start + limit) if more else None)


@router.get("/v1/sessions/{session_id:path}", dependencies=[READER], response_model=SessionOut)
def session(session_id: SessionPath, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    """Every turn of a session, verbatim, in the order spoken (archived turns included and
    marked); 404 when the scope holds no such session."""
    turns = memory.session(session_id, scope)
    return {"session_id": session_id, "turns": [episode_to_json(e) for e in turns]}


@router.get("/v1/facts", dependencies=[READER], response_model=FactViewPage)
def facts(
    memory: MemoryDep,
    scope: ScopeDep,
    category: Annotated[Category | None, Query(description="only facts of this category")] = None,
    topic: Annotated[
        str | None, Query(max_length=200, description="only facts of this topic")
    ] = None,
    valid: Annotated[
        Validity,
        Query(
            description="current: facts holding now; superseded: facts that no longer hold "
            "(superseded or expired); all: both"
        ),
    ] = "current",
    slot: Annotated[
        str | None,
        Query(max_length=SLOT_MAX, pattern=SLOT_PATTERN, description="only facts of this slot"),
    ] = None,
    slot_kind: Annotated[
        str | None,
        Query(
            max_length=SLOT_MAX,
            pattern=SLOT_KIND_PATTERN,
            description="only facts whose slot is of this kind: the kind itself, or kind: "
            "and a qualifier (allergy: allergy, allergy:shrimp)",
        ),
    ] = None,
    limit: Limit = 100,
    cursor: CursorId = None,
) -> Page[dict[str, Any]]:
    """One page of the scope's facts in id order; a superseded fact carries ``valid_to``,
    ``superseded_by`` and the replacing fact's text (``superseded_by_text``)."""
    views = memory.facts(
        scope,
        category=category,
        topic=topic,
        valid=valid,
        slot=slot,
        slot_kind=slot_kind,
        after=cursor,
        limit=limit + 1,
    )
    items = [{**record_to_json(v.fact), "superseded_by_text": v.superseded_by_text} for v in views]
    return page(items, limit, key="id")
