"""Opening the record store a URL names: ``sqlite:///path``, ``postgresql://...`` or
``mysql://...`` (see :mod:`memstrata.store.url`)."""

from __future__ import annotations

from memstrata.ports import Clock, RecordStore
from memstrata.store.url import parse_store_url


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
