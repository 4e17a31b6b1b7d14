"""Compaction on MySQL and MariaDB (InnoDB): ``ALTER TABLE ... FORCE, ALGORITHM=INPLACE,
LOCK=NONE`` of each of memstrata's tables, the rebuild ``OPTIMIZE TABLE`` does on InnoDB,
which writes the table and its indexes into a new ``.ibd`` file holding the live rows only
and deletes the old one (see :mod:`memstrata.store.compaction`).

That holds only with ``innodb_file_per_table`` on: a table in the shared system tablespace
(``ibdata1``) is rebuilt inside it, and the pages it leaves are freed, not overwritten, so a
server with it off is refused. The online form lets writes go on during the rebuild; the
statement waits (``lock_wait_timeout``) for transactions open on the table at its start and
end. When the server lets its user read InnoDB's table list, each table's tablespace id is
compared before and after: one not rebuilt is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from memstrata.errors import StoreError
from memstrata.store.compaction import (
    LOCK_TIMEOUT_S,
    PENDING_ERASURES,
    CompactionReport,
    Progress,
    TableCompaction,
    busy_error,
    check_lock_timeout,
    chosen_tables,
    compacted_before,
    failed_error,
    table_names,
)
from memstrata.store.server.base import ServerBase
from memstrata.store.server.mysql_schema import migrations

METHOD: Final = (
    "ALTER TABLE ... FORCE, ALGORITHM=INPLACE, LOCK=NONE per table (OPTIMIZE TABLE's "
    "rebuild): the table and its indexes rewritten into a new .ibd file"
)
LOCKING: Final = (
    "online: reads and writes of each table go on while it is rebuilt; the rebuild waits for "
    "transactions open on the table, and holds an exclusive metadata lock briefly at its "
    "start and end; one table at a time"
)
REMAINS: Final = (
    "the redo log (ib_logfile*) keeps the written and deleted rows until it wraps around "
    "and overwrites them",
    "the undo logs keep the deleted rows until purge frees their pages, which are reused, "
    "not overwritten at once",
    "the binary log, if on, holds each written row, and with binlog_row_image=FULL each "
    "deleted row, until it expires (binlog_expire_logs_seconds, expire_logs_days, PURGE "
    "BINARY LOGS); replicas keep their own relay and binary logs",
    "backups and dumps keep them for their retention",
    "the old .ibd files' blocks, freed to the file system, keep their bytes until reused "
    "(encrypted storage, or a file system that discards freed blocks, bounds this)",
)
_ACCESS_DENIED: Final = frozenset({1044, 1142, 1227})  # database, table, global privilege
_LOCK_WAIT: Final = 1205
_UNKNOWN_VARIABLE: Final = 1193
#: InnoDB's table list: MariaDB's name, then MySQL 8's. InnoDB names a table
#: ``database/table`` in the file-name encoding (``memstrata-prod`` is ``memstrata@002dprod``)
_SPACES: Final = (
    "SELECT NAME AS name, SPACE AS space FROM information_schema.INNODB_SYS_TABLES "
    "WHERE NAME LIKE %s",
    "SELECT NAME AS name, SPACE AS space FROM information_schema.INNODB_TABLES WHERE NAME LIKE %s",
)
#: the current database's name as InnoDB writes it
_ENCODED_DATABASE: Final = "SELECT CAST(CONVERT(DATABASE() USING filename) AS BINARY) AS d"


class MysqlCompaction(ServerBase):
    """:class:`memstrata.store.compaction.Compactable` on MySQL and MariaDB."""

    def compact(
        self,
        *,
        tables: Sequence[str] | None = None,
        dry_run: bool = False,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        progress: Progress | None = None,
    ) -> CompactionReport:
        check_lock_timeout(lock_timeout_s)
        known = table_names(s for m in migrations("utf8mb4_bin") for s in m.statements)
        names = chosen_tables(known, tables)
        try:
            conn = self._connect()
        except self.driver_error as exc:
            raise self._translate(exc, "compact") from exc
        done: list[TableCompaction] = []
        try:
            with conn.cursor() as cur:
                plan = self._compaction_plan(cur, names)
                if dry_run:
                    done = [TableCompaction(t, size, size, 0) for t, size in plan]
                else:
                    cur.execute(f"SET SESSION lock_wait_timeout = {max(1, round(lock_timeout_s))}")
                    for table, size in plan:
                        one = self._rebuild(cur, table, size, done, lock_timeout_s)
                        done.append(one)
                        if progress is not None:
                            progress(one)
                cur.execute(PENDING_ERASURES)
                pending = int(cur.fetchone()["n"])
        except self.driver_error as exc:
            raise failed_error(self.url.shown, exc, done) from exc
        finally:
            self._close_connection(conn)
        return CompactionReport(
            engine="mysql",
            store=self.url.shown,
            method=METHOD,
            locking=LOCKING,
            dry_run=dry_run,
            tables=tuple(done),
            remains=REMAINS,
            erasures_pending=pending,
        )

    def _compaction_plan(self, cur: Any, names: list[str]) -> list[tuple[str, int]]:
        """Each table to compact, in ``names`` order, with its size; a :class:`StoreError`
        when a rebuild could not drop the old pages (no file per table, not InnoDB)."""
        cur.execute("SELECT @@innodb_file_per_table AS on_")
        if not cur.fetchone()["on_"]:
            raise StoreError(
                f"cannot compact {self.url.shown}: innodb_file_per_table is off, so a rebuilt "
                "table stays in the shared system tablespace (ibdata1), whose freed pages "
                "keep the deleted rows; turn it on (SET GLOBAL innodb_file_per_table = ON, "
                "and in the server's configuration) and run compact again: each table then "
                "moves into its own file; nothing was compacted"
            )
        try:  # MySQL 8 caches table sizes for a day by default
            cur.execute("SET SESSION information_schema_stats_expiry = 0")
        except self.driver_error as exc:
            if _code(exc) != _UNKNOWN_VARIABLE:
                raise
        sizes = self._sizes(cur, names)
        other = [t for t in names if sizes.get(t, (0, "InnoDB"))[1].lower() != "innodb"]
        if other:
            raise StoreError(
                f"cannot compact {self.url.shown}: not InnoDB tables: {', '.join(other)}; "
                "nothing was compacted"
            )
        return [(t, sizes[t][0]) for t in names if t in sizes]

    @staticmethod
    def _sizes(cur: Any, names: list[str]) -> dict[str, tuple[int, str]]:
        marks = ", ".join(["%s"] * len(names))
        cur.execute(
            "SELECT TABLE_NAME AS t, ENGINE AS engine, "
            "COALESCE(DATA_LENGTH, 0) + COALESCE(INDEX_LENGTH, 0) + COALESCE(DATA_FREE, 0) AS b "
            "FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "
            f"AND TABLE_NAME IN ({marks})",
            names,
        )
        return {r["t"]: (int(r["b"]), str(r["engine"] or "")) for r in cur.fetchall()}

    def _spaces(self, cur: Any) -> dict[str, int] | None:
        """Each table's InnoDB tablespace id, or None when the user may not read them."""
        try:
            cur.execute(_ENCODED_DATABASE)
        except self.driver_error:  # a server without the file-name character set
            cur.execute("SELECT DATABASE() AS d")
        found = cur.fetchone()["d"]
        prefix = (found.decode("utf-8") if isinstance(found, bytes) else str(found)) + "/"
        pattern = "".join("\\" + c if c in "\\%_" else c for c in prefix) + "%"
        for query in _SPACES:
            try:
                cur.execute(query, (pattern,))
            except self.driver_error:
                continue
            return {
                str(r["name"]).removeprefix(prefix): int(r["space"])
                for r in cur.fetchall()
                if str(r["name"]).startswith(prefix)
            }
        return None

    def _rebuild(
        self,
        cur: Any,
        table: str,
        size: int,
        done: list[TableCompaction],
        lock_timeout_s: float,
    ) -> TableCompaction:
        before = self._spaces(cur)
        try:
            cur.execute(f'ALTER TABLE "{table}" FORCE, ALGORITHM=INPLACE, LOCK=NONE')
        except self.driver_error as exc:
            code = _code(exc)
            if code in _ACCESS_DENIED:
                raise StoreError(
                    f"insufficient privilege to compact {self.url.shown}: ALTER TABLE ... "
                    f"FORCE needs the ALTER, CREATE and INSERT privileges on each table "
                    f"(GRANT ALTER, CREATE, INSERT ON <database>.* TO <user>); refused on "
                    f"{table} ({exc.args[-1]}); tables compacted before it: "
                    f"{compacted_before(done)}"
                ) from exc
            if code == _LOCK_WAIT:
                raise busy_error(self.url.shown, table, lock_timeout_s, done) from exc
            raise
        after = self._spaces(cur)
        if (
            before is not None
            and after is not None
            and table in before
            and before.get(table) == after.get(table)
        ):
            raise StoreError(
                f"compact {self.url.shown}: ALTER TABLE {table} FORCE did not rebuild it "
                f"(tablespace {after.get(table)} kept)"
            )
        new_size = self._sizes(cur, [table]).get(table, (size, ""))[0]
        return TableCompaction(table, size, new_size, 1)


def _code(exc: BaseException) -> int | None:
    args = getattr(exc, "args", ())
    return args[0] if args and isinstance(args[0], int) else None
