"""The SQLite store's connection: opening, migrations, transactions."""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from memstrata.codec import format_time
from memstrata.errors import (
    BusyError,
    DamagedStoreError,
    MemstrataError,
    MigrationError,
    StoreError,
)
from memstrata.ports import Clock, SystemClock
from memstrata.private import private_dir, private_file
from memstrata.sqlite_errors import (
    cannot_grow,
    connect_read_only,
    is_busy,
    is_damage,
    read_only_file,
    turn_on_secure_delete,
)
from memstrata.store.migrations import Migration, pending
from memstrata.store.sql.base import SqlBase
from memstrata.store.sql.dialect import Dialect, sqlite_ignore
from memstrata.store.sqlite import failures
from memstrata.store.sqlite_schema import MIGRATIONS

log = logging.getLogger(__name__)


SQLITE: Final = Dialect(
    name="sqlite",
    for_update="",  # BEGIN IMMEDIATE: one writer at a time
    unique_errors=(sqlite3.IntegrityError,),
    ignore_duplicates=sqlite_ignore,
    byte_length="LENGTH(CAST({} AS BLOB))",
    joined="{} || char(31) || {}",
)


class SqliteBase(SqlBase):
    """One connection per store object, shared by threads under a lock."""

    dialect = SQLITE

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
        self._busy_timeout_ms = int(busy_timeout_ms)
        #: per thread: whether a write begun now refuses at once when another writer holds
        #: the file (see :meth:`without_waiting`)
        self._impatient = threading.local()
        #: a read-only data directory (or file) is opened read-only: reads work, writes refuse
        self.read_only = read_only_file(self.path)
        self._refusal = (
            f"the data directory {self.path.parent} is read-only: reads work, writes are refused"
        )
        #: why writes are refused: the database was seen damaged (here or by another process)
        self.damage = failures.read_damage(self.path)
        self._damage_mark = str(failures.damage_mark(self.path))
        try:
            self._open(busy_timeout_ms, migrations)
        except sqlite3.DatabaseError as exc:
            if self.read_only or not cannot_grow(exc):
                raise self._open_error(exc) from exc
            # a full disk: the WAL index cannot grow, so even reads fail unless read-only
            log.warning("%s cannot grow (%s): opened read-only", self.path, exc)
            self.read_only = True
            self._refusal = (
                f"disk full: cannot write to {self.path} (opened read-only: reads work); "
                "nothing was written"
            )
            try:
                self._open(busy_timeout_ms, migrations)
            except sqlite3.DatabaseError as again:
                raise self._open_error(again) from again

    def _open(self, busy_timeout_ms: int, migrations: tuple[Migration, ...]) -> None:
        try:
            if not self.read_only:
                private_dir(self.path.parent)
                private_file(self.path)  # its WAL and shared memory take its mode
            self._conn = self._connect(busy_timeout_ms)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the database {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            if not self.read_only:
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            if not turn_on_secure_delete(self._conn):  # deleted text is overwritten
                raise StoreError(f"{self.path}: this SQLite cannot turn secure_delete on")
            self._migrate(migrations)
        except BaseException:
            self._conn.close()
            raise

    def _open_error(self, exc: sqlite3.DatabaseError) -> MemstrataError:
        if is_damage(exc):
            return DamagedStoreError(
                f"{self.path} is not a usable memstrata database: {exc}; {failures.RECOVERY}"
            )
        if is_busy(exc):
            return failures.translate(exc, self.path, "open")
        return StoreError(f"{self.path} is not a usable memstrata database: {exc}")

    def _connect(self, busy_timeout_ms: int) -> sqlite3.Connection:
        timeout = busy_timeout_ms / 1000
        if not self.read_only:
            return sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=timeout
            )
        return connect_read_only(
            self.path, isolation_level=None, check_same_thread=False, timeout=timeout
        )

    def _mark_damaged(self, exc: sqlite3.Error) -> None:
        if self.damage is None:
            self.damage = str(exc)
            log.error("the database %s is damaged (%s); writes are refused", self.path, exc)
            if not self.read_only:
                failures.mark_damaged(self.path, str(exc))

    def _failure(self, exc: sqlite3.Error, doing: str) -> MemstrataError:
        """``exc`` as an error of the tree; damage seen on any statement refuses later writes."""
        if is_damage(exc):
            self._mark_damaged(exc)
        return failures.translate(exc, self.path, doing)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def without_waiting(self) -> Iterator[None]:
        """Writes this thread begins inside the block do not wait for another writer
        (:class:`memstrata.ports.ImpatientStore`): one that finds the file's write lock held
        raises :class:`memstrata.errors.BusyError` at once, not after the busy timeout."""
        before = getattr(self._impatient, "on", False)
        self._impatient.on = True
        try:
            yield
        finally:
            self._impatient.on = before

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken eagerly so concurrent writers queue, not deadlock.

        Driver errors leave as errors of the tree (a constraint violation stays
        :class:`sqlite3.IntegrityError` for the caller to explain); a failed rollback never
        hides the error that caused it."""
        with self._lock:
            # seen by another process since this one opened?
            if self.damage is None and failures.may_be_marked(self._damage_mark):
                self.damage = failures.read_damage(self.path)
            if self.damage is not None:
                raise failures.damaged_error(self.path, self.damage)
            if self.read_only:
                raise StoreError(self._refusal)
            impatient = getattr(self._impatient, "on", False)
            try:
                if impatient:  # the lock only: once begun, the write goes on as any other
                    self._conn.execute("PRAGMA busy_timeout = 0")
                try:
                    self._conn.execute("BEGIN IMMEDIATE")
                finally:
                    if impatient:
                        self._conn.execute(f"PRAGMA busy_timeout = {self._busy_timeout_ms}")
            except sqlite3.Error as exc:
                raise self._failure(exc, "start a write on") from exc
            try:
                yield self._conn
                self._conn.execute("COMMIT")
            except BaseException as exc:
                self._rollback()
                if isinstance(exc, sqlite3.Error) and not isinstance(exc, sqlite3.IntegrityError):
                    raise self._failure(exc, "write to") from exc
                raise

    def _rollback(self) -> None:
        """Roll back if a transaction is still open (SQLite ends some on its own, e.g. when the
        disk is full); a rollback failure is logged, never raised over the original error."""
        if not self._conn.in_transaction:
            return
        try:
            self._conn.execute("ROLLBACK")
        except sqlite3.Error:
            log.warning("rollback failed on %s", self.path, exc_info=True)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise self._failure(exc, "read") from exc

    def _migrate(self, migrations: tuple[Migration, ...]) -> None:
        conn = self._conn
        if self.read_only:
            applied = {r["name"] for r in conn.execute("SELECT name FROM schema_migrations")}
            if pending(migrations, applied):
                raise StoreError(
                    f"the data directory {self.path.parent} is read-only and the database "
                    "needs a schema migration: open it once where it can be written"
                )
            return
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
            except (BusyError, DamagedStoreError):
                raise
            except (sqlite3.Error, StoreError) as exc:
                raise MigrationError(
                    f"migration {migration.name} failed on {self.path}: {exc}"
                ) from exc
