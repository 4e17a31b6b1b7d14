"""A whole store's rows, table by table: read in key order, inserted verbatim, and digested
(a row count and a SHA-256 of the rows in key order, the same on every engine) so that a copy
can be proven equal to its source. Used by ``memstrata migrate`` (:mod:`memstrata.store.copy`).

A copy into a store is ONE transaction (:meth:`CopyTables.copy_transaction`): every insert,
the engine's finishing statements and the read-back that verifies it happen before the one
commit, so a copy interrupted at any point (a kill, a lost connection, an error) leaves the
target without a single copied row. The schema is not part of it: a store makes its schema
when it is opened, in transactions of its own, before the copy begins.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, Final

from memstrata.errors import StoreError
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
            "access_count", "version", "when_text", "when_start", "when_end", "slot", "slot_value",
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
    """:meth:`table_pages`, :meth:`table_digests`, :meth:`holds_rows` on any store; and, inside
    :meth:`copy_transaction`, :meth:`insert_rows` and :meth:`finish_copy`."""

    _copy_tx: Any = None

    @contextmanager
    def copy_transaction(self) -> Iterator[None]:
        """One write transaction holding a whole copy into this store: committed when the
        block ends, rolled back (leaving the store as it was) if it raises or the process
        dies. Reads made in the block on this thread (:meth:`holds_rows`,
        :meth:`table_digests`) see the rows inserted so far."""
        if self._copy_tx is not None:
            raise StoreError("a copy was started inside another (a bug in memstrata)")
        with self._write() as tx:
            self._copy_tx = tx
            try:
                yield
            finally:
                self._copy_tx = None

    def _copying(self) -> Any:
        if self._copy_tx is None:
            raise StoreError("rows of a copy are inserted outside its transaction (a bug)")
        return self._copy_tx

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
        """Insert ``rows`` (as :meth:`table_pages` gives them) in the copy's transaction."""
        columns, _ = TABLES[table]
        self._copying().executemany(
            f"INSERT INTO {table} ({_names(columns)}) VALUES ({placeholders(len(columns))})",
            rows,
        )

    def finish_copy(self) -> None:
        """What the engine needs once rows were inserted with their own keys, in the copy's
        transaction: on PostgreSQL, each table's key sequence (``changes.seq``, and any other
        serial key :data:`TABLES` comes to hold) moved past the copied values, so the next
        row gets a new one. SQLite and InnoDB move their counters on explicit keys."""
        if self.dialect.name != "postgresql":
            return
        tx = self._copying()
        for table, (_, key) in TABLES.items():
            if len(key) != 1:
                continue
            found = tx.execute(
                "SELECT pg_get_serial_sequence(?, ?) AS s", (table, key[0])
            ).fetchone()
            if found is None or found["s"] is None:
                continue
            tx.execute(
                f'SELECT setval(?, COALESCE((SELECT MAX("{key[0]}") FROM {table}), 0) + 1, false)',
                (found["s"],),
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

    def store_identity(self) -> tuple[Any, ...]:
        """What tells this store apart from every other, whichever URL named it: equal for two
        spellings of one store (``postgres://`` and ``postgresql://``, a relative and an
        absolute path, a host name and its address), different for a copy of it. SQLite: the
        file (device and inode); PostgreSQL: the server's start time, the database and the
        ``episodes`` table the search path finds; MySQL/MariaDB: the server's host name, port
        and id, the database and the creation time of its ``episodes`` table."""
        name = self.dialect.name
        if name == "sqlite":
            main = [r for r in self._read("PRAGMA database_list") if r["name"] == "main"]
            path = str(main[0]["file"]) if main else ""
            if not path:  # an in-memory database is no other store
                return ("sqlite", "memory", id(self))
            found = os.stat(path)
            return ("sqlite", found.st_dev, found.st_ino)
        if name == "postgresql":
            sql = (
                "SELECT CAST(pg_postmaster_start_time() AS TEXT) AS started, "
                "CAST(current_database() AS TEXT) AS db, "
                "CAST(CAST(to_regclass('episodes') AS oid) AS TEXT) AS tab"
            )
            keys: tuple[str, ...] = ("started", "db", "tab")
        else:
            sql = (
                "SELECT @@hostname AS host, CAST(@@port AS CHAR) AS port, "
                "CAST(@@server_id AS CHAR) AS server, DATABASE() AS db, "
                "(SELECT CAST(CREATE_TIME AS CHAR) FROM information_schema.TABLES "
                "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'episodes') AS tab"
            )
            keys = ("host", "port", "server", "db", "tab")
        row = self._read(sql)[0]
        return (name, *(str(row[k]) for k in keys))

    def holds_rows(self) -> list[str]:
        """The tables that hold at least one row."""
        return [t for t in TABLES if self._read(f"SELECT 1 AS x FROM {t} LIMIT 1")]
