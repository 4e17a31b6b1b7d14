"""The ``memstrata`` command line: thin over :class:`memstrata.api.Memory`.

Each command parses its arguments, calls the facade and prints the result (``--json`` on every
read command). Errors from the exception tree become one line on stderr and an exit code, in
one table (:data:`EXIT_CODES`).
"""

from __future__ import annotations

import sys
from typing import Final

import click

from memstrata.errors import (
    BusyError,
    ConfigError,
    ConflictError,
    InvalidInputError,
    MemstrataError,
    NotFoundError,
    StoreError,
)

#: Exit codes by error class; the first matching class (most specific first) wins.
EXIT_CODES: Final[tuple[tuple[type[MemstrataError], int], ...]] = (
    (InvalidInputError, 2),
    (NotFoundError, 3),
    (ConflictError, 4),
    (BusyError, 5),
    (ConfigError, 6),
    (StoreError, 7),
    (MemstrataError, 1),
)


def exit_code_for(exc: MemstrataError) -> int:
    for cls, code in EXIT_CODES:
        if isinstance(exc, cls):
            return code
    return 1  # pragma: no cover - MemstrataError closes the table


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    from memstrata.cli.commands import cli
    from memstrata.textio import check_unicode

    args = sys.argv[1:] if argv is None else argv
    try:
        for number, arg in enumerate(args, start=1):
            check_unicode(arg, f"argument {number}")
        cli.main(args=args, prog_name="memstrata", standalone_mode=False)
    except MemstrataError as exc:
        click.echo(f"error: {exc}", err=True)
        return exit_code_for(exc)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
    return 0


def run() -> None:
    sys.exit(main())
