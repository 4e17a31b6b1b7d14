"""The embedded record store: one SQLite file in WAL mode.

One connection per store object, shared by threads under a lock; other processes can open
the same file (WAL lets readers run beside one writer; ``busy_timeout`` waits for the lock).
"""

from __future__ import annotations

from memstrata.store.sql.records import RecordTables
from memstrata.store.sqlite.compaction import SqliteCompaction
from memstrata.store.sqlite.erasure import WalErasure


class SqliteStore(RecordTables, WalErasure, SqliteCompaction):
    """:class:`memstrata.ports.RecordStore` on SQLite; also a
    :class:`memstrata.ports.SizingStore` and a :class:`memstrata.ports.SummarizingStore` (as
    every SQL store), and a :class:`memstrata.store.compaction.Compactable`."""
