"""``memstrata index``: embed what has no dense vector yet, with progress.

On a terminal a progress bar per user goes to stderr; with ``--json`` one JSON event per line
goes to stdout (``start``, ``progress`` after each batch, ``done``). Ctrl-C stops after the
batch in hand: what is embedded is kept (in the embedding cache), the rest stays pending and
is resumed by the next ``memstrata index``, a search with ``--wait`` or the server's indexer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from memstrata.cli.base import cli, data_dir_option, json_option, memory_for

if TYPE_CHECKING:
    from memstrata.api import Memory


class _Progress:
    """Shows embedding progress: a bar on a terminal, JSON events, or nothing."""

    def __init__(self, mode: str) -> None:
        self.mode = mode  # "bar", "json" or "quiet"
        self._bar: Any = None
        self._shown = 0

    def __call__(self, user: str, done: int, left: int) -> None:
        if self.mode == "json":
            event = "start" if done == 0 else "progress"
            click.echo(json.dumps({"event": event, "user": user, "done": done, "left": left}))
        elif self.mode == "bar":
            if done == 0:
                self.close()
                if left:
                    self._bar = click.progressbar(
                        length=left, label=f"embedding {user}", file=sys.stderr, show_pos=True
                    )
                    self._bar.__enter__()
                    self._shown = 0
            elif self._bar is not None:
                self._bar.update(done - self._shown)
                self._shown = done

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None


def embed_with_progress(mem: Memory, user: str | None, mode: str) -> dict[str, int]:
    """Embed what is pending (one user, or all), showing progress as ``mode`` says; per
    user, the count embedded. Ctrl-C stops between batches and says what is left."""
    progress = _Progress(mode)
    try:
        return mem.index(user, progress=progress)
    except KeyboardInterrupt:
        progress.close()
        users = [user] if user is not None else mem.store.users()
        left = sum(mem.indexes.pending(u) for u in users)
        click.echo(
            f"stopped: {left} record(s) left without vectors; `memstrata index` resumes", err=True
        )
        raise
    finally:
        progress.close()


def progress_mode(as_json: bool) -> str:
    """A bar on a terminal, JSON events with ``--json``, nothing otherwise (a pipe, CI)."""
    if as_json:
        return "json"
    return "bar" if sys.stderr.isatty() else "quiet"


@cli.command(help="Embed every record that has no dense vector yet, with progress.")
@click.option("--user", default=None, help="Only this user (default: every user).")
@data_dir_option
@json_option
def index(user: str | None, data_dir: Path | None, as_json: bool) -> None:
    with memory_for(data_dir) as mem:
        if user is not None and user not in mem.store.users():
            from memstrata.errors import NotFoundError

            raise NotFoundError(f"no records of user {user!r} in this memory")
        done = embed_with_progress(mem, user, progress_mode(as_json))
    total = sum(done.values())
    if as_json:
        click.echo(json.dumps({"event": "done", "embedded": done, "total": total}))
    else:
        click.echo(f"embedded {total} record(s) across {len(done)} user(s); none pending")
