"""The embedded record store: one SQLite file in WAL mode.

One connection per store object, shared by threads under a lock; other processes can open
the same file (WAL lets readers run beside one writer; ``busy_timeout`` waits for the lock).
"""

from __future__ import annotations

from memstrata.model import Scope
from memstrata.store.sql.common import scope_where
from memstrata.store.sql.records import RecordTables
from memstrata.store.sqlite.erasure import WalErasure


class SqliteStore(RecordTables, WalErasure):
    """:class:`memstrata.ports.RecordStore` on SQLite; also a
    :class:`memstrata.ports.SizingStore`."""

    def text_bytes(self, scope: Scope) -> dict[str, int]:
        where, params = scope_where(scope)
        sizes = {
            table[:-1]: int(
                self._read(
                    f"SELECT COALESCE(SUM(LENGTH(CAST(text AS BLOB))), 0) AS n "
                    f"FROM {table} WHERE {where}",
                    params,
                )[0]["n"]
            )
            for table in ("episodes", "facts")
        }
        rows = self._read(
            "SELECT kind, SUM(LENGTH(CAST(content AS BLOB))) AS n FROM documents "
            f"WHERE {where} GROUP BY kind",
            params,
        )
        return {**sizes, **{r["kind"]: int(r["n"]) for r in rows}}
