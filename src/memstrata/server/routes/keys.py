"""API keys over HTTP: list, create (shown once), revoke. An admin's, within its tenant: an
admin key bound to users lists, makes and revokes only keys for users it serves itself."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from memstrata.codec import api_key_to_json
from memstrata.errors import ForbiddenError, NotFoundError
from memstrata.ids import ID_PATTERN
from memstrata.model import ApiKey
from memstrata.server.auth import AdminDep, Principal
from memstrata.server.deps import CursorId, Limit, MemoryDep, page
from memstrata.server.responses import KeyOut, KeyPage, NewKeyOut, Page
from memstrata.server.schemas.keys import KeyIn

router = APIRouter(tags=["keys"])

KeyPath = Annotated[str, Path(pattern=ID_PATTERN, description="the key's id (key_...)")]


def _within(caller: Principal, users: tuple[str, ...] | None) -> bool:
    """Whether a key for ``users`` (None: all) gives no more than the caller has."""
    if caller.users is None:
        return True
    return users is not None and set(users) <= set(caller.users)


def _visible(caller: Principal, key: ApiKey) -> bool:
    return _within(caller, key.users)


@router.get("/v1/keys", response_model=KeyPage)
def list_keys(
    memory: MemoryDep, caller: AdminDep, limit: Limit = 100, cursor: CursorId = None
) -> Page[dict[str, Any]]:
    """The keys (never a key itself), oldest first, a page at a time."""
    keys = [
        api_key_to_json(k)
        for k in memory.keys.list()
        if _visible(caller, k) and (cursor is None or k.id > cursor)
    ]
    return page(keys[: limit + 1], limit, key="id")


@router.post("/v1/keys", status_code=201, response_model=NewKeyOut)
def create_key(body: KeyIn, memory: MemoryDep, caller: AdminDep) -> dict[str, Any]:
    users = None if body.users is None else tuple(body.users)
    if not _within(caller, users):
        raise ForbiddenError(f"{caller.who} cannot make a key for users it does not serve")
    created = memory.keys.create(body.role, users, name=body.name)
    return {**api_key_to_json(created.key), "key": created.secret}


@router.delete("/v1/keys/{key_id}", response_model=KeyOut)
def revoke_key(key_id: KeyPath, memory: MemoryDep, caller: AdminDep) -> dict[str, Any]:
    found = next((k for k in memory.keys.list() if k.id == key_id), None)
    if found is not None and not _visible(caller, found):
        found = None  # a key outside the tenant is as absent as a missing one
    if found is None:
        raise NotFoundError(f"no API key {key_id}")
    return api_key_to_json(memory.keys.revoke(key_id))
