"""The SQLite store's connection: opening, migrations, transactions, the change feed."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Self

from memstrata.codec import format_time
from memstrata.errors import MigrationError, StoreError
from memstrata.model import Change, ChangeOp
from memstrata.ports import Clock, SystemClock
from memstrata.store.migrations import Migration, pending
from memstrata.store.sqlite.common import check_limit
from memstrata.store.sqlite_schema import MIGRATIONS


class SqliteBase:
    """One connection per store object, shared by threads under a lock."""

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock | None = None,
        migrations: tuple[Migration, ...] = MIGRATIONS,
        busy_timeout_ms: int = 10_000,
    ) -> None:
        self.path = Path(path)
        self._clock = clock or SystemClock()
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=busy_timeout_ms / 1000,
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the database {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._migrate(migrations)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise StoreError(f"{self.path} is not a usable memstrata database: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken eagerly so concurrent writers queue, not deadlock."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot start a write on {self.path}: {exc}") from exc
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._conn.execute("ROLLBACK")
                raise StoreError(f"cannot commit to {self.path}: {exc}") from exc

    @staticmethod
    def _log(tx: sqlite3.Connection, user: str, item_ids: Sequence[str], op: ChangeOp) -> None:
        """Append to the change feed, in the transaction that makes the change."""
        tx.executemany(
            "INSERT INTO changes (user, item_id, op) VALUES (?, ?, ?)",
            [(user, item_id, op.value) for item_id in item_ids],
        )

    def generation(self, user: str) -> int:
        rows = self._read("SELECT MAX(seq) AS seq FROM changes WHERE user = ?", (user,))
        return int(rows[0]["seq"] or 0)

    def changes_since(self, user: str, after: int, *, limit: int = 10_000) -> list[Change]:
        rows = self._read(
            "SELECT seq, item_id, op FROM changes WHERE user = ? AND seq > ? ORDER BY seq LIMIT ?",
            (user, after, check_limit(limit)),
        )
        return [Change(r["seq"], r["item_id"], ChangeOp(r["op"])) for r in rows]

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"read failed on {self.path}: {exc}") from exc

    def _migrate(self, migrations: tuple[Migration, ...]) -> None:
        conn = self._conn
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        applied = {r["name"] for r in conn.execute("SELECT name FROM schema_migrations")}
        for migration in pending(migrations, applied):
            try:
                with self._write() as tx:
                    for statement in migration.statements:
                        tx.execute(statement)
                    tx.execute(
                        "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                        (migration.name, format_time(self._clock.now())),
                    )
            except (sqlite3.Error, StoreError) as exc:
                raise MigrationError(
                    f"migration {migration.name} failed on {self.path}: {exc}"
                ) from exc

    def applied_migrations(self) -> list[str]:
        return [r["name"] for r in self._read("SELECT name FROM schema_migrations ORDER BY name")]
