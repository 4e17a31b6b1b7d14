"""``memstrata migrate``: a whole store moved to another, verified by counts and checksums."""

from __future__ import annotations

import click

from memstrata.cli.base import cli, json_option, print_json


@cli.command(
    help="Copy a whole record store (every table: ids, versions, history, change feed, keys, "
    "erasure journal) into a new, empty one, e.g. from sqlite:///path/memstrata.db to "
    "postgresql://user:pw@host/db, then check it row count and checksum per table. The copy "
    "is one transaction on the target, verified before it commits: if it is interrupted "
    "(killed, a lost connection, Ctrl-C) the target keeps no copied row and running the same "
    "command again completes it. A target already holding an identical copy is reported "
    "verified and left as it is; a target holding any other row is refused."
)
@click.option("--from", "source", required=True, metavar="URL", help="The store to copy.")
@click.option("--to", "target", required=True, metavar="URL", help="The empty store to fill.")
@json_option
def migrate(source: str, target: str, as_json: bool) -> None:
    from memstrata.store.copy import migrate_store
    from memstrata.store.url import redact

    def progress(table: str, rows: int) -> None:
        if not as_json:
            click.echo(f"  {table}: {rows} rows copied", err=True)

    _refuse_a_server_source_without_a_schema(source)
    try:
        done = migrate_store(source, target, progress=progress)
    except KeyboardInterrupt:
        click.echo(
            f"interrupted: {redact(target)} keeps no copied row (the copy is one transaction); "
            "run the same command again to migrate",
            err=True,
        )
        raise
    tables = done.tables
    if as_json:
        shown = {"from": redact(source), "to": redact(target)}
        print_json({**shown, "copied": done.copied, "tables": tables})
        return
    for table, info in tables.items():
        click.echo(f"{table:<18}{info['rows']:>10} rows  sha256 {info['sha256'][:16]}")
    total = sum(info["rows"] for info in tables.values())
    if done.copied:
        click.echo(f"copied {total} rows from {redact(source)} to {redact(target)}; verified")
    else:
        click.echo(
            f"{redact(target)} already holds an identical copy of {redact(source)} "
            f"({total} rows, verified): nothing copied"
        )


def _refuse_a_server_source_without_a_schema(source: str) -> None:
    """A source on a database server that holds no memstrata schema (a mistyped database
    name) is refused before it is opened: opening it would make the schema there."""
    from memstrata.doctor.server import read_schema
    from memstrata.errors import InvalidInputError
    from memstrata.store.url import parse_store_url

    where = parse_store_url(source)
    if where.engine != "sqlite" and not read_schema(where).applied:
        raise InvalidInputError(
            f"the source holds no records: {where.shown} holds no memstrata schema, and none "
            "was made there (is its URL the database you mean?)"
        )
