"""Server record stores beyond the contract: the memory over them, migrations by concurrent
openers, and a connection the server drops. Each runs on PostgreSQL and MySQL/MariaDB when
their test server's URL is set (see ``tests/contract/backends.py``), and skips otherwise (fails
under CI)."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.errors import InvalidInputError
from memstrata.model import Scope
from memstrata.ports import RecordStore
from memstrata.store.opening import open_store
from memstrata.store.server.mysql_schema import migrations as mysql_migrations
from memstrata.store.server.postgres_schema import MIGRATIONS as POSTGRES_MIGRATIONS
from tests.contract.backends import fresh_url
from tests.contract.test_store_contract import ALICE, episode

SERVERS = ("postgresql", "mysql")


#: the migrations of a server store, by name (the same on PostgreSQL and MySQL)
ALL_MIGRATIONS = tuple(m.name for m in POSTGRES_MIGRATIONS)
assert tuple(m.name for m in mysql_migrations("utf8mb4_nopad_bin")) == ALL_MIGRATIONS


@pytest.mark.parametrize("backend", SERVERS)
def test_concurrent_openers_migrate_once(backend: str, tmp_path: Path) -> None:
    with fresh_url(backend, tmp_path) as url:
        opened: list[RecordStore] = []
        errors: list[BaseException] = []

        def open_one() -> None:
            try:
                opened.append(open_store(url))
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=open_one) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        try:
            assert not errors
            assert len(opened) == 4
            assert {tuple(s.applied_migrations()) for s in opened} == {ALL_MIGRATIONS}
        finally:
            for s in opened:
                s.close()
        with open_store(url) as again:  # type: ignore[attr-defined]
            assert again.applied_migrations() == list(ALL_MIGRATIONS)


def _drop_connections(backend: str, url: str) -> int:
    """Make the server close every other connection to the store's database or schema (on
    PostgreSQL the schema's own: ``fresh_url`` names them by ``application_name``, and the
    database is shared with the cases running beside this one)."""
    if backend == "postgresql":
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid() "
                "AND backend_type = 'client backend' "
                "AND application_name = current_setting('application_name')"
            ).fetchall()
            return len(rows)
    import pymysql

    from memstrata.store.server.mysql import connect_args

    conn = pymysql.connect(**connect_args(url))
    try:
        cur = conn.cursor()
        cur.execute(
            "SELECT id FROM information_schema.processlist "
            "WHERE db = DATABASE() AND id <> CONNECTION_ID()"
        )
        ids = [r["id"] for r in cur.fetchall()]
        for i in ids:
            cur.execute(f"KILL {int(i)}")
        return len(ids)
    finally:
        conn.close()


@pytest.mark.parametrize("backend", SERVERS)
def test_a_dropped_connection_is_replaced_and_the_call_retried(
    backend: str, tmp_path: Path
) -> None:
    with fresh_url(backend, tmp_path) as url:
        store = open_store(url)
        try:
            store.add_episodes(ALICE, [episode(ALICE, "before")])
            assert _drop_connections(backend, url) >= 1
            store.add_episodes(ALICE, [episode(ALICE, "after")])
            assert [e.text for e in store.list_episodes(ALICE)] == ["before", "after"]
        finally:
            store.close()


@pytest.mark.parametrize("backend", SERVERS)
def test_two_memories_on_one_database_see_each_others_writes(backend: str, tmp_path: Path) -> None:
    user = Scope("u")
    with (
        fresh_url(backend, tmp_path) as url,
        Memory.open(tmp_path / "one", store_url=url) as one,
        Memory.open(tmp_path / "two", store_url=url) as two,
    ):
        assert list(two.search("green tea", user)) == []
        one.remember("I drink green tea every morning 我每天早上喝绿茶", user)
        hits = two.search("green tea", user)
        assert hits and "我每天早上喝绿茶" in hits[0].text


@pytest.mark.parametrize("backend", SERVERS)
def test_a_value_the_engine_cannot_store_is_refused_as_input(backend: str, tmp_path: Path) -> None:
    """PostgreSQL text cannot hold NUL; MySQL's indexed columns are bounded (a session id of
    at most 512 characters): either is bad input, and nothing is written."""
    with fresh_url(backend, tmp_path) as url:
        store = open_store(url)
        try:
            bad = (
                episode(ALICE, "a\x00b")
                if backend == "postgresql"
                else replace(episode(ALICE), session_id="s" * 600)
            )
            with pytest.raises(InvalidInputError, match="cannot store this"):
                store.add_episodes(ALICE, [episode(ALICE, "fine"), bad])
            assert store.list_episodes(ALICE) == []
            assert store.generation("alice") == 0
        finally:
            store.close()


def test_postgres_url_aliases_open_the_same_store(tmp_path: Path) -> None:
    with fresh_url("postgresql", tmp_path) as url:
        rest = url.split("://", 1)[1]
        for scheme in ("postgresql", "postgres", "postgresql+psycopg"):
            store = open_store(f"{scheme}://{rest}")
            try:
                assert store.applied_migrations() == list(ALL_MIGRATIONS)
            finally:
                store.close()
