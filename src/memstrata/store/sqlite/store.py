"""The embedded record store: one SQLite file in WAL mode.

One connection per store object, shared by threads under a lock; other processes can open
the same file (WAL lets readers run beside one writer; ``busy_timeout`` waits for the lock).
"""

from __future__ import annotations

from contextlib import AbstractContextManager

from memstrata.store.named_locks import file_lock
from memstrata.store.sql.records import RecordTables
from memstrata.store.sqlite.compaction import SqliteCompaction
from memstrata.store.sqlite.erasure import WalErasure


class SqliteStore(RecordTables, WalErasure, SqliteCompaction):
    """:class:`memstrata.ports.RecordStore` on SQLite; also a
    :class:`memstrata.ports.SizingStore` and a :class:`memstrata.ports.SummarizingStore` (as
    every SQL store), a :class:`memstrata.ports.LockingStore` (a file lock beside the
    database) and a :class:`memstrata.store.compaction.Compactable`."""

    def hold(self, name: str, *, wait_s: float) -> AbstractContextManager[None]:
        """The named lock every process opening this file shares (an ``flock`` on
        ``<db>.locks/<digest>``)."""
        return file_lock(self.path.with_name(self.path.name + ".locks"), name, wait_s)
