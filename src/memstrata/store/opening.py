"""Opening the record store a URL names: ``sqlite:///path``, ``postgresql://...`` or
``mysql://...`` (see :mod:`memstrata.store.url`), and compacting the store a URL names."""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.errors import ConfigError
from memstrata.ports import Clock, RecordStore
from memstrata.store.compaction import (
    LOCK_TIMEOUT_S,
    Compactable,
    CompactionReport,
    Progress,
    check_lock_timeout,
)
from memstrata.store.url import parse_store_url, redact


def open_store(url: str, *, clock: Clock | None = None) -> RecordStore:
    """The store ``url`` names, its schema migrated. A malformed or unknown URL or a missing
    driver is a :class:`ConfigError`; a server that cannot be reached is a
    :class:`StoreError` (neither message shows the password)."""
    where = parse_store_url(url)
    if where.engine == "postgresql":
        from memstrata.store.server.postgres import PostgresStore

        return PostgresStore(where, clock=clock)
    if where.engine == "mysql":
        from memstrata.store.server.mysql import MysqlStore

        return MysqlStore(where, clock=clock)
    from memstrata.store.sqlite import SqliteStore

    return SqliteStore(where.sqlite_path, clock=clock)


def compact_store(
    url: str,
    *,
    tables: Sequence[str] | None = None,
    dry_run: bool = False,
    lock_timeout_s: float = LOCK_TIMEOUT_S,
    progress: Progress | None = None,
) -> CompactionReport:
    """Open the store ``url`` names and compact it (see :class:`Compactable`)."""
    check_lock_timeout(lock_timeout_s)
    store = open_store(url)
    try:
        if not isinstance(store, Compactable):
            raise ConfigError(f"the store {redact(url)} cannot be compacted")
        return store.compact(
            tables=tables, dry_run=dry_run, lock_timeout_s=lock_timeout_s, progress=progress
        )
    finally:
        store.close()
