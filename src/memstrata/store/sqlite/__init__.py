"""The embedded record store: one SQLite file in WAL mode (:class:`SqliteStore`).

The table families are shared with the server stores (:mod:`memstrata.store.sql`); what is
SQLite's own lives here: ``base`` (the connection, migrations, transactions), ``failures``
(driver errors and the damage mark), ``erasure`` (proof that a deletion left no copy in the
files) and ``store`` (the class).
"""

from memstrata.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
