"""The MySQL/MariaDB schema, as named migrations: the SQLite schema's tables and columns on
InnoDB in utf8mb4 with a binary, no-pad collation (text compared and sorted byte by byte, as
SQLite does; ``'a'`` and ``'a '`` differ), and ``feed_heads``, the row per user a write locks
so that the change feed grows in commit order.

Indexed text is ``VARCHAR`` (scope parts are at most 128 characters, ids 64, document keys
200); other text is ``LONGTEXT``. Data definition commits on its own in MySQL, so every
statement may run again (``IF NOT EXISTS``) should a migration stop half-way.
"""

from __future__ import annotations

from memstrata.store.migrations import Migration


def migrations(collation: str) -> tuple[Migration, ...]:
    """The migrations, with tables in ``collation`` (``utf8mb4_nopad_bin`` on MariaDB,
    ``utf8mb4_0900_bin`` on MySQL 8)."""
    table = f"ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE={collation}"
    scope = """"user" VARCHAR(128) NOT NULL,
                thread VARCHAR(128) NOT NULL DEFAULT '',
                agent VARCHAR(128) NOT NULL DEFAULT ''"""
    return (
        Migration(
            "0001_initial",
            (
                f"""CREATE TABLE IF NOT EXISTS episodes (
                id VARCHAR(64) PRIMARY KEY,
                {scope},
                surface LONGTEXT NOT NULL,
                session_id VARCHAR(512) NOT NULL,
                speaker LONGTEXT,
                role VARCHAR(32) NOT NULL,
                text LONGTEXT NOT NULL,
                time VARCHAR(40) NOT NULL,
                metadata LONGTEXT NOT NULL,
                archived INTEGER NOT NULL DEFAULT 0,
                KEY episodes_scope ("user", thread, agent, id),
                KEY episodes_session ("user", session_id),
                KEY episodes_time ("user", time)
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS facts (
                id VARCHAR(64) PRIMARY KEY,
                {scope},
                text LONGTEXT NOT NULL,
                category VARCHAR(64) NOT NULL,
                confidence DOUBLE NOT NULL,
                importance DOUBLE NOT NULL,
                topic LONGTEXT,
                valid_from VARCHAR(40) NOT NULL,
                valid_to VARCHAR(40),
                superseded_by VARCHAR(64),
                created_at VARCHAR(40) NOT NULL,
                updated_at VARCHAR(40) NOT NULL,
                access_count INTEGER NOT NULL DEFAULT 0,
                version INTEGER NOT NULL,
                KEY facts_scope ("user", thread, agent, id)
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS fact_sources (
                fact_id VARCHAR(64) NOT NULL,
                episode_id VARCHAR(64) NOT NULL,
                ord INTEGER NOT NULL,
                PRIMARY KEY (fact_id, episode_id),
                KEY fact_sources_episode (episode_id),
                FOREIGN KEY (fact_id) REFERENCES facts (id) ON DELETE CASCADE
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS documents (
                id VARCHAR(64) PRIMARY KEY,
                {scope},
                kind VARCHAR(32) NOT NULL,
                "key" VARCHAR(200) NOT NULL,
                content LONGTEXT NOT NULL,
                version INTEGER NOT NULL,
                created_at VARCHAR(40) NOT NULL,
                updated_at VARCHAR(40) NOT NULL,
                UNIQUE KEY documents_key ("user", thread, agent, kind, "key")
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS item_history (
                item_id VARCHAR(64) NOT NULL,
                {scope},
                version INTEGER NOT NULL,
                op VARCHAR(32) NOT NULL,
                reason LONGTEXT,
                at VARCHAR(40) NOT NULL,
                data LONGTEXT NOT NULL,
                PRIMARY KEY ("user", thread, agent, item_id, version)
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS changes (
                seq BIGINT AUTO_INCREMENT PRIMARY KEY,
                "user" VARCHAR(128) NOT NULL,
                item_id VARCHAR(64) NOT NULL,
                op VARCHAR(16) NOT NULL,
                KEY changes_user ("user", seq)
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS feed_heads (
                "user" VARCHAR(128) PRIMARY KEY,
                writes BIGINT NOT NULL
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS erasures (
                id VARCHAR(64) PRIMARY KEY,
                {scope},
                target VARCHAR(512) NOT NULL,
                reason LONGTEXT NOT NULL,
                at VARCHAR(40) NOT NULL,
                episode_ids LONGTEXT NOT NULL,
                texts LONGTEXT NOT NULL,
                report LONGTEXT NOT NULL,
                done INTEGER NOT NULL DEFAULT 0,
                KEY erasures_target ("user", target),
                KEY erasures_pending (done)
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS settled_episodes (
                "user" VARCHAR(128) NOT NULL,
                episode_id VARCHAR(64) NOT NULL,
                PRIMARY KEY ("user", episode_id)
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS api_keys (
                id VARCHAR(64) PRIMARY KEY,
                prefix VARCHAR(64) NOT NULL,
                digest VARCHAR(128) NOT NULL UNIQUE,
                name LONGTEXT NOT NULL,
                role VARCHAR(32) NOT NULL,
                users LONGTEXT,
                created_at VARCHAR(40) NOT NULL,
                revoked_at VARCHAR(40),
                KEY api_keys_prefix (prefix)
            ) {table}""",
            ),
        ),
        Migration(
            "0002_erasure_sites",
            (
                f"""CREATE TABLE IF NOT EXISTS sites (
                id VARCHAR(64) PRIMARY KEY,
                label LONGTEXT NOT NULL,
                first_seen VARCHAR(40) NOT NULL,
                last_seen VARCHAR(40) NOT NULL,
                swept_to VARCHAR(40) NOT NULL
            ) {table}""",
                f"""CREATE TABLE IF NOT EXISTS erasure_sites (
                erasure_id VARCHAR(64) NOT NULL,
                site VARCHAR(64) NOT NULL,
                at VARCHAR(40) NOT NULL,
                PRIMARY KEY (erasure_id, site),
                KEY erasure_sites_site (site, erasure_id)
            ) {table}""",
                "CREATE INDEX IF NOT EXISTS erasures_at ON erasures (at)",
            ),
        ),
        Migration(
            "0003_fact_time_and_slot",
            (
                # a slot is at most 200 characters (the model's limit), so it can be indexed
                """ALTER TABLE facts
                ADD COLUMN IF NOT EXISTS when_text LONGTEXT,
                ADD COLUMN IF NOT EXISTS when_start VARCHAR(40),
                ADD COLUMN IF NOT EXISTS when_end VARCHAR(40),
                ADD COLUMN IF NOT EXISTS slot VARCHAR(200),
                ADD COLUMN IF NOT EXISTS slot_value LONGTEXT""",
                'CREATE INDEX IF NOT EXISTS facts_slot ON facts ("user", slot, valid_to)',
            ),
        ),
    )
