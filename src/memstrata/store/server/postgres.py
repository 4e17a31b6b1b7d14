"""The record store on PostgreSQL (psycopg 3 and its pool; the ``postgres`` extra).

The driver is imported when a store is opened, never at import time. The URL is libpq's
(``postgresql://user:password@host:port/database?options=...``); a test gives each case its
own schema with ``options=-csearch_path%3D<schema>``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from memstrata.errors import ConfigError
from memstrata.ports import Clock
from memstrata.store.migrations import Migration
from memstrata.store.server.base import DriverTx, ServerBase, units
from memstrata.store.server.postgres_compaction import PostgresCompaction
from memstrata.store.server.postgres_schema import MIGRATIONS
from memstrata.store.server.watchdog import STATEMENT_TIMEOUT_S
from memstrata.store.sql.dialect import Dialect, postgres_ignore
from memstrata.store.sql.records import RecordTables
from memstrata.store.url import StoreUrl

_LOCK_FEED = (
    'INSERT INTO feed_heads ("user", writes) VALUES (?, 1) '
    'ON CONFLICT ("user") DO UPDATE SET writes = feed_heads.writes + 1'
)
_MIGRATION_LOCK = "SELECT pg_advisory_lock(hashtext('memstrata-migrate:' || current_schema()))"
_MIGRATION_UNLOCK = "SELECT pg_advisory_unlock(hashtext('memstrata-migrate:' || current_schema()))"


def driver() -> Any:
    """psycopg and psycopg_pool, or a :class:`ConfigError` saying how to install them."""
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise ConfigError(
            "a postgresql:// store needs the PostgreSQL driver: pip install 'memstrata[postgres]'"
        ) from exc
    return psycopg, psycopg_pool


def conninfo(url: StoreUrl) -> str:
    """libpq's own scheme for ``url``, whichever alias named it (postgres://,
    postgresql+psycopg://)."""
    return "postgresql://" + url.raw.split("://", 1)[1]


class PostgresBase(ServerBase):
    def __init__(
        self,
        url: StoreUrl,
        *,
        clock: Clock | None = None,
        migrations: tuple[Migration, ...] = MIGRATIONS,
        pool_size: int = 8,
        connect_timeout_s: float = 10.0,
        statement_timeout_s: float = STATEMENT_TIMEOUT_S,
    ) -> None:
        self._psycopg, self._psycopg_pool = driver()
        psycopg = self._psycopg
        self.driver_error = psycopg.Error
        self.data_error = psycopg.DataError
        self.dialect = Dialect(
            name="postgresql",
            for_update=" FOR UPDATE",
            unique_errors=(psycopg.IntegrityError,),
            ignore_duplicates=postgres_ignore,
            lock_feed=_LOCK_FEED,
        )
        self._conninfo = conninfo(url)
        self._pool: Any = None
        super().__init__(
            url,
            clock=clock,
            migrations=migrations,
            pool_size=pool_size,
            connect_timeout_s=connect_timeout_s,
            statement_timeout_s=statement_timeout_s,
        )

    def _connect_kwargs(self) -> dict[str, Any]:
        from psycopg.rows import dict_row

        return {
            "autocommit": True,
            "row_factory": dict_row,
            "connect_timeout": max(1, round(self._connect_timeout_s)),
        }

    def _connect(self) -> Any:
        return self._psycopg.connect(self._conninfo, **self._connect_kwargs())

    def _open_pool(self, first: Any, size: int) -> None:
        first.close()
        pool_cls = self._psycopg_pool.ConnectionPool
        self._pool = pool_cls(
            self._conninfo,
            min_size=1,
            max_size=size,
            kwargs=self._connect_kwargs(),
            timeout=self._connect_timeout_s,
            open=True,
            name="memstrata-store",
        )

    def _borrow(self) -> AbstractContextManager[Any]:
        return self._pool.connection()  # type: ignore[no-any-return]

    @contextmanager
    def _transaction(self, conn: Any) -> Iterator[None]:
        with conn.transaction():
            yield

    def _cursor(self, conn: Any) -> Any:
        return conn.cursor()

    def _close_connection(self, conn: Any) -> None:
        conn.close()

    def _socket(self, conn: Any) -> int:
        return int(conn.fileno())

    def _lock_migrations(self, tx: DriverTx) -> None:
        tx.execute(_MIGRATION_LOCK)

    def _unlock_migrations(self, tx: DriverTx) -> None:
        tx.execute(_MIGRATION_UNLOCK)

    def _try_named_lock(self, tx: DriverTx, key: str) -> bool:
        row = tx.execute(
            "SELECT pg_try_advisory_lock(hashtext('memstrata:' || current_schema() || ':' || ?))"
            " AS got",
            (key,),
        ).fetchone()
        return bool(row and row["got"])

    def _release_named_lock(self, tx: DriverTx, key: str) -> None:
        tx.execute(
            "SELECT pg_advisory_unlock(hashtext('memstrata:' || current_schema() || ':' || ?))",
            (key,),
        )

    def _is_transient(self, exc: BaseException) -> bool:
        return isinstance(exc, self._psycopg.OperationalError)

    def _is_disconnect(self, exc: BaseException) -> bool:
        psycopg = self._psycopg
        if isinstance(exc, self._psycopg_pool.PoolTimeout):
            return True
        if isinstance(exc, psycopg.errors.TransactionRollback):
            return False
        return isinstance(exc, psycopg.OperationalError)

    def close(self) -> None:
        self._watchdog.close()
        if self._pool is not None:
            self._pool.close()


@units
class PostgresStore(RecordTables, PostgresCompaction, PostgresBase):
    """:class:`memstrata.ports.RecordStore` on PostgreSQL; also
    :class:`memstrata.store.compaction.Compactable`."""
