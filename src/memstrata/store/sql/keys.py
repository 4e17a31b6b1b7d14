"""API keys: the digest and public prefix of each key, never the key itself.

Keys are not records of a user: they are not scoped and not in the change feed. Every
process that opens the database sees the same keys, so a key revoked by one process stops
working in every other at its next request.
"""

from __future__ import annotations

import json
from datetime import datetime

from memstrata.codec import format_time, parse_time
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.model import ApiKey, KeyRole
from memstrata.store.sql.base import SqlBase
from memstrata.store.sql.common import Row, placeholders

_KEY_COLUMNS = "id, prefix, name, role, users, created_at, revoked_at"


def _key(row: Row) -> ApiKey:
    users = row["users"]
    return ApiKey(
        id=row["id"],
        prefix=row["prefix"],
        name=row["name"],
        role=KeyRole(row["role"]),
        users=None if users is None else tuple(json.loads(users)),
        created_at=parse_time(row["created_at"]),
        revoked_at=None if row["revoked_at"] is None else parse_time(row["revoked_at"]),
    )


class KeyTables(SqlBase):
    """:meth:`add_key`, :meth:`find_keys`, :meth:`list_keys`, :meth:`revoke_key`."""

    def add_key(self, key: ApiKey, digest: str, *, only_if_none: bool = False) -> bool:
        if not key.active:
            raise InvalidInputError(f"{key.id} is revoked; a new key starts active")
        users = None if key.users is None else json.dumps(list(key.users), ensure_ascii=False)
        try:
            with self._write() as tx:
                if (
                    only_if_none
                    and tx.execute(
                        "SELECT 1 FROM api_keys WHERE revoked_at IS NULL LIMIT 1"
                    ).fetchone()
                ):
                    return False
                tx.execute(
                    f"INSERT INTO api_keys ({_KEY_COLUMNS}, digest) VALUES ({placeholders(8)})",
                    (
                        key.id,
                        key.prefix,
                        key.name,
                        key.role.value,
                        users,
                        format_time(key.created_at),
                        None,
                        digest,
                    ),
                )
        except self.dialect.unique_errors as exc:
            raise InvalidInputError(f"a key with id {key.id} or this digest exists") from exc
        return True

    def find_keys(self, prefix: str) -> list[tuple[ApiKey, str]]:
        rows = self._read(
            f"SELECT {_KEY_COLUMNS}, digest FROM api_keys WHERE prefix = ? ORDER BY id", (prefix,)
        )
        return [(_key(r), r["digest"]) for r in rows]

    def list_keys(self) -> list[ApiKey]:
        return [_key(r) for r in self._read(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY id")]

    def revoke_key(self, key_id: str, at: datetime) -> ApiKey:
        with self._write() as tx:
            tx.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
                (format_time(at), key_id),
            )
            row = tx.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)
            ).fetchone()
        if row is None:
            raise NotFoundError(f"no API key {key_id}")
        return _key(row)
