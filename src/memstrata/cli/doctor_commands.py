"""The recovery commands: ``doctor`` (check and repair a data directory) and ``restore``."""

from __future__ import annotations

from pathlib import Path
from typing import Final

import click

from memstrata.cli.base import (
    ScopeArgs,
    cli,
    data_dir_option,
    json_option,
    memory_for,
    print_json,
    scope_options,
    settings_for,
)

#: the exit code of ``doctor`` when problems remain (errors of the tree keep theirs)
PROBLEMS_REMAIN: Final = 8


class ProblemsRemain(click.ClickException):
    """``doctor`` found problems it did not (or could not) repair."""

    exit_code = PROBLEMS_REMAIN


@cli.command(
    help="Check the database, the raw trace and the embedding cache; exit 0 when all is "
    f"well, {PROBLEMS_REMAIN} when problems remain. --repair fixes what can be fixed safely "
    "(run it while nothing else uses the data directory). With --store-url naming a "
    "PostgreSQL or MySQL server, the server is reached and its schema migrations checked "
    "instead of the SQLite file (never rebuilt there), and the trace is compared with it."
)
@click.option("--repair", is_flag=True, help="Fix what can be fixed and say what was done.")
@data_dir_option
@json_option
def doctor(repair: bool, data_dir: Path | None, as_json: bool) -> None:
    from memstrata.doctor import diagnose

    report = diagnose(settings_for(data_dir=data_dir), repair=repair)
    if as_json:
        print_json(report.to_json())
    else:
        for line in report.checked:
            click.echo(f"checked {line}")
        for problem in report.problems:
            click.echo(f"{problem.part}: {problem.what}")
            if problem.fixed is not None:
                click.echo(f"  fixed: {problem.fixed}")
        if report.ok:
            click.echo("all well")
    if not report.ok:
        hint = "" if repair else "; `memstrata doctor --repair` fixes what can be fixed"
        raise ProblemsRemain(f"{len(report.remaining)} problem(s) remain{hint}")


@cli.command(
    help="Restore a scope's episodes from the raw trace (verbatim, same ids, times and "
    "threads) into a store where the scope is empty, or with --missing only those it lacks."
)
@click.option(
    "--from-trace", "from_trace", is_flag=True, help="Restore from the raw trace (required)."
)
@click.option(
    "--missing",
    is_flag=True,
    help="Add only the episodes the store lacks (the scope need not be empty).",
)
@scope_options
@data_dir_option
@json_option
def restore(
    from_trace: bool,
    missing: bool,
    scope_args: ScopeArgs,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    from memstrata.errors import InvalidInputError

    if not from_trace:
        raise InvalidInputError("name the source: --from-trace")
    with memory_for(data_dir, create=True) as mem:
        episodes = mem.restore_from_trace(scope_args.scope(), missing=missing)
    if as_json:
        print_json({"restored": [e.id for e in episodes]})
    else:
        click.echo(f"restored {len(episodes)} episode(s) from the trace")
