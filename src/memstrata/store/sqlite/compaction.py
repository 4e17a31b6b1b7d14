"""Compaction on SQLite: ``VACUUM``, then a checkpoint of the write-ahead log.

Deleted content is already overwritten on SQLite (``secure_delete`` on every connection), and
every deletion on request checkpoints the log, overwrites what page rebuilds left of the
erased text in free space, and proves both files free of it
(:mod:`memstrata.store.sqlite.erasure`), so compaction erases nothing more here: ``VACUUM``
rebuilds the file without its free pages, giving their space back to the file system. It
holds the write lock meanwhile (other processes' writes wait, up to ``lock_timeout_s``;
their reads go on), and writes every page through the write-ahead log, which the checkpoint
that follows (TRUNCATE) empties. The whole file is one unit: SQLite cannot vacuum one table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from memstrata.errors import InvalidInputError, StoreError
from memstrata.store.compaction import (
    LOCK_TIMEOUT_S,
    PENDING_ERASURES,
    CompactionReport,
    Progress,
    TableCompaction,
    check_lock_timeout,
    lock_timeout_ms,
)
from memstrata.store.sqlite import failures
from memstrata.store.sqlite.base import SqliteBase

METHOD: Final = "VACUUM (the whole file rebuilt without its free pages), then a checkpoint"
LOCKING: Final = (
    "the write lock is held for the whole VACUUM: writes from any process wait, reads go on"
)
REMAINS: Final = (
    "nothing of a deletion on request: deleted content is overwritten when it is deleted "
    "(secure_delete), every forget overwrites what page rebuilds left of it and proves the "
    "files clean; backups and copies of the file are their owner's",
)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


class SqliteCompaction(SqliteBase):
    """:class:`memstrata.store.compaction.Compactable` on SQLite."""

    def compact(
        self,
        *,
        tables: Sequence[str] | None = None,
        dry_run: bool = False,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        progress: Progress | None = None,
    ) -> CompactionReport:
        check_lock_timeout(lock_timeout_s)
        if tables:
            raise InvalidInputError(
                "SQLite compacts the whole file at once (VACUUM): name no table"
            )
        wal = Path(f"{self.path}-wal")
        with self._lock:
            if self.damage is not None:
                raise failures.damaged_error(self.path, self.damage)
            if self.read_only and not dry_run:
                raise StoreError(self._refusal)
            before = _size(self.path) + _size(wal)
            remains: tuple[str, ...] = REMAINS
            if not dry_run:
                remains += self._vacuum(lock_timeout_s)
            after = _size(self.path) + _size(wal)
            try:
                pending = int(self._conn.execute(PENDING_ERASURES).fetchone()[0])
            except sqlite3.Error as exc:
                raise self._failure(exc, "read the erasure journal of") from exc
        one = TableCompaction(self.path.name, before, after, 0 if dry_run else 1)
        if progress is not None and not dry_run:
            progress(one)
        return CompactionReport(
            engine="sqlite",
            store=str(self.path),
            method=METHOD,
            locking=LOCKING,
            dry_run=dry_run,
            tables=(one,),
            remains=remains,
            erasures_pending=pending,
        )

    def _vacuum(self, lock_timeout_s: float) -> tuple[str, ...]:
        """VACUUM and checkpoint under ``lock_timeout_s``; what the checkpoint left."""
        conn = self._conn
        kept = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        try:
            conn.execute(f"PRAGMA busy_timeout = {lock_timeout_ms(lock_timeout_s)}")
            conn.execute("VACUUM")
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error as exc:
            raise self._failure(exc, "compact") from exc
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(kept)}")
        if busy:
            return (
                "the write-ahead log could not be emptied (another process was reading): it "
                "holds a copy of the rebuilt pages until the next checkpoint",
            )
        return ()
