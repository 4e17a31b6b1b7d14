"""The database part of ``doctor`` when the records are on a database server (``store_url``
naming PostgreSQL or MySQL/MariaDB): the server is reached and its schema compared with the
migrations this version knows, without writing anything.

The checks of a SQLite file (``integrity_check``, foreign keys, the damage mark) do not apply:
the server keeps its own integrity, and ``--repair`` never rebuilds anything there. The one
repair is the one any open makes: applying the migrations the schema lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memstrata.doctor.report import DoctorReport, Problem
from memstrata.errors import MemstrataError, StoreError
from memstrata.ports import RecordStore
from memstrata.store.migrations import Migration
from memstrata.store.url import StoreUrl, parse_store_url

SKIPPED = (
    "database: the SQLite file checks (integrity_check, foreign keys, damage mark, rebuild) "
    "are skipped: the records are on a {engine} server, which keeps its own integrity; "
    "--repair never rebuilds a server's database"
)
CONNECT_TIMEOUT_S = 10


@dataclass(frozen=True, slots=True)
class ServerSchema:
    """What the server says: its version and the migrations recorded in its schema."""

    version: str
    applied: tuple[str, ...]


def known_migrations(engine: str, version: str) -> tuple[Migration, ...]:
    """The migrations this version of memstrata applies on ``engine`` (its server reporting
    ``version``), as the store chooses them when it opens."""
    if engine == "postgresql":
        from memstrata.store.server.postgres_schema import MIGRATIONS

        return MIGRATIONS
    from memstrata.store.server.mysql import migrations_for

    return migrations_for(version)


def open_server_store(where: StoreUrl, migrations: tuple[Migration, ...]) -> RecordStore:
    """The store at ``where``, opened with ``migrations`` (any not applied yet are applied,
    under the server's migration lock)."""
    if where.engine == "postgresql":
        from memstrata.store.server.postgres import PostgresStore

        return PostgresStore(where, migrations=migrations)
    from memstrata.store.server.mysql import MysqlStore

    return MysqlStore(where, migrations=migrations)


def read_schema(where: StoreUrl) -> ServerSchema:
    """Connect to the server ``where`` names and read its version and recorded migrations,
    writing nothing (opening a store would apply pending migrations). An unreachable server
    is a :class:`StoreError`, a missing driver a :class:`ConfigError`."""
    if where.engine == "postgresql":
        return _read_postgres(where)
    return _read_mysql(where)


def _read_postgres(where: StoreUrl) -> ServerSchema:
    from memstrata.store.server.postgres import conninfo, driver

    psycopg, _ = driver()  # a ConfigError without it
    try:
        with psycopg.connect(
            conninfo(where), autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
        ) as conn:
            version = _one(conn.execute("SHOW server_version").fetchone())
            table = _one(conn.execute("SELECT to_regclass('schema_migrations')").fetchone())
            names = (
                [r[0] for r in conn.execute("SELECT name FROM schema_migrations ORDER BY name")]
                if table is not None
                else []
            )
    except psycopg.Error as exc:
        raise StoreError(f"cannot reach the database {where.shown}: {exc}") from exc
    return ServerSchema(f"PostgreSQL {version}", tuple(names))


def _read_mysql(where: StoreUrl) -> ServerSchema:
    from memstrata.store.server.mysql import connect_args

    args = connect_args(where.raw)  # a ConfigError without the driver
    import pymysql

    args["connect_timeout"] = CONNECT_TIMEOUT_S
    try:
        conn = pymysql.connect(**args)
        try:
            with conn.cursor() as cur:
                cur.execute("SELECT VERSION() AS v")
                version = str(cur.fetchone()["v"])
                cur.execute(
                    "SELECT COUNT(*) AS n FROM information_schema.tables "
                    "WHERE table_schema = DATABASE() AND table_name = 'schema_migrations'"
                )
                names: list[str] = []
                if int(cur.fetchone()["n"]):
                    cur.execute("SELECT name FROM schema_migrations ORDER BY name")
                    names = [str(r["name"]) for r in cur.fetchall()]
        finally:
            conn.close()
    except pymysql.Error as exc:
        raise StoreError(f"cannot reach the database {where.shown}: {exc}") from exc
    kind = "MariaDB" if "mariadb" in version.lower() else "MySQL"
    return ServerSchema(f"{kind} {version}", tuple(names))


def _one(row: Sequence[Any] | None) -> Any:
    return None if row is None else row[0]


def check_and_repair(
    url: str, report: DoctorReport, repair: bool
) -> Callable[[], RecordStore] | None:
    """Check (and with ``repair``, migrate) the server store at ``url``; what opens it to
    compare with the trace, or None when it cannot be opened without writing to it."""
    where = parse_store_url(url)
    report.checked.append(f"database: {where.shown}")
    report.checked.append(SKIPPED.format(engine=where.engine))
    try:
        schema = read_schema(where)
    except MemstrataError as exc:
        report.problems.append(Problem("database", str(exc)))
        return None
    known = known_migrations(where.engine, schema.version)
    names = [m.name for m in known]
    unknown = sorted(set(schema.applied) - set(names))
    report.checked.append(f"database: reachable, {schema.version}")

    def records() -> RecordStore:
        return open_server_store(where, known)

    if unknown:
        report.problems.append(
            Problem(
                "database",
                f"the schema records migrations this version does not know: "
                f"{', '.join(unknown)} (it was written by a newer memstrata): upgrade memstrata; "
                "--repair changes nothing here",
            )
        )
        return None
    pending = [name for name in names if name not in schema.applied]
    if not pending:
        report.checked.append(
            f"database: schema current ({len(names)} migration(s), the last {names[-1]})"
        )
        return records
    if schema.applied:
        lacking = f"the schema lacks {len(pending)} migration(s): {', '.join(pending)}"
    else:  # a new database, or a URL naming another one than meant
        lacking = (
            f"the database holds no memstrata schema ({len(pending)} migration(s) to apply; "
            "is the URL the database you mean?)"
        )
    problem = Problem(
        "database",
        f"{lacking} (the next memstrata to open the store applies them; --repair does it now)",
    )
    report.problems.append(problem)
    if not repair:
        return None
    try:
        records().close()
    except MemstrataError as exc:
        report.problems.append(Problem("database", f"the migrations failed: {exc}"))
        return None
    problem.fixed = f"applied {', '.join(pending)}"
    return records
