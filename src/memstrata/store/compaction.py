"""Compaction: memstrata's tables rewritten so that deleted rows' bytes leave the live files.

A deletion on a database server removes rows from what queries see, not from the files:

* **PostgreSQL** keeps a deleted row's tuple in its heap page (and its TOAST chunks and index
  entries) until VACUUM, and plain VACUUM only marks the space free for reuse: the bytes stay
  until a later row is written over them. ``VACUUM FULL`` writes the table, its TOAST table
  and every index into new files holding the live rows only, and drops the old files. It
  holds an ACCESS EXCLUSIVE lock on the table throughout (readers and writers wait).
* **InnoDB** (MySQL, MariaDB) delete-marks the row; purge later unlinks it from its page,
  whose free space keeps the bytes (unless MariaDB's
  ``innodb_immediate_scrub_data_uncompressed`` is on). ``ALTER TABLE ... FORCE`` (what
  ``OPTIMIZE TABLE`` does on InnoDB) rebuilds the table and its indexes into a new ``.ibd``
  file when ``innodb_file_per_table`` is on; memstrata asks for the online form
  (``ALGORITHM=INPLACE, LOCK=NONE``): writes go on, but the statement waits for open
  transactions on the table at its start and end.
* **SQLite**: every connection of the store overwrites deleted content (``secure_delete``) and
  every deletion on request checkpoints the write-ahead log and proves the files clean, so
  compaction adds no erasure there: ``VACUUM`` gives the free pages back to the file system
  (the write lock is held meanwhile).

What no compaction reaches: the engine's logs (PostgreSQL WAL, InnoDB redo and undo logs, the
binary log), backups and archives, replicas' own logs, and the file system's freed blocks.
docs/scaling.md ("What each store guarantees") gives the operator's recipe for those.

Compaction takes locks, so it is an operator's command (``memstrata compact``), never part of
a deletion: :func:`memstrata.store.opening.compact_store` opens the store a URL names and calls its
:meth:`Compactable.compact`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable

from memstrata.errors import BusyError, InvalidInputError, StoreError

#: how long a compaction waits for a lock another transaction holds, by default
LOCK_TIMEOUT_S: Final = 30.0
#: erasures whose texts the journal still keeps (for data directories yet to apply them)
PENDING_ERASURES: Final = "SELECT COUNT(*) AS n FROM erasures WHERE texts <> '[]'"

_CREATE_TABLE: Final = re.compile(
    r"CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?[\"`]?(\w+)", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class TableCompaction:
    """One table: its size (with its TOAST data and indexes) before and after, how many files
    were rewritten (the table's, its TOAST table's and each index's on PostgreSQL; the
    ``.ibd`` on InnoDB; 0 in a dry run), and how many deleted rows the rewrite had to keep
    because a transaction still open could see them (PostgreSQL; None: the server did not
    say, in a language memstrata reads)."""

    table: str
    bytes_before: int
    bytes_after: int
    files_rewritten: int
    dead_kept: int | None = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "files_rewritten": self.files_rewritten,
            "dead_kept": self.dead_kept,
        }


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """What a compaction did (or, with ``dry_run``, would do) and what it cannot reach."""

    engine: str
    store: str  # the URL, without its password
    method: str  # the statement run per table
    locking: str  # what it blocks, and for how long
    dry_run: bool
    tables: tuple[TableCompaction, ...]
    #: copies outside the rewritten files (logs, backups...): the operator's to bound
    remains: tuple[str, ...] = field(default=())
    #: erasures whose texts the journal keeps as live rows (see :data:`PENDING_ERASURES`)
    erasures_pending: int = 0

    @property
    def dead_kept(self) -> int:
        """Deleted rows still in the rewritten files (see :class:`TableCompaction`)."""
        return sum(t.dead_kept or 0 for t in self.tables)

    @property
    def dead_kept_unknown(self) -> bool:
        """Whether some table's count of kept deleted rows could not be read (PostgreSQL
        reporting in a language memstrata does not read) while none was read as kept."""
        return not self.dead_kept and any(t.dead_kept is None for t in self.tables)

    def to_json(self) -> dict[str, Any]:
        return {
            "engine": self.engine,
            "store": self.store,
            "method": self.method,
            "locking": self.locking,
            "dry_run": self.dry_run,
            "tables": [t.to_json() for t in self.tables],
            "bytes_before": sum(t.bytes_before for t in self.tables),
            "bytes_after": sum(t.bytes_after for t in self.tables),
            # unknown (null) when a table's count could not be read: never a reassuring 0
            "dead_kept": None if self.dead_kept_unknown else self.dead_kept,
            "erasures_pending": self.erasures_pending,
            "remains": list(self.remains),
        }


#: called after each table is compacted
Progress = Callable[[TableCompaction], None]


@runtime_checkable
class Compactable(Protocol):
    """A record store that can rewrite its tables so deleted rows' bytes leave its files."""

    def compact(
        self,
        *,
        tables: Sequence[str] | None = None,
        dry_run: bool = False,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        progress: Progress | None = None,
    ) -> CompactionReport:
        """Rewrite ``tables`` (default: every table of memstrata's schema), one at a time;
        with ``dry_run``, check the privileges and sizes and change nothing. A lock not
        granted within ``lock_timeout_s`` is a :class:`BusyError` (tables done before it stay
        done); a missing privilege is a :class:`StoreError` naming it, raised before any
        table is touched."""
        ...


def table_names(statements: Iterable[str]) -> list[str]:
    """The tables ``statements`` create, in order (the schema's migrations name them all)."""
    names: dict[str, None] = {"schema_migrations": None}
    for statement in statements:
        for match in _CREATE_TABLE.finditer(statement):
            names[match.group(1)] = None
    return list(names)


def chosen_tables(known: Sequence[str], asked: Sequence[str] | None) -> list[str]:
    """``asked`` (default: all ``known``), each checked to be one of memstrata's tables."""
    if not asked:
        return list(known)
    unknown = [t for t in asked if t not in known]
    if unknown:
        raise InvalidInputError(
            f"not a table of memstrata's schema: {', '.join(unknown)} "
            f"(its tables: {', '.join(known)})"
        )
    return list(dict.fromkeys(asked))


#: the longest lock timeout: PostgreSQL's ``lock_timeout`` is at most 2**31 - 1 ms
MAX_LOCK_TIMEOUT_S: Final = 2_147_483


def check_lock_timeout(lock_timeout_s: float) -> None:
    """A :class:`InvalidInputError` unless ``lock_timeout_s`` is a number of seconds every
    engine takes: above zero, at most :data:`MAX_LOCK_TIMEOUT_S` (not infinite, not NaN)."""
    if not 0 < lock_timeout_s <= MAX_LOCK_TIMEOUT_S:
        raise InvalidInputError(
            f"the lock timeout must be positive and at most {MAX_LOCK_TIMEOUT_S} seconds "
            f"(about 24 days), not {lock_timeout_s:g}"
        )


def lock_timeout_ms(lock_timeout_s: float) -> int:
    """The lock timeout in whole milliseconds, at least one."""
    return max(1, round(lock_timeout_s * 1000))


def compacted_before(done: Sequence[TableCompaction]) -> str:
    return ", ".join(t.table for t in done) or "none"


def busy_error(
    shown: str, table: str, lock_timeout_s: float, done: Sequence[TableCompaction]
) -> BusyError:
    """Another transaction held ``table`` past the lock timeout, ``done`` compacted before."""
    return BusyError(
        f"compact {shown}: another transaction held the table {table} for longer than the "
        f"lock timeout ({lock_timeout_s:g} s); tables compacted before it: "
        f"{compacted_before(done)}; retry when it is idle, or with a longer --lock-timeout"
    )


def failed_error(shown: str, exc: Exception, done: Sequence[TableCompaction]) -> StoreError:
    """The database failed midway, ``done`` compacted before."""
    return StoreError(
        f"the database {shown} failed while compacting: {exc}; tables compacted before: "
        f"{compacted_before(done)}"
    )
