"""The embedded record store: one SQLite file in WAL mode (:class:`SqliteStore`).

The store is one class built from one module per concern: ``base`` (connection, migrations,
transactions, change feed), ``episodes``, ``facts``, ``documents``, ``erasure`` (proof that a
deletion left no copy in the files), ``keys`` (API keys, hashed) and ``store`` (history,
counts, restore).
"""

from memstrata.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
