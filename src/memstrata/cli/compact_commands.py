"""``memstrata compact``: the record store's tables rewritten so that deleted rows' bytes leave
the database's files (see :mod:`memstrata.store.compaction`)."""

from __future__ import annotations

from pathlib import Path

import click

from memstrata.cli.base import cli, data_dir_option, json_option, print_json, settings_for
from memstrata.errors import BusyError, NotFoundError
from memstrata.store.compaction import LOCK_TIMEOUT_S, CompactionReport, TableCompaction


@cli.command(
    help="Rewrite the record store's tables so that the bytes of deleted rows leave the "
    "database's files, which a forget cannot do on a database server (docs/scaling.md). "
    "PostgreSQL: VACUUM FULL of each table, which locks that table against reads and writes "
    "while it is copied and its indexes rebuilt (measured on a small server: 2.2 s for "
    "50,000 turns, 84 MB; a writer waited up to 1.4 s). MySQL/MariaDB: an online rebuild of "
    "each table (ALTER TABLE ... FORCE, what OPTIMIZE TABLE does): writes go on, each table "
    "is locked only for a moment at the start and end (5.7 s for the same store; a writer "
    "waited up to 0.4 s). SQLite: VACUUM, holding the write lock for the whole file. An "
    "operator's command for a quiet time, never part of a forget. It says what stays out of "
    "its reach (the engine's logs, backups, replicas, freed disk blocks)."
)
@click.option(
    "--store-url",
    default=None,
    metavar="URL",
    help="The store to compact (default: the group's --store-url, $MEMSTRATA_STORE_URL, else "
    "the SQLite file in the data directory).",
)
@click.option(
    "--table",
    "tables",
    multiple=True,
    metavar="NAME",
    help="Compact only this table (repeatable; server stores; default every table).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Check the privileges and show each table's size; lock and change nothing.",
)
@click.option(
    "--lock-timeout",
    type=float,
    default=LOCK_TIMEOUT_S,
    show_default=True,
    metavar="SECONDS",
    help="Give up (exit 5) when another transaction holds a table's lock this long.",
)
@data_dir_option
@json_option
def compact(
    store_url: str | None,
    tables: tuple[str, ...],
    dry_run: bool,
    lock_timeout: float,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.store.opening import compact_store

    overrides = {"store_url": store_url} if store_url else {}
    settings = settings_for(data_dir=data_dir, **overrides)
    from memstrata.store.url import parse_store_url

    if settings.store_url is not None:
        url = settings.store_url.get_secret_value()
        where = parse_store_url(url)
        if where.engine == "sqlite" and not where.sqlite_path.exists():
            raise NotFoundError(f"no database at {where.sqlite_path}: check --store-url")
    elif settings.db_path.exists():
        url = f"sqlite:///{settings.db_path}"
    else:
        raise NotFoundError(
            f"no memory in {settings.data_dir} (no {settings.db_path.name}); check --data-dir, "
            "--store-url or $MEMSTRATA_STORE_URL"
        )

    def progress(one: TableCompaction) -> None:
        if not as_json:
            click.echo(f"  {_line(one)}", err=True)

    report = compact_store(
        url, tables=tables, dry_run=dry_run, lock_timeout_s=lock_timeout, progress=progress
    )
    if as_json:
        print_json(report.to_json())
    else:
        _echo(report)
    if report.dead_kept:
        kept = ", ".join(f"{t.table} {t.dead_kept}" for t in report.tables if t.dead_kept)
        raise BusyError(
            f"{report.dead_kept} deleted row(s) were kept in the rewritten files ({kept}): a "
            "transaction still open could see them (a long or idle transaction, a replication "
            "slot, a standby's feedback); run compact again once it has ended"
        )


def _echo(report: CompactionReport) -> None:
    before = sum(t.bytes_before for t in report.tables)
    after = sum(t.bytes_after for t in report.tables)
    if report.dry_run:
        for one in report.tables:
            click.echo(f"{one.table:<18}{one.bytes_before:>14,} bytes")
        click.echo(
            f"would compact {len(report.tables)} table(s) of {report.store} ({before:,} bytes) "
            f"by {report.method}; nothing changed"
        )
    else:
        click.echo(
            f"compacted {len(report.tables)} table(s) of {report.store}: {before:,} -> "
            f"{after:,} bytes"
        )
    unknown = [t.table for t in report.tables if t.dead_kept is None]
    if unknown and not report.dry_run:
        click.echo(
            "the server did not say (in English) whether deleted rows had to be kept in "
            f"{', '.join(unknown)}: check that no transaction was open from before the deletions"
        )
    if report.erasures_pending:
        click.echo(
            f"{report.erasures_pending} erasure(s) still keep their texts in the journal until "
            "every data directory sharing the store has applied them (`memstrata sites list`): "
            "those are live rows no compaction removes; run compact again after"
        )
    click.echo(f"locking: {report.locking}")
    click.echo("out of its reach (see docs/scaling.md):")
    for line in report.remains:
        click.echo(f"  - {line}")


def _line(one: TableCompaction) -> str:
    kept = f", {one.dead_kept} deleted row(s) kept" if one.dead_kept else ""
    return (
        f"{one.table}: {one.bytes_before:,} -> {one.bytes_after:,} bytes, "
        f"{one.files_rewritten} file(s) rewritten{kept}"
    )
