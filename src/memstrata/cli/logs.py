"""Log records as one line each on stderr: a CLI user sees what failed, never a traceback
(``serve`` keeps the usual logging, tracebacks included, for its operator)."""

from __future__ import annotations

import logging

import click


class OneLineHandler(logging.Handler):
    """``warning: <message> (<exception>)`` on the current stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = f"{record.levelname.lower()}: {record.getMessage()}"
            if record.exc_info and record.exc_info[1] is not None:
                text += f" ({record.exc_info[1]})"
            click.echo(text, err=True)
        except Exception:  # a log line must never break the command
            self.handleError(record)


def configure_logging() -> None:
    """Warnings and errors of memstrata as one line each (once per process)."""
    logger = logging.getLogger("memstrata")
    if not any(isinstance(h, OneLineHandler) for h in logger.handlers):
        logger.addHandler(OneLineHandler(logging.WARNING))
