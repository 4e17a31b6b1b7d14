"""What every SQL store provides its table families: transactions, reads, the change feed.

A store subclass gives :meth:`SqlBase._write` (one transaction, yielding a :class:`Tx`),
:meth:`SqlBase._read` (rows of one statement, inside the thread's open transaction if there is
one) and its :class:`Dialect`; the table families (episodes, facts, documents, erasures, keys)
are written once on top of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Self

from memstrata.model import Change, ChangeOp
from memstrata.ports import Clock
from memstrata.store.sql.common import Row, Tx, check_limit
from memstrata.store.sql.dialect import Dialect


class SqlBase(ABC):
    dialect: Dialect
    _clock: Clock

    @abstractmethod
    def _write(self) -> AbstractContextManager[Tx]:
        """One write transaction: committed when the block ends, rolled back if it raises."""

    @abstractmethod
    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """The rows of one statement (seeing the thread's open write, if any)."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _log(self, tx: Tx, user: str, item_ids: Sequence[str], op: ChangeOp) -> None:
        """Append to the change feed, in the transaction that makes the change."""
        if self.dialect.lock_feed is not None:
            if not item_ids:
                return
            tx.execute(self.dialect.lock_feed, (user,))
        tx.executemany(
            'INSERT INTO changes ("user", item_id, op) VALUES (?, ?, ?)',
            [(user, item_id, op.value) for item_id in item_ids],
        )

    def generation(self, user: str) -> int:
        rows = self._read('SELECT MAX(seq) AS seq FROM changes WHERE "user" = ?', (user,))
        return int(rows[0]["seq"] or 0)

    def changes_since(self, user: str, after: int, *, limit: int = 10_000) -> list[Change]:
        rows = self._read(
            'SELECT seq, item_id, op FROM changes WHERE "user" = ? AND seq > ? '
            "ORDER BY seq LIMIT ?",
            (user, after, check_limit(limit)),
        )
        return [Change(int(r["seq"]), r["item_id"], ChangeOp(r["op"])) for r in rows]

    def applied_migrations(self) -> list[str]:
        return [r["name"] for r in self._read("SELECT name FROM schema_migrations ORDER BY name")]
