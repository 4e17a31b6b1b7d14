"""The record store on MySQL 8 or MariaDB 10.5+ (PyMySQL, pure Python; the ``mysql`` extra).

The driver is imported when a store is opened, never at import time. The URL is
``mysql://user:password@host:port/database`` (``?unix_socket=/path`` for a local socket).
Each connection speaks ANSI SQL quoting (``sql_mode`` with ``ANSI_QUOTES``), utf8mb4, READ
COMMITTED, and counts matched rather than changed rows (``CLIENT.FOUND_ROWS``), as the shared
SQL expects.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any, Final
from urllib.parse import parse_qs, unquote, urlsplit

from memstrata.errors import BusyError, ConfigError
from memstrata.ports import Clock
from memstrata.store.migrations import Migration
from memstrata.store.server.base import DriverTx, ServerBase, units
from memstrata.store.server.mysql_compaction import MysqlCompaction
from memstrata.store.server.mysql_schema import migrations as mysql_migrations
from memstrata.store.server.pool import ConnectionPool
from memstrata.store.server.watchdog import STATEMENT_TIMEOUT_S
from memstrata.store.sql.dialect import Dialect, mysql_ignore
from memstrata.store.sql.records import RecordTables
from memstrata.store.url import StoreUrl

_SESSION: Final = (
    "SET SESSION sql_mode = 'ANSI_QUOTES,STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION'",
    "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
)
_LOCK_FEED: Final = (
    'INSERT INTO feed_heads ("user", writes) VALUES (?, 1) '
    "ON DUPLICATE KEY UPDATE writes = writes + 1"
)
#: lock wait timeout, deadlock: the transaction was rolled back and may run again
_ROLLED_BACK: Final = frozenset({1205, 1213})
#: cannot connect, server gone away, connection lost, connection killed, session timeout
_DISCONNECTS: Final = frozenset({2003, 2006, 2013, 1927, 4031})
_MIGRATION_WAIT_S: Final = 60


def _driver() -> Any:
    try:
        import pymysql
    except ImportError as exc:
        raise ConfigError(
            "a mysql:// store needs the MySQL driver: pip install 'memstrata[mysql]'"
        ) from exc
    return pymysql


def migrations_for(version: str) -> tuple[Migration, ...]:
    """The migrations for a server reporting ``version``: its tables in MariaDB's or MySQL
    8's binary, no-pad collation."""
    mariadb = "mariadb" in version.lower()
    return mysql_migrations("utf8mb4_nopad_bin" if mariadb else "utf8mb4_0900_bin")


def connect_args(url: str) -> dict[str, Any]:
    """PyMySQL's ``connect`` arguments for a ``mysql://`` URL."""
    pymysql = _driver()
    parts = urlsplit(url)
    query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
    args: dict[str, Any] = {
        "host": parts.hostname or "localhost",
        "port": parts.port or 3306,
        "user": unquote(parts.username or ""),
        "password": unquote(parts.password or ""),
        "charset": "utf8mb4",
        "autocommit": True,
        "cursorclass": pymysql.cursors.DictCursor,
        "client_flag": pymysql.constants.CLIENT.FOUND_ROWS,
    }
    database = unquote(parts.path.strip("/"))
    if database:
        args["database"] = database
    if "unix_socket" in query:
        args["unix_socket"] = query["unix_socket"]
    return args


class MysqlBase(ServerBase):
    def __init__(
        self,
        url: StoreUrl,
        *,
        clock: Clock | None = None,
        migrations: tuple[Migration, ...] | None = None,
        pool_size: int = 8,
        connect_timeout_s: float = 10.0,
        statement_timeout_s: float = STATEMENT_TIMEOUT_S,
    ) -> None:
        self._pymysql = _driver()
        self.driver_error = self._pymysql.Error
        self.data_error = self._pymysql.DataError
        self.dialect = Dialect(
            name="mysql",
            for_update=" FOR UPDATE",
            unique_errors=(self._pymysql.IntegrityError,),
            ignore_duplicates=mysql_ignore,
            lock_feed=_LOCK_FEED,
            joined="CONCAT({}, CHAR(31), {})",
        )
        self._args = connect_args(url.raw)
        if not self._args.get("database"):
            raise ConfigError(f"the store URL {url.shown} names no database")
        self._args["connect_timeout"] = max(1, round(connect_timeout_s))
        self._given_migrations = migrations
        self._pool: ConnectionPool | None = None
        super().__init__(
            url,
            clock=clock,
            migrations=(),  # chosen once the server's kind is known (see _migrate)
            pool_size=pool_size,
            connect_timeout_s=connect_timeout_s,
            statement_timeout_s=statement_timeout_s,
        )

    def _migrate(self, conn: Any, migrations: tuple[Migration, ...]) -> None:
        if self._given_migrations is not None:
            chosen = self._given_migrations
        else:
            with conn.cursor() as cur:
                cur.execute("SELECT VERSION() AS v")
                chosen = migrations_for(str(cur.fetchone()["v"]))
        super()._migrate(conn, chosen)

    def _connect(self) -> Any:
        # PyMySQL bounds only the TCP connect by connect_timeout: the handshake's reads are
        # bounded here too (a hung server), and unbounded after it (the watchdog bounds each
        # statement, and compaction's may run long)
        args = {**self._args, "read_timeout": self._args["connect_timeout"]}
        conn = self._pymysql.connect(**args)
        conn._read_timeout = None  # PyMySQL reads it before each read; no public setter
        try:
            with conn.cursor() as cur:
                for statement in _SESSION:
                    cur.execute(statement)
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_pool(self, first: Any, size: int) -> None:
        self._pool = ConnectionPool(
            self._connect,
            size=size,
            timeout_s=self._connect_timeout_s,
            alive=self._alive,
            broken=self._broken,
            close=self._close_connection,
        )
        self._pool.put_idle(first)

    @staticmethod
    def _alive(conn: Any) -> bool:
        try:
            conn.ping(reconnect=False)
        except Exception:
            return False
        return True

    def _borrow(self) -> AbstractContextManager[Any]:
        assert self._pool is not None
        return self._pool.connection()

    @contextmanager
    def _transaction(self, conn: Any) -> Iterator[None]:
        conn.begin()
        try:
            yield
        except BaseException:
            # a lost connection cannot roll back: the server rolls the transaction back
            with suppress(self._pymysql.Error):
                conn.rollback()
            raise
        conn.commit()

    def _cursor(self, conn: Any) -> Any:
        return conn.cursor()

    def _close_connection(self, conn: Any) -> None:
        conn.close()

    def _socket(self, conn: Any) -> int:
        sock = getattr(conn, "_sock", None)  # PyMySQL names no public accessor
        return -1 if sock is None else int(sock.fileno())

    def _broken(self, exc: BaseException) -> bool:
        """Whether the connection whose use raised ``exc`` is lost (a watchdog's timeout
        comes as a :class:`StoreError` caused by the lost connection)."""
        return self._is_disconnect(exc) or (
            exc.__cause__ is not None and self._is_disconnect(exc.__cause__)
        )

    def _lock_migrations(self, tx: DriverTx) -> None:
        row = tx.execute(
            "SELECT GET_LOCK(CONCAT('memstrata-migrate:', DATABASE()), ?) AS got",
            (_MIGRATION_WAIT_S,),
        ).fetchone()
        if row["got"] != 1:
            raise BusyError(
                f"another process has been migrating {self.url.shown} for "
                f"{_MIGRATION_WAIT_S} s; retry later"
            )

    def _unlock_migrations(self, tx: DriverTx) -> None:
        tx.execute("SELECT RELEASE_LOCK(CONCAT('memstrata-migrate:', DATABASE()))")

    def _try_named_lock(self, tx: DriverTx, key: str) -> bool:
        # a lock name is at most 64 characters: the digest (40) and its prefix; one
        # database's locks are apart from another's by the database's own digest
        row = tx.execute(
            "SELECT GET_LOCK(CONCAT('ms:', LEFT(SHA1(DATABASE()), 16), ':', ?), 0) AS got",
            (key,),
        ).fetchone()
        return bool(row and row["got"] == 1)

    def _release_named_lock(self, tx: DriverTx, key: str) -> None:
        tx.execute("SELECT RELEASE_LOCK(CONCAT('ms:', LEFT(SHA1(DATABASE()), 16), ':', ?))", (key,))

    def _code(self, exc: BaseException) -> int | None:
        args = getattr(exc, "args", ())
        return args[0] if args and isinstance(args[0], int) else None

    def _is_transient(self, exc: BaseException) -> bool:
        return self._code(exc) in _ROLLED_BACK or self._is_disconnect(exc)

    def _is_disconnect(self, exc: BaseException) -> bool:
        if isinstance(exc, self._pymysql.InterfaceError):
            return True
        return isinstance(exc, self._pymysql.OperationalError) and self._code(exc) in _DISCONNECTS

    def close(self) -> None:
        self._watchdog.close()
        if self._pool is not None:
            self._pool.close()


@units
class MysqlStore(RecordTables, MysqlCompaction, MysqlBase):
    """:class:`memstrata.ports.RecordStore` on MySQL or MariaDB; also
    :class:`memstrata.store.compaction.Compactable`."""
