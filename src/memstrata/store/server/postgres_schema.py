"""The PostgreSQL schema, as named migrations: the SQLite schema's tables and columns, with
text compared and sorted byte by byte (``COLLATE "C"``, as SQLite does) and ``feed_heads``,
the row per user a write locks so that the change feed grows in commit order."""

from __future__ import annotations

from typing import Final

from memstrata.store.migrations import Migration

_T: Final = 'TEXT COLLATE "C"'

MIGRATIONS: Final = (
    Migration(
        "0001_initial",
        (
            f"""CREATE TABLE episodes (
                id {_T} PRIMARY KEY,
                "user" {_T} NOT NULL,
                thread {_T} NOT NULL DEFAULT '',
                agent {_T} NOT NULL DEFAULT '',
                surface {_T} NOT NULL,
                session_id {_T} NOT NULL,
                speaker {_T},
                role {_T} NOT NULL,
                text {_T} NOT NULL,
                time {_T} NOT NULL,
                metadata {_T} NOT NULL DEFAULT '{{}}',
                archived INTEGER NOT NULL DEFAULT 0
            )""",
            'CREATE INDEX episodes_scope ON episodes ("user", thread, agent, id)',
            'CREATE INDEX episodes_session ON episodes ("user", session_id)',
            'CREATE INDEX episodes_time ON episodes ("user", time)',
            f"""CREATE TABLE facts (
                id {_T} PRIMARY KEY,
                "user" {_T} NOT NULL,
                thread {_T} NOT NULL DEFAULT '',
                agent {_T} NOT NULL DEFAULT '',
                text {_T} NOT NULL,
                category {_T} NOT NULL,
                confidence DOUBLE PRECISION NOT NULL,
                importance DOUBLE PRECISION NOT NULL,
                topic {_T},
                valid_from {_T} NOT NULL,
                valid_to {_T},
                superseded_by {_T},
                created_at {_T} NOT NULL,
                updated_at {_T} NOT NULL,
                access_count INTEGER NOT NULL DEFAULT 0,
                version INTEGER NOT NULL
            )""",
            'CREATE INDEX facts_scope ON facts ("user", thread, agent, id)',
            f"""CREATE TABLE fact_sources (
                fact_id {_T} NOT NULL REFERENCES facts (id) ON DELETE CASCADE,
                episode_id {_T} NOT NULL,
                ord INTEGER NOT NULL,
                PRIMARY KEY (fact_id, episode_id)
            )""",
            "CREATE INDEX fact_sources_episode ON fact_sources (episode_id)",
            f"""CREATE TABLE documents (
                id {_T} PRIMARY KEY,
                "user" {_T} NOT NULL,
                thread {_T} NOT NULL DEFAULT '',
                agent {_T} NOT NULL DEFAULT '',
                kind {_T} NOT NULL,
                "key" {_T} NOT NULL,
                content {_T} NOT NULL,
                version INTEGER NOT NULL,
                created_at {_T} NOT NULL,
                updated_at {_T} NOT NULL,
                UNIQUE ("user", thread, agent, kind, "key")
            )""",
            f"""CREATE TABLE item_history (
                item_id {_T} NOT NULL,
                "user" {_T} NOT NULL,
                thread {_T} NOT NULL DEFAULT '',
                agent {_T} NOT NULL DEFAULT '',
                version INTEGER NOT NULL,
                op {_T} NOT NULL,
                reason {_T},
                at {_T} NOT NULL,
                data {_T} NOT NULL,
                PRIMARY KEY ("user", thread, agent, item_id, version)
            )""",
            f"""CREATE TABLE changes (
                seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                "user" {_T} NOT NULL,
                item_id {_T} NOT NULL,
                op {_T} NOT NULL
            )""",
            'CREATE INDEX changes_user ON changes ("user", seq)',
            f"""CREATE TABLE feed_heads (
                "user" {_T} PRIMARY KEY,
                writes BIGINT NOT NULL
            )""",
            f"""CREATE TABLE erasures (
                id {_T} PRIMARY KEY,
                "user" {_T} NOT NULL,
                thread {_T} NOT NULL DEFAULT '',
                agent {_T} NOT NULL DEFAULT '',
                target {_T} NOT NULL,
                reason {_T} NOT NULL,
                at {_T} NOT NULL,
                episode_ids {_T} NOT NULL,
                texts {_T} NOT NULL,
                report {_T} NOT NULL,
                done INTEGER NOT NULL DEFAULT 0
            )""",
            'CREATE INDEX erasures_target ON erasures ("user", target)',
            "CREATE INDEX erasures_pending ON erasures (done)",
            f"""CREATE TABLE settled_episodes (
                "user" {_T} NOT NULL,
                episode_id {_T} NOT NULL,
                PRIMARY KEY ("user", episode_id)
            )""",
            f"""CREATE TABLE api_keys (
                id {_T} PRIMARY KEY,
                prefix {_T} NOT NULL,
                digest {_T} NOT NULL UNIQUE,
                name {_T} NOT NULL,
                role {_T} NOT NULL,
                users {_T},
                created_at {_T} NOT NULL,
                revoked_at {_T}
            )""",
            "CREATE INDEX api_keys_prefix ON api_keys (prefix)",
        ),
    ),
)
