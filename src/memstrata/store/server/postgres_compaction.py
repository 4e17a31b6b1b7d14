"""Compaction on PostgreSQL: ``VACUUM (FULL)`` of each of memstrata's tables, which writes the
table, its TOAST table and each index into new files holding the live rows only and drops
the old files (see :mod:`memstrata.store.compaction`).

VACUUM does not fail for a table its user may not vacuum: it warns and skips it. So the
privilege (owner of the table or of the database, superuser, or on PostgreSQL 17+ the
MAINTAIN privilege) is checked for every table before any is touched, and each table's files
(``relfilenode`` of the table, its TOAST table and their indexes) are compared before and
after: a file not rewritten is an error, not a silent success.

VACUUM FULL copies a deleted row that a transaction still open could see (a long
transaction, an idle one left open, a replication slot's or a standby's horizon): its VERBOSE
report says how many, which the report keeps per table (``dead_kept``) so that the caller can
run it again once that transaction has ended.

It runs on a connection of its own (autocommit: VACUUM cannot run in a transaction), with
``lock_timeout`` set so that it never queues for long behind another transaction: a waiting
ACCESS EXCLUSIVE request would block every later reader of the table too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Final, NamedTuple

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
    failed_error,
    lock_timeout_ms,
    table_names,
)
from memstrata.store.server.base import ServerBase
from memstrata.store.server.postgres_schema import MIGRATIONS

METHOD: Final = "VACUUM (FULL) per table: the table, its TOAST table and its indexes rewritten"
LOCKING: Final = (
    "each table is locked ACCESS EXCLUSIVE while it is rewritten: its reads and writes wait "
    "for about the time it takes to copy the table and rebuild its indexes; one table at a time"
)
REMAINS: Final = (
    "the write-ahead log (pg_wal) keeps the written and deleted rows until its segments are "
    "recycled and overwritten, after checkpoints (longer with a large max_wal_size, "
    "wal_keep_size or a replication slot)",
    "archived WAL (archive_command) and base backups keep them for their retention",
    "a streaming standby replays the rewrite, but keeps its own pg_wal; a logical replica, a "
    "dump or a snapshot is a copy of its own",
    "the old files' blocks, freed to the file system, keep their bytes until reused "
    "(encrypted storage, or a file system that discards freed blocks, bounds this)",
)

_PLAN: Final = """
SELECT c.oid, n.nspname, c.relname, pg_total_relation_size(c.oid) AS bytes,
       pg_get_userbyid(c.relowner) AS owner,
       pg_has_role(c.relowner, 'USAGE') OR pg_has_role(d.datdba, 'USAGE'){maintain} AS may
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_database d ON d.datname = current_database()
WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname::text = ANY(%s)
"""
#: VACUUM VERBOSE's count of the deleted rows it kept (the server's messages in English)
_KEPT: Final = re.compile(r"^(\d+) dead row versions cannot be removed yet")
#: each file of a table: its own, its TOAST table's, and every index of either
_FILES: Final = """
WITH t AS (SELECT oid, reltoastrelid FROM pg_class WHERE oid = %(oid)s)
SELECT c.oid::regclass::text AS name, c.relfilenode AS node
FROM pg_class c, t WHERE c.oid = t.oid OR c.oid = t.reltoastrelid
UNION ALL
SELECT x.indexrelid::regclass::text, i.relfilenode
FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid, t
WHERE x.indrelid = t.oid OR x.indrelid = t.reltoastrelid
"""


class Notice(NamedTuple):
    """What the server said while a statement ran (a warning, VACUUM VERBOSE's report)."""

    severity: str  # not translated: INFO, WARNING...
    message: str
    detail: str


class PostgresCompaction(ServerBase):
    """:class:`memstrata.store.compaction.Compactable` on PostgreSQL."""

    _psycopg: Any

    def compact(
        self,
        *,
        tables: Sequence[str] | None = None,
        dry_run: bool = False,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        progress: Progress | None = None,
    ) -> CompactionReport:
        check_lock_timeout(lock_timeout_s)
        known = table_names(s for m in MIGRATIONS for s in m.statements)
        names = chosen_tables(known, tables)
        try:
            conn = self._connect()
        except self.driver_error as exc:
            raise self._translate(exc, "compact") from exc
        notices: list[Notice] = []
        # a notice's fields can be read only while the handler runs
        conn.add_notice_handler(
            lambda d: notices.append(
                Notice(
                    str(d.severity_nonlocalized or ""),
                    str(d.message_primary or ""),
                    str(d.message_detail or ""),
                )
            )
        )
        done: list[TableCompaction] = []
        try:
            plan = self._compaction_plan(conn, names)
            if dry_run:
                done = [TableCompaction(r["relname"], r["bytes"], r["bytes"], 0) for r in plan]
            else:
                conn.execute(f"SET lock_timeout = {lock_timeout_ms(lock_timeout_s)}")
                for row in plan:
                    notices.clear()
                    one = self._vacuum_full(conn, row, notices, done, lock_timeout_s)
                    done.append(one)
                    if progress is not None:
                        progress(one)
            pending = int(conn.execute(PENDING_ERASURES).fetchone()["n"])
        except self.driver_error as exc:
            raise failed_error(self.url.shown, exc, done) from exc
        finally:
            conn.close()
        return CompactionReport(
            engine="postgresql",
            store=self.url.shown,
            method=METHOD,
            locking=LOCKING,
            dry_run=dry_run,
            tables=tuple(done),
            remains=REMAINS,
            erasures_pending=pending,
        )

    def _compaction_plan(self, conn: Any, names: list[str]) -> list[dict[str, Any]]:
        """Each table to compact, in ``names`` order, with its size; a
        :class:`StoreError` naming every table the user may not vacuum."""
        version = int(conn.execute("SHOW server_version_num").fetchone()["server_version_num"])
        maintain = " OR has_table_privilege(c.oid, 'MAINTAIN')" if version >= 170000 else ""
        rows = conn.execute(_PLAN.format(maintain=maintain), (names,)).fetchall()
        order = {name: i for i, name in enumerate(names)}
        plan = sorted(rows, key=lambda r: order[r["relname"]])
        refused = [r for r in plan if not r["may"]]
        if refused:
            user = conn.execute("SELECT current_user AS u").fetchone()["u"]
            who = "its owner, the database's owner or a superuser" + (
                ", or the MAINTAIN privilege on it" if maintain else ""
            )
            listed = ", ".join(f"{r['relname']} (owner {r['owner']})" for r in refused)
            raise StoreError(
                f"insufficient privilege to compact {self.url.shown}: VACUUM FULL of a table "
                f"needs {who}; {user} may not vacuum {listed}; nothing was compacted"
            )
        return plan

    def _vacuum_full(
        self,
        conn: Any,
        row: dict[str, Any],
        notices: list[Notice],
        done: list[TableCompaction],
        lock_timeout_s: float,
    ) -> TableCompaction:
        from psycopg import sql

        psycopg = self._psycopg
        before = {r["name"]: r["node"] for r in conn.execute(_FILES, {"oid": row["oid"]})}
        try:
            conn.execute(
                sql.SQL("VACUUM (FULL, VERBOSE) {}").format(
                    sql.Identifier(row["nspname"], row["relname"])
                )
            )
        except psycopg.errors.LockNotAvailable as exc:
            raise busy_error(self.url.shown, row["relname"], lock_timeout_s, done) from exc
        after = {r["name"]: r["node"] for r in conn.execute(_FILES, {"oid": row["oid"]})}
        kept = sorted(name for name, node in before.items() if after.get(name) == node)
        if kept:
            warned = [n.message for n in notices if n.severity != "INFO"]
            said = "; ".join(warned) or "the server gave no reason"
            raise StoreError(
                f"compact {self.url.shown}: VACUUM FULL did not rewrite {', '.join(kept)} ({said})"
            )
        size = conn.execute("SELECT pg_total_relation_size(%s) AS b", (row["oid"],)).fetchone()
        return TableCompaction(
            row["relname"], row["bytes"], size["b"], len(before), _dead_kept(notices)
        )


def _dead_kept(notices: list[Notice]) -> int | None:
    """How many deleted rows VACUUM FULL kept, from its VERBOSE report; None when it said
    nothing memstrata reads (messages in another language)."""
    for notice in notices:
        found = _KEPT.match(notice.detail)
        if found:
            return int(found.group(1))
    return None
