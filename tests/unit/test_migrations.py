"""Schema migrations: named, recorded, applied on open, also to an older database file."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from memstrata.errors import MigrationError, StoreError
from memstrata.model import EpisodeFilter, Scope
from memstrata.store.migrations import Migration
from memstrata.store.sqlite import SqliteStore
from memstrata.store.sqlite_schema import MIGRATIONS


def _old_database(path: Path) -> None:
    """A database as the first release wrote it: only 0001_initial, with a row in it."""
    with SqliteStore(path, migrations=MIGRATIONS[:1]) as old:
        assert old.applied_migrations() == ["0001_initial"]
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO episodes (id, user, thread, agent, surface, session_id, speaker, role, text,"
        " time, metadata) VALUES ('ep_01HZZZZZZZZZZZZZZZZZZZZZZZ', 'alice', '', '', 'chat', 's1',"
        " 'alice', 'user', '旧的记录 old turn', '2024-01-01T00:00:00.000000Z', '{}')"
    )
    conn.commit()
    conn.close()


def test_an_older_file_is_migrated_on_open_and_keeps_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _old_database(path)
    with SqliteStore(path) as store:
        assert store.applied_migrations() == [m.name for m in MIGRATIONS]
        [ep] = store.list_episodes(Scope("alice"))
        assert ep.text == "旧的记录 old turn" and ep.archived is False
        store.archive_episodes(Scope("alice"), [ep.id])  # the column 0002 added works
        assert store.list_episodes(Scope("alice"), EpisodeFilter(include_archived=False)) == []
    with sqlite3.connect(path) as conn:
        names = [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
    assert names == [m.name for m in MIGRATIONS]


def test_reopening_applies_nothing_twice(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    SqliteStore(path).close()
    with SqliteStore(path) as store:
        assert store.applied_migrations() == [m.name for m in MIGRATIONS]


def test_a_failing_migration_rolls_back_and_names_itself(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    SqliteStore(path).close()
    broken = (
        *MIGRATIONS,
        Migration("0099_broken", ("CREATE TABLE extra (x)", "SELECT * FROM no_such_table")),
    )
    with pytest.raises(MigrationError, match="0099_broken"):
        SqliteStore(path, migrations=broken)
    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        names = {r[0] for r in conn.execute("SELECT name FROM schema_migrations")}
    assert "extra" not in tables and "0099_broken" not in names


def test_a_newer_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    newer = (*MIGRATIONS, Migration("0999_future", ("CREATE TABLE future (x)",)))
    SqliteStore(path, migrations=newer).close()
    with pytest.raises(MigrationError, match="0999_future"):
        SqliteStore(path)


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not a usable memstrata database"):
        SqliteStore(path)


def test_history_written_before_0004_is_kept_per_scope(tmp_path: Path) -> None:
    """Rows written when one bullet id shared one history across users survive the move to
    per-scope history, and each user then sees only their own."""
    path = tmp_path / "old.db"
    with SqliteStore(path, migrations=MIGRATIONS[:3]):
        pass
    conn = sqlite3.connect(path)
    for user, version in (("alice", 1), ("bob", 2)):
        conn.execute(
            "INSERT INTO item_history (item_id, user, thread, agent, version, op, reason, at, "
            "data) VALUES ('m_shared', ?, '', '', ?, 'create', NULL, "
            "'2024-01-01T00:00:00.000000Z', ?)",
            (user, version, f'{{"text": "{user}"}}'),
        )
    conn.commit()
    conn.close()
    with SqliteStore(path) as store:
        assert [dict(h.data) for h in store.history(Scope("alice"), "m_shared")] == [
            {"text": "alice"}
        ]
        assert [dict(h.data) for h in store.history(Scope("bob"), "m_shared")] == [{"text": "bob"}]


#: what each migration runs, to the letter; a migration a store may have applied never
#: changes what it does to a database (a change is a new migration instead)
APPLIED_STATEMENTS_SHA256 = {
    "0001_initial": "f8b2a335c713db106f697e29e141d6d20fa6843e6c3d8de11952dae8045511c5",
    "0002_episode_archive": "893862b6f5270de98237c25a2683dac8b484eba03444c8bead5585d3059cb497",
    "0003_change_feed": "10b81bbe067106be78500c85011c18d19c344ff6ab6e61203e9c5239ef3ecfc1",
    "0004_history_by_scope": "e5a468645cdf8d545c051ec4c5d1660393656efb5bee64e0d3f5a357cf9b6398",
    "0005_erasure_journal": "41e6519e2284eaf281e1a8ca0ab8d18a6af3d5387921d11d161aabc3f885e7e4",
    "0006_api_keys": "5a46c75e062a30aef541e0ec33f8936923aada634d09c9f66a68b2c4970e3e63",
    "0007_erasure_sites": "e4856523e5d5296909016fccf285a6305753d178a910938d45b49bb65c4a20fa",
    "0008_fact_time_and_slot": "7d1140fb253556e901f5d40773f0afec33ffa8d78fcb914eca9c3344d5878cc4",
}


def test_a_migration_a_store_may_have_applied_runs_the_same_statements() -> None:
    for migration in MIGRATIONS:
        if migration.name in APPLIED_STATEMENTS_SHA256:
            digest = hashlib.sha256("\x00".join(migration.statements).encode()).hexdigest()
            assert digest == APPLIED_STATEMENTS_SHA256[migration.name], migration.name
