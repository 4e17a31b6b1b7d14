"""A whole store's rows, table by table: read in key order, inserted verbatim, and digested
(a row count and a SHA-256 of the rows in key order, the same on every engine) so that a copy
can be proven equal to its source. Used by ``memstrata migrate`` (:mod:`memstrata.store.copy`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Any, Final

from memstrata.store.sql.base import SqlBase
from memstrata.store.sql.common import placeholders

#: every table of records, parents before children, with its columns and its key
TABLES: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {
    "episodes": (
        (
            "id", "user", "thread", "agent", "surface", "session_id", "speaker", "role", "text",
            "time", "metadata", "archived",
        ),
        ("id",),
    ),
    "facts": (
        (
            "id", "user", "thread", "agent", "text", "category", "confidence", "importance",
            "topic", "valid_from", "valid_to", "superseded_by", "created_at", "updated_at",
            "access_count", "version",
        ),
        ("id",),
    ),
    "fact_sources": (("fact_id", "episode_id", "ord"), ("fact_id", "episode_id")),
    "documents": (
        (
            "id", "user", "thread", "agent", "kind", "key", "content", "version", "created_at",
            "updated_at",
        ),
        ("id",),
    ),
    "item_history": (
        ("item_id", "user", "thread", "agent", "version", "op", "reason", "at", "data"),
        ("user", "thread", "agent", "item_id", "version"),
    ),
    "changes": (("seq", "user", "item_id", "op"), ("seq",)),
    "erasures": (
        (
            "id", "user", "thread", "agent", "target", "reason", "at", "episode_ids", "texts",
            "report", "done",
        ),
        ("id",),
    ),
    "settled_episodes": (("user", "episode_id"), ("user", "episode_id")),
    "api_keys": (
        ("id", "prefix", "digest", "name", "role", "users", "created_at", "revoked_at"),
        ("id",),
    ),
    "sites": (("id", "label", "first_seen", "last_seen", "swept_to"), ("id",)),
    "erasure_sites": (("erasure_id", "site", "at"), ("erasure_id", "site")),
}  # fmt: skip
PAGE: Final = 1000


def _names(columns: Sequence[str]) -> str:
    return ", ".join(f'"{c}"' for c in columns)


class CopyTables(SqlBase):
    """:meth:`table_pages`, :meth:`insert_rows`, :meth:`table_digests`."""

    def table_pages(self, table: str, *, page: int = PAGE) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of ``table`` (its columns in :data:`TABLES` order), in key order, in
        pages of at most ``page`` rows."""
        columns, key = TABLES[table]
        offset = 0
        while True:
            rows = self._read(
                f"SELECT {_names(columns)} FROM {table} ORDER BY {_names(key)} LIMIT ? OFFSET ?",
                (page, offset),
            )
            if not rows:
                return
            yield [tuple(r[c] for c in columns) for r in rows]
            offset += len(rows)

    def insert_rows(self, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert ``rows`` (as :meth:`table_pages` gives them) in one transaction."""
        columns, _ = TABLES[table]
        with self._write() as tx:
            tx.executemany(
                f"INSERT INTO {table} ({_names(columns)}) VALUES ({placeholders(len(columns))})",
                rows,
            )

    def table_digests(self) -> dict[str, dict[str, Any]]:
        """Per table: ``rows`` (how many) and ``sha256`` (of every row in key order)."""
        out: dict[str, dict[str, Any]] = {}
        for table in TABLES:
            digest = hashlib.sha256()
            count = 0
            for page in self.table_pages(table):
                for row in page:
                    digest.update(json.dumps(row, ensure_ascii=False).encode("utf-8"))
                    digest.update(b"\n")
                    count += 1
            out[table] = {"rows": count, "sha256": digest.hexdigest()}
        return out

    def holds_rows(self) -> list[str]:
        """The tables that hold at least one row."""
        return [t for t in TABLES if self._read(f"SELECT 1 AS x FROM {t} LIMIT 1")]
