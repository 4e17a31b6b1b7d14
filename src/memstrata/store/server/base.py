"""What a record store on a database server adds to the shared tables.

* **Connections.** A pool (the driver's own for PostgreSQL, :class:`memstrata.store.server.pool`
  for MySQL); a write borrows one connection for its transaction, a read one for its statement.
  Reads made inside a write on the same thread use the write's connection, so they see it.
* **Isolation.** Each write is one transaction at the server's default level (READ COMMITTED on
  PostgreSQL, REPEATABLE READ on InnoDB); a compare-and-swap locks the row it checks
  (``SELECT ... FOR UPDATE``), a create races on unique keys, and each user's change feed is
  locked until commit (a row of ``feed_heads``), so the feed grows in commit order.
* **Retries.** Every public method is one unit of work: when the server reports a deadlock, a
  serialization failure or a dropped connection before the commit, the method runs again with
  backoff (:func:`memstrata.retry.retry_transient`). A connection lost during the commit leaves
  the outcome unknown: that is a :class:`StoreError`, not retried.
* **No endless waits.** Each statement and each commit waits at most ``statement_timeout_s``
  (default 60 s) for the server's answer (:mod:`memstrata.store.server.watchdog`): then its
  connection is cut and the call fails with a :class:`StoreError` (HTTP 503), never retried.
* **Errors.** Driver errors leave as errors of the tree; the URL in a message never shows the
  password.
* **Migrations** run under a lock the server holds for one opener at a time, each recorded in
  ``schema_migrations`` with the statements that applied it.
"""

from __future__ import annotations

import functools
import inspect
import logging
import sys
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Final, TypeVar

from memstrata.codec import format_time
from memstrata.errors import (
    BusyError,
    InvalidInputError,
    MemstrataError,
    MigrationError,
    StoreError,
)
from memstrata.ports import Clock, RecordStore, SystemClock
from memstrata.retry import retry_transient
from memstrata.store.migrations import Migration, pending
from memstrata.store.named_locks import POLL_S, digest, waited
from memstrata.store.server.watchdog import STATEMENT_TIMEOUT_S, Watchdog, shut_down
from memstrata.store.sql.base import SqlBase
from memstrata.store.sql.common import Row
from memstrata.store.sql.dialect import to_format_style
from memstrata.store.url import StoreUrl

log = logging.getLogger(__name__)

#: the methods that are one unit of work each, retried whole on a transient failure
UNITS: Final = frozenset(
    name
    for name, member in inspect.getmembers(RecordStore, inspect.isfunction)
    if not name.startswith("_") and name != "close"
)

S = TypeVar("S", bound="ServerBase")


class DriverTx:
    """A driver connection seen as a :class:`memstrata.store.sql.common.Tx`: ``?`` placeholders
    rewritten for the driver, rows as dictionaries."""

    __slots__ = ("_cursor", "_watched", "conn")

    def __init__(
        self,
        conn: Any,
        cursor: Callable[[Any], Any],
        watched: Callable[[Any], AbstractContextManager[None]] | None = None,
    ) -> None:
        self.conn = conn
        self._cursor = cursor
        self._watched = watched

    def _watch(self) -> AbstractContextManager[None]:
        return nullcontext() if self._watched is None else self._watched(self.conn)

    def execute(self, sql: str, parameters: Any = (), /) -> Any:
        cur = self._cursor(self.conn)
        with self._watch():
            cur.execute(to_format_style(sql), tuple(parameters))
        return cur

    def executemany(self, sql: str, parameters: Any, /) -> Any:
        cur = self._cursor(self.conn)
        rows = [tuple(p) for p in parameters]
        if rows:
            with self._watch():
                cur.executemany(to_format_style(sql), rows)
        return cur


class ServerBase(SqlBase):
    """A pool of connections to one database; subclasses give the driver's parts."""

    #: the driver's root error class (set when the driver is imported)
    driver_error: type[Exception]
    #: the driver's error for a value the engine cannot store (PostgreSQL: a NUL character;
    #: MySQL: text longer than an indexed column)
    data_error: type[Exception]

    def __init__(
        self,
        url: StoreUrl,
        *,
        clock: Clock | None,
        migrations: tuple[Migration, ...],
        pool_size: int,
        connect_timeout_s: float,
        statement_timeout_s: float = STATEMENT_TIMEOUT_S,
    ) -> None:
        self.url = url
        self._clock = clock or SystemClock()
        self._local = threading.local()
        self._connect_timeout_s = connect_timeout_s
        self._watchdog = Watchdog(statement_timeout_s)
        try:
            first = self._connect()
        except self.driver_error as exc:
            raise StoreError(f"cannot connect to the database {url.shown}: {exc}") from exc
        try:
            self._migrate(first, migrations)
        except BaseException:
            self._close_connection(first)
            raise
        self._open_pool(first, pool_size)

    # the driver's parts ------------------------------------------------------------------
    @abstractmethod
    def _connect(self) -> Any:
        """A new connection in autocommit mode, rows as dictionaries."""

    @abstractmethod
    def _open_pool(self, first: Any, size: int) -> None:
        """Open the pool (``first`` may join it or be closed)."""

    @abstractmethod
    def _borrow(self) -> AbstractContextManager[Any]:
        """A healthy connection from the pool, returned to it (or dropped, if broken) after."""

    @abstractmethod
    def _transaction(self, conn: Any) -> AbstractContextManager[None]:
        """Begin on ``conn``; commit when the block ends, roll back if it raises."""

    @abstractmethod
    def _cursor(self, conn: Any) -> Any: ...

    @abstractmethod
    def _close_connection(self, conn: Any) -> None: ...

    @abstractmethod
    def _socket(self, conn: Any) -> int:
        """The file descriptor of the connection's socket."""

    @abstractmethod
    def _lock_migrations(self, tx: DriverTx) -> None:
        """Wait (bounded) for the lock only one opener of this database holds at a time."""

    @abstractmethod
    def _unlock_migrations(self, tx: DriverTx) -> None: ...

    @abstractmethod
    def _is_transient(self, exc: BaseException) -> bool:
        """Whether running the transaction again may succeed (deadlock, serialization
        failure, a dropped or refused connection)."""

    @abstractmethod
    def _is_disconnect(self, exc: BaseException) -> bool:
        """Whether ``exc`` means the connection was lost."""

    # transactions and reads ---------------------------------------------------------------
    @contextmanager
    def _write(self) -> Iterator[DriverTx]:
        if getattr(self._local, "tx", None) is not None:
            raise StoreError("a store write was started inside another (a bug in memstrata)")
        committing = False
        with self._borrow() as conn:
            tx = DriverTx(conn, self._cursor, self._watched)
            try:
                transaction = self._transaction(conn)
                with self._watched(conn):
                    transaction.__enter__()
                try:
                    self._local.tx = tx
                    try:
                        yield tx
                    finally:
                        self._local.tx = None
                except BaseException:
                    with self._watched(conn):  # the rollback
                        if not transaction.__exit__(*sys.exc_info()):
                            raise
                else:
                    committing = True
                    with self._watched(conn, committing=True):
                        transaction.__exit__(None, None, None)
            except self.driver_error as exc:
                if committing and self._is_disconnect(exc):
                    raise StoreError(
                        f"the connection to {self.url.shown} was lost while a write was being "
                        "committed: it may or may not have been stored; read it back before "
                        "writing it again"
                    ) from exc
                raise

    @contextmanager
    def _watched(self, conn: Any, *, committing: bool = False) -> Iterator[None]:
        """The block (one statement, a commit) bounded by the watchdog: when the server has
        not answered within its timeout, the connection is cut and this raises a
        :class:`StoreError`, which is not retried (the wait already took longer than the
        retries' deadline)."""
        fd = self._socket(conn)
        with self._watchdog.watch(lambda: shut_down(fd)) as watch:
            try:
                yield
            except BaseException as exc:
                if not watch.fired:
                    raise
                waited = f"{self._watchdog.timeout_s:g} s"
                if committing:
                    raise StoreError(
                        f"the database {self.url.shown} did not answer within {waited} while a "
                        "write was being committed: it may or may not have been stored; read "
                        "it back before writing it again"
                    ) from exc
                raise StoreError(
                    f"the database {self.url.shown} did not answer within {waited}; the "
                    "connection was closed and nothing was written; retry later"
                ) from exc

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        tx: DriverTx | None = getattr(self._local, "tx", None)
        if tx is not None:
            return list(tx.execute(sql, params).fetchall())
        with self._borrow() as conn:
            return list(DriverTx(conn, self._cursor, self._watched).execute(sql, params).fetchall())

    def _in_write(self) -> bool:
        return getattr(self._local, "tx", None) is not None

    def _unit(self, method: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """``method`` run as one unit of work: retried on transient failures, its driver
        errors translated into the tree."""
        if self._in_write():  # part of a larger unit: that one retries
            return method(self, *args, **kwargs)
        try:
            return retry_transient(lambda: method(self, *args, **kwargs), self._is_transient)
        except self.driver_error as exc:
            raise self._translate(exc, method.__name__) from exc

    def _translate(self, exc: Exception, doing: str) -> MemstrataError:
        what = doing.replace("_", " ")
        if isinstance(exc, self.data_error):
            return InvalidInputError(
                f"the database {self.url.shown} cannot store this ({what}): {exc}; "
                "nothing was written"
            )
        if self._is_disconnect(exc):
            return StoreError(f"cannot reach the database {self.url.shown} ({what}): {exc}")
        if self._is_transient(exc):
            return BusyError(
                f"the database {self.url.shown} kept refusing {what} (deadlock or "
                f"serialization failure: {exc}); nothing was written; retry later"
            )
        return StoreError(f"the database {self.url.shown} failed ({what}): {exc}")

    # named locks ---------------------------------------------------------------------------
    @contextmanager
    def hold(self, name: str, *, wait_s: float) -> Iterator[None]:
        """:meth:`memstrata.ports.LockingStore.hold`: a session lock of the server on a
        connection kept for the block (it ends with the session if the process dies)."""
        key = digest(name)
        deadline = time.monotonic() + max(0.0, wait_s)
        try:
            with self._borrow() as conn:
                tx = DriverTx(conn, self._cursor)
                while not self._try_named_lock(tx, key):
                    if time.monotonic() >= deadline:
                        raise waited(f"the lock {name!r} on {self.url.shown}", wait_s)
                    time.sleep(POLL_S)
                try:
                    yield
                finally:
                    try:
                        self._release_named_lock(tx, key)
                    except self.driver_error:  # the session ends, and its lock with it
                        log.warning("cannot release the lock %r on %s", name, self.url.shown)
        except self.driver_error as exc:
            raise self._translate(exc, "hold a lock") from exc

    @abstractmethod
    def _try_named_lock(self, tx: DriverTx, key: str) -> bool:
        """Take the session lock ``key`` now if it is free; whether it was taken."""

    @abstractmethod
    def _release_named_lock(self, tx: DriverTx, key: str) -> None: ...

    # migrations ----------------------------------------------------------------------------
    def _migrate(self, conn: Any, migrations: tuple[Migration, ...]) -> None:
        tx = DriverTx(conn, self._cursor)
        try:
            self._lock_migrations(tx)
        except self.driver_error as exc:
            raise StoreError(f"cannot lock {self.url.shown} to migrate it: {exc}") from exc
        try:
            tx.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations "
                "(name VARCHAR(100) PRIMARY KEY, applied_at VARCHAR(40) NOT NULL)"
            )
            rows = tx.execute("SELECT name FROM schema_migrations").fetchall()
            for migration in pending(migrations, {r["name"] for r in rows}):
                try:
                    with self._transaction(conn):
                        for statement in migration.statements:
                            tx.execute(statement)
                        tx.execute(
                            "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                            (migration.name, format_time(self._clock.now())),
                        )
                except self.driver_error as exc:
                    raise MigrationError(
                        f"migration {migration.name} failed on {self.url.shown}: {exc}"
                    ) from exc
                log.info("applied migration %s to %s", migration.name, self.url.shown)
        except self.driver_error as exc:
            raise StoreError(f"cannot read the schema of {self.url.shown}: {exc}") from exc
        finally:
            try:
                self._unlock_migrations(tx)
            except self.driver_error:
                log.warning("cannot release the migration lock on %s", self.url.shown)


def units(cls: type[S]) -> type[S]:
    """``cls`` with each method of :data:`UNITS` run as one unit of work
    (:meth:`ServerBase._unit`); generators are left as they are (each page they read is one)."""
    for name in UNITS:
        method = getattr(cls, name, None)
        if method is None or inspect.isgeneratorfunction(method):
            continue
        setattr(cls, name, _as_unit(method))
    return cls


def _as_unit(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def unit(self: ServerBase, *args: Any, **kwargs: Any) -> Any:
        return self._unit(method, args, kwargs)

    return unit
