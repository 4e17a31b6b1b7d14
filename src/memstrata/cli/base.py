"""What every command module shares: the command group, common options, output."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from memstrata.codec import format_time, record_to_json
from memstrata.errors import ConfigError, InvalidInputError, NotFoundError

if TYPE_CHECKING:
    from memstrata.api import Memory
    from memstrata.model import Scope
    from memstrata.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])


def data_dir_option(func: F) -> F:
    return click.option(
        "--data-dir",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help="Data directory (default: $MEMSTRATA_DATA_DIR or ~/.local/share/memstrata).",
    )(func)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


@dataclass(frozen=True, slots=True)
class ScopeArgs:
    """``--user``, ``--thread`` and ``--agent`` as given; :meth:`scope` checks them."""

    user: str
    thread: str | None
    agent: str | None

    def scope(self) -> Scope:
        from memstrata.model import Scope

        return Scope(self.user, self.thread, self.agent)


def scope_options(func: F) -> F:
    """``--user``, ``--thread`` and ``--agent``, passed to the command as ``scope_args``."""

    @functools.wraps(func)
    def command(*args: Any, user: str, thread: str | None, agent: str | None, **kw: Any) -> Any:
        return func(*args, scope_args=ScopeArgs(user, thread, agent), **kw)

    with_options = click.option("--agent", default=None, help="Agent id (optional).")(command)
    with_options = click.option("--thread", default=None, help="Thread id (optional).")(
        with_options
    )
    return cast(
        F, click.option("--user", required=True, help="User id (the scope's owner).")(with_options)
    )


def memory_for(data_dir: Path | None, *, create: bool = False) -> Memory:
    """The memory in ``data_dir``. Only writing commands (``create``) make a new one; any
    other command refuses a data directory that holds no memory, so a mistyped path creates
    nothing."""
    from memstrata.api import Memory

    settings = settings_for(data_dir=data_dir)
    if settings.data_dir.exists() and not settings.data_dir.is_dir():
        raise ConfigError(f"the data directory {settings.data_dir} is not a directory")
    if not create and settings.store_url is None and not settings.db_path.exists():
        raise NotFoundError(
            f"no memory in {settings.data_dir} (no {settings.db_path.name}); check --data-dir "
            "or $MEMSTRATA_DATA_DIR, or create it with `memstrata init`"
        )
    return Memory.open(settings=settings)


def read_stdin() -> str:
    """All of stdin as UTF-8 text; other bytes are refused with their offset."""
    from memstrata.textio import check_unicode, decode_utf8

    if sys.stdin is None or sys.stdin.closed:
        raise InvalidInputError("there is no stdin to read turns from")
    buffer = getattr(sys.stdin, "buffer", None)
    if buffer is not None:
        return decode_utf8(buffer.read(), source="stdin")
    text = sys.stdin.read()
    check_unicode(text, "stdin")
    return text


def edit_text(text: str) -> str | None:
    """``text`` edited in $EDITOR (None: not saved); a file saved in another encoding than
    UTF-8 is refused with the byte offset."""
    try:
        return click.edit(text, extension=".md", require_save=True)
    except UnicodeDecodeError as exc:
        from memstrata.textio import decode_utf8

        decode_utf8(exc.object, source="the edited file")
        raise InvalidInputError(f"the edited file is not UTF-8 text: {exc.reason}") from exc


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2))


def when(value: datetime) -> str:
    return format_time(value)[:19].replace("T", " ")


def describe(record: Any) -> str:
    data = record_to_json(record)
    if data["kind"] == "episode":
        return (
            f"{data['id']}  [{data['session_id']}] {when(record.time)}  "
            f"{data['speaker']}: {data['text']}"
        )
    if data["kind"] == "fact":
        state = "current" if record.valid_to is None else f"ended {when(record.valid_to)}"
        slot = f" slot {data['slot']}" if data["slot"] is not None else ""
        speaks_of = ""
        if record.when is not None:
            speaks_of = (
                f"\n  when: {record.when.text} "
                f"[{when(record.when.start)}, {when(record.when.end)}) UTC"
            )
        return (
            f"{data['id']}  v{data['version']} {data['category']} ({state}, "
            f"confidence {data['confidence']:.2f}, importance {data['importance']:.2f}){slot}\n"
            f"  {data['text']}{speaks_of}\n  sources: {', '.join(data['sources'])}"
        )
    # a user's listing holds the documents of their threads too: each says whose it is
    return (
        f"{data['id']}  v{data['version']} {data['doc_kind']}/{data['key']}  ({record.scope})\n"
        + json.dumps(data["content"], ensure_ascii=False, indent=2)
    )


@click.group(help="memstrata: layered, auditable long-term memory for LLM agents.")
@click.version_option(package_name="memstrata")
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Config file (default: $MEMSTRATA_CONFIG or ~/.config/memstrata/config.toml).",
)
@click.option(
    "--store-url",
    default=None,
    metavar="URL",
    help="Record store: sqlite:///path, postgresql://user:pw@host/db or mysql://user:pw@host/db "
    "(default: $MEMSTRATA_STORE_URL, else the SQLite file in the data directory).",
)
def cli(config_file: Path | None, store_url: str | None) -> None:
    """The command group."""
    from memstrata.cli.logs import configure_logging

    _invocation["config_file"] = config_file
    _invocation["store_url"] = store_url
    if click.get_current_context().invoked_subcommand != "serve":  # a server keeps tracebacks
        configure_logging()


#: what the group's options chose for this invocation
_invocation: dict[str, Any] = {"config_file": None, "store_url": None}


def settings_for(**overrides: Any) -> Settings:
    """The settings for this invocation: ``--config`` and ``--store-url`` if given, flags in
    ``overrides``."""
    from memstrata.settings import load_settings

    overrides.setdefault("store_url", _invocation["store_url"])
    return load_settings(config_file=_invocation["config_file"], **overrides)
