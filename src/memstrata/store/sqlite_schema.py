"""The SQLite schema, as named migrations (see :mod:`memstrata.store.migrations`).

Absent thread and agent are stored as ``''`` so that unique keys treat them as equal.
Times are ISO 8601 UTC text (see :mod:`memstrata.codec`), which sorts correctly.
"""

from __future__ import annotations

from memstrata.store.migrations import Migration


def _history_table(name: str, key: str) -> str:
    """The item history table's DDL under ``name`` with primary key ``key``: 0001 made it
    keyed by item id, 0004 remade it keyed by scope, with the same columns (the text is kept
    to the letter, since it is what a database records as its schema)."""
    return f"""CREATE TABLE {name} (
                item_id TEXT NOT NULL,
                user TEXT NOT NULL,
                thread TEXT NOT NULL DEFAULT '',
                agent TEXT NOT NULL DEFAULT '',
                version INTEGER NOT NULL,
                op TEXT NOT NULL,
                reason TEXT,
                at TEXT NOT NULL,
                data TEXT NOT NULL,
                PRIMARY KEY ({key})
            )"""


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_initial",
        (
            """CREATE TABLE episodes (
                id TEXT PRIMARY KEY,
                user TEXT NOT NULL,
                thread TEXT NOT NULL DEFAULT '',
                agent TEXT NOT NULL DEFAULT '',
                surface TEXT NOT NULL,
                session_id TEXT NOT NULL,
                speaker TEXT,
                role TEXT NOT NULL,
                text TEXT NOT NULL,
                time TEXT NOT NULL,
                metadata TEXT NOT NULL DEFAULT '{}'
            )""",
            "CREATE INDEX episodes_scope ON episodes (user, thread, agent, id)",
            "CREATE INDEX episodes_session ON episodes (user, session_id)",
            """CREATE TABLE facts (
                id TEXT PRIMARY KEY,
                user TEXT NOT NULL,
                thread TEXT NOT NULL DEFAULT '',
                agent TEXT NOT NULL DEFAULT '',
                text TEXT NOT NULL,
                category TEXT NOT NULL,
                confidence REAL NOT NULL,
                importance REAL NOT NULL,
                topic TEXT,
                valid_from TEXT NOT NULL,
                valid_to TEXT,
                superseded_by TEXT,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                access_count INTEGER NOT NULL DEFAULT 0,
                version INTEGER NOT NULL
            )""",
            "CREATE INDEX facts_scope ON facts (user, thread, agent, id)",
            """CREATE TABLE fact_sources (
                fact_id TEXT NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
                episode_id TEXT NOT NULL,
                ord INTEGER NOT NULL,
                PRIMARY KEY (fact_id, episode_id)
            )""",
            "CREATE INDEX fact_sources_episode ON fact_sources (episode_id)",
            """CREATE TABLE documents (
                id TEXT PRIMARY KEY,
                user TEXT NOT NULL,
                thread TEXT NOT NULL DEFAULT '',
                agent TEXT NOT NULL DEFAULT '',
                kind TEXT NOT NULL,
                key TEXT NOT NULL,
                content TEXT NOT NULL,
                version INTEGER NOT NULL,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                UNIQUE (user, thread, agent, kind, key)
            )""",
            _history_table("item_history", "item_id, version"),
        ),
    ),
    Migration(
        "0002_episode_archive",
        (
            "ALTER TABLE episodes ADD COLUMN archived INTEGER NOT NULL DEFAULT 0",
            "CREATE INDEX episodes_time ON episodes (user, time)",
        ),
    ),
    Migration(
        "0003_change_feed",
        (
            """CREATE TABLE changes (
                seq INTEGER PRIMARY KEY AUTOINCREMENT,
                user TEXT NOT NULL,
                item_id TEXT NOT NULL,
                op TEXT NOT NULL
            )""",
            "CREATE INDEX changes_user ON changes (user, seq)",
        ),
    ),
    Migration(
        "0004_history_by_scope",
        (
            # an item id (a bullet's may be chosen by a client) is unique only in its scope
            _history_table("item_history_scoped", "user, thread, agent, item_id, version"),
            "INSERT INTO item_history_scoped SELECT item_id, user, thread, agent, version, op, "
            "reason, at, data FROM item_history",
            "DROP TABLE item_history",
            "ALTER TABLE item_history_scoped RENAME TO item_history",
        ),
    ),
    Migration(
        "0005_erasure_journal",
        (
            """CREATE TABLE erasures (
                id TEXT PRIMARY KEY,
                user TEXT NOT NULL,
                thread TEXT NOT NULL DEFAULT '',
                agent TEXT NOT NULL DEFAULT '',
                target TEXT NOT NULL,
                reason TEXT NOT NULL,
                at TEXT NOT NULL,
                episode_ids TEXT NOT NULL,
                texts TEXT NOT NULL,
                report TEXT NOT NULL,
                done INTEGER NOT NULL DEFAULT 0
            )""",
            "CREATE INDEX erasures_target ON erasures (user, target)",
            "CREATE INDEX erasures_pending ON erasures (done)",
            # episodes whose facts were deleted on purpose: not extracted again
            """CREATE TABLE settled_episodes (
                user TEXT NOT NULL,
                episode_id TEXT NOT NULL,
                PRIMARY KEY (user, episode_id)
            )""",
        ),
    ),
    Migration(
        "0006_api_keys",
        (
            # a key is never stored: only its SHA-256 digest and its public prefix
            """CREATE TABLE api_keys (
                id TEXT PRIMARY KEY,
                prefix TEXT NOT NULL,
                digest TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                role TEXT NOT NULL,
                users TEXT,
                created_at TEXT NOT NULL,
                revoked_at TEXT
            )""",
            "CREATE INDEX api_keys_prefix ON api_keys (prefix)",
        ),
    ),
    Migration(
        "0007_erasure_sites",
        (
            # the data directories using the store, each holding copies an erasure must reach
            """CREATE TABLE sites (
                id TEXT PRIMARY KEY,
                label TEXT NOT NULL,
                first_seen TEXT NOT NULL,
                last_seen TEXT NOT NULL,
                swept_to TEXT NOT NULL
            )""",
            # which data directory erased its copies of which journal entry
            """CREATE TABLE erasure_sites (
                erasure_id TEXT NOT NULL,
                site TEXT NOT NULL,
                at TEXT NOT NULL,
                PRIMARY KEY (erasure_id, site)
            )""",
            "CREATE INDEX erasure_sites_site ON erasure_sites (site, erasure_id)",
            "CREATE INDEX erasures_at ON erasures (at)",
        ),
    ),
    Migration(
        "0008_fact_time_and_slot",
        (
            # the time a fact speaks of (its words and the interval [start, end) they name)
            # and the state it sets for its subject; NULL on the facts stored before
            "ALTER TABLE facts ADD COLUMN when_text TEXT",
            "ALTER TABLE facts ADD COLUMN when_start TEXT",
            "ALTER TABLE facts ADD COLUMN when_end TEXT",
            "ALTER TABLE facts ADD COLUMN slot TEXT",
            "ALTER TABLE facts ADD COLUMN slot_value TEXT",
            # the current facts of a user with a slot (or a slot's kind)
            "CREATE INDEX facts_slot ON facts (user, slot, valid_to)",
        ),
    ),
)
