"""API keys: create (shown once), list, revoke, authenticate.

A key is ``ms_`` and 43 URL-safe characters (32 random bytes). The store keeps its SHA-256
digest and its first :data:`PREFIX_CHARS` characters (public, to tell keys apart in a list),
never the key. Authenticating looks the prefix up and compares digests in constant time.
Nothing is cached: every call reads the store, so a revocation holds at the next request in
every process that shares the database.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from memstrata.errors import InvalidInputError, UnauthenticatedError
from memstrata.ids import new_id
from memstrata.model import ApiKey, KeyRole
from memstrata.ports import Clock, RecordStore

#: every key starts so; a string that does not is not a memstrata key
KEY_PREFIX: Final = "ms_"
#: the public part of a key kept and listed: ``ms_`` and 8 characters (48 bits)
PREFIX_CHARS: Final = 11
_SECRET_BYTES: Final = 32
_KEY_LENGTH: Final = len(KEY_PREFIX) + 43  # base64 of 32 bytes, unpadded
_NAME_CHARS: Final = 200


def digest_of(key: str) -> str:
    """The SHA-256 of a key, hex: all the store keeps of its secret."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class CreatedKey:
    """A key just created: ``secret`` is the key itself, shown this once and kept nowhere."""

    key: ApiKey
    secret: str = field(repr=False)


def parse_role(value: str | KeyRole) -> KeyRole:
    try:
        return KeyRole(value)
    except ValueError:
        roles = ", ".join(r.value for r in KeyRole)
        raise InvalidInputError(f"unknown role {value!r}; expected one of {roles}") from None


class KeyService:
    """The API keys of one store (``Memory.keys``)."""

    def __init__(self, store: RecordStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def create(
        self, role: str | KeyRole, users: Sequence[str] | None, *, name: str = ""
    ) -> CreatedKey:
        """A new active key with ``role`` for ``users`` (None: every user), stored."""
        created = self.prepare(role, users, name=name)
        self.add(created)
        return created

    def prepare(
        self, role: str | KeyRole, users: Sequence[str] | None, *, name: str = ""
    ) -> CreatedKey:
        """A new key, checked but not stored yet (:meth:`add` stores it)."""
        role = parse_role(role)
        if users is not None:
            if isinstance(users, str):
                raise InvalidInputError("users is a list of user ids, not one string")
            users = tuple(dict.fromkeys(users))  # in order, each once
        if not isinstance(name, str) or len(name) > _NAME_CHARS or not name.isprintable():
            raise InvalidInputError(f"a key name is at most {_NAME_CHARS} printable characters")
        secret = KEY_PREFIX + secrets.token_urlsafe(_SECRET_BYTES)
        key = ApiKey(
            id=new_id("key"),
            prefix=secret[:PREFIX_CHARS],
            name=name,
            role=role,
            users=users,
            created_at=self._clock.now(),
        )
        return CreatedKey(key, secret)

    def add(self, created: CreatedKey, *, only_if_none: bool = False) -> bool:
        """Store a prepared key (its digest, never the key); with ``only_if_none`` only while
        no active key exists, checked in the same transaction. True when stored."""
        return self._store.add_key(
            created.key, digest_of(created.secret), only_if_none=only_if_none
        )

    def list(self) -> list[ApiKey]:
        """Every key, revoked ones included, oldest first."""
        return self._store.list_keys()

    def revoke(self, key_id: str) -> ApiKey:
        """Revoke a key at once, in every process on this store (:class:`NotFoundError` for
        an unknown id; revoking twice keeps the first time)."""
        if not isinstance(key_id, str) or not key_id.startswith("key_"):
            raise InvalidInputError(f"{key_id!r} is not a key id (key_...)")
        return self._store.revoke_key(key_id, self._clock.now())

    def authenticate(self, secret: str) -> ApiKey:
        """The active key ``secret`` is, or :class:`UnauthenticatedError`."""
        if (
            not isinstance(secret, str)
            or len(secret) != _KEY_LENGTH
            or not secret.startswith(KEY_PREFIX)
            or not secret.isascii()
        ):
            raise UnauthenticatedError("not a memstrata API key (ms_...)")
        digest = digest_of(secret)
        found: ApiKey | None = None
        for key, stored in self._store.find_keys(secret[:PREFIX_CHARS]):
            if hmac.compare_digest(digest, stored):
                found = key
        if found is None:
            raise UnauthenticatedError("unknown API key")
        if not found.active:
            raise UnauthenticatedError(f"the API key {found.id} was revoked")
        return found
