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


#: set when the output could not be written (a full disk, a closed pipe)
_OUTPUT_FAILED: list[bool] = []


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
        sys.stdout.flush()  # output that cannot be written is an error, not a silent loss
    except BrokenPipeError:
        _OUTPUT_FAILED.append(True)
        return 1  # the reader went away (``| head``): quietly, as click does
    except OSError as exc:
        _OUTPUT_FAILED.append(True)
        click.echo(f"error: cannot write the output: {exc.strerror or exc}", err=True)
        return 1
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
    code = main()
    if _OUTPUT_FAILED:
        _quiet_stdout()
    sys.exit(code)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's last flush of output that could not be
    written does not fail again (and turn the exit status into 120)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
