"""The record stores the contract suite runs on: SQLite always; PostgreSQL and MySQL/MariaDB
when ``MEMSTRATA_TEST_POSTGRES_URL`` / ``MEMSTRATA_TEST_MYSQL_URL`` name a server whose user
may create schemas (PostgreSQL) or databases (MySQL). Each case gets a fresh schema or database,
dropped after it.

Every case of the suite that needs a database server takes its URL here
(:func:`server_url`, :func:`servers_given`). Without one, a case skips, saying which variable
to set; under CI (``CI=true``, as ``.ci/run`` runs) it fails instead: CI never passes with a
store untested."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote, urlsplit, urlunsplit

import pytest

from memstrata.ids import new_id
from memstrata.ports import Clock, RecordStore

BACKENDS = ("mysql", "postgresql", "sqlite")
URL_VARS = {"postgresql": "MEMSTRATA_TEST_POSTGRES_URL", "mysql": "MEMSTRATA_TEST_MYSQL_URL"}


def in_ci() -> bool:
    """Whether the suite runs in CI (which sets ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() == "true"


def _given(backend: str) -> str:
    return os.environ.get(URL_VARS[backend], "").strip()


def no_server(*backends: str) -> NoReturn:
    """End a case that needs these backends' test servers and lacks their URLs: it fails
    under CI, and skips elsewhere; either way saying which variables to set."""
    missing = ", ".join(f"{backend}: {URL_VARS[backend]}" for backend in backends)
    if in_ci():
        pytest.fail(
            f"{missing} unset and CI=true: CI must run every store's cases "
            "(.ci/run starts the servers with .ci/databases.sh, whose output says why one "
            "is missing)",
            pytrace=False,
        )
    variables = " and ".join(URL_VARS[backend] for backend in backends)
    pytest.skip(f"set {variables} to a test server's URL to run the {' and '.join(backends)} cases")


def server_url(backend: str) -> str:
    """The test server's URL; without one, :func:`no_server` (a failure under CI, a skip
    elsewhere)."""
    url = _given(backend)
    if not url:
        no_server(backend)
    return url


def servers_given() -> list[str]:
    """The server backends whose test server's URL is set, for a case that also runs without
    them; under CI a backend without one fails the case (:func:`no_server`)."""
    missing = [backend for backend in URL_VARS if not _given(backend)]
    if missing and in_ci():
        no_server(*missing)
    return [backend for backend in URL_VARS if backend not in missing]


@contextmanager
def fresh_postgres(url: str) -> Iterator[str]:
    """A new schema on the server at ``url``; yields a URL whose connections use it and carry
    the schema's name as their ``application_name``, so a case that cuts connections cuts only
    its own (the schemas share one database with every other case running beside it)."""
    import psycopg

    schema = f"t_{new_id('ep')[3:].lower()}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
    sep = "&" if "?" in url else "?"
    try:
        yield f"{url}{sep}options={quote(f'-csearch_path={schema}')}&application_name={schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@contextmanager
def fresh_mysql(url: str, suffix: str = "") -> Iterator[str]:
    """A new database on the server at ``url``, its name ending in ``suffix``; yields the URL
    naming it."""
    import pymysql

    from memstrata.store.server.mysql import connect_args

    name = f"t_{new_id('ep')[3:].lower()}{suffix}"
    args = connect_args(url)
    args.pop("database", None)
    conn = pymysql.connect(**args)
    try:
        conn.cursor().execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
    finally:
        conn.close()
    parts = urlsplit(url)
    try:
        yield urlunsplit(parts._replace(path="/" + quote(name)))
    finally:
        conn = pymysql.connect(**args)
        try:
            conn.cursor().execute(f"DROP DATABASE `{name}`")
        finally:
            conn.close()


@contextmanager
def fresh_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A store URL no other case uses, on ``backend``."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'store.db'}"
    elif backend == "postgresql":
        with fresh_postgres(server_url(backend)) as url:
            yield url
    else:
        with fresh_mysql(server_url(backend)) as url:
            yield url


@contextmanager
def open_fresh(backend: str, tmp_path: Path, clock: Clock) -> Iterator[RecordStore]:
    from memstrata.store.opening import open_store

    with fresh_url(backend, tmp_path) as url:
        store = open_store(url, clock=clock)
        try:
            yield store
        finally:
            store.close()


def migration_names(backend: str) -> tuple[str, ...]:
    """The names of the migrations a store on ``backend`` is made by, in order (MySQL's are
    the same whatever collation its server takes)."""
    if backend == "sqlite":
        from memstrata.store.sqlite_schema import MIGRATIONS

        return tuple(m.name for m in MIGRATIONS)
    if backend == "postgresql":
        from memstrata.store.server.postgres_schema import MIGRATIONS as PG_MIGRATIONS

        return tuple(m.name for m in PG_MIGRATIONS)
    from memstrata.store.server.mysql_schema import migrations

    return tuple(m.name for m in migrations("utf8mb4_nopad_bin"))


def open_before_last_migration(backend: str, url: str, clock: Clock) -> RecordStore:
    """The store at ``url`` with every migration of its engine but the newest, as the
    previous version of memstrata made it."""
    from memstrata.store.url import parse_store_url

    where = parse_store_url(url)
    if backend == "sqlite":
        from memstrata.store.sqlite import SqliteStore
        from memstrata.store.sqlite_schema import MIGRATIONS

        return SqliteStore(where.sqlite_path, clock=clock, migrations=MIGRATIONS[:-1])
    if backend == "postgresql":
        from memstrata.store.server.postgres import PostgresStore
        from memstrata.store.server.postgres_schema import MIGRATIONS as PG_MIGRATIONS

        return PostgresStore(where, clock=clock, migrations=PG_MIGRATIONS[:-1])
    import pymysql

    from memstrata.store.server.mysql import MysqlStore, connect_args, migrations_for

    conn = pymysql.connect(**connect_args(url))
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT VERSION() AS v")
            version = str(cur.fetchone()["v"])
    finally:
        conn.close()
    return MysqlStore(where, clock=clock, migrations=migrations_for(version)[:-1])
