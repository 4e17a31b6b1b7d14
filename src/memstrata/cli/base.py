"""What every command module shares: the command group, common options, output."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from memstrata.codec import format_time, record_to_json

if TYPE_CHECKING:
    from memstrata.api import Memory
    from memstrata.model import Scope

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


def scope_options(func: F) -> F:
    func = click.option("--agent", default=None, help="Agent id (optional).")(func)
    func = click.option("--thread", default=None, help="Thread id (optional).")(func)
    return click.option("--user", required=True, help="User id (the scope's owner).")(func)


def memory_for(data_dir: Path | None) -> Memory:
    from memstrata.api import Memory
    from memstrata.settings import load_settings

    return Memory.open(settings=load_settings(data_dir=data_dir))


def scope_of(user: str, thread: str | None, agent: str | None) -> Scope:
    from memstrata.model import Scope

    return Scope(user, thread, agent)


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
        return (
            f"{data['id']}  v{data['version']} {data['category']} ({state}, "
            f"confidence {data['confidence']:.2f}, importance {data['importance']:.2f})\n"
            f"  {data['text']}\n  sources: {', '.join(data['sources'])}"
        )
    return f"{data['id']}  v{data['version']} {data['doc_kind']}/{data['key']}\n" + json.dumps(
        data["content"], ensure_ascii=False, indent=2
    )


@click.group(help="memstrata: layered, auditable long-term memory for LLM agents.")
@click.version_option(package_name="memstrata")
def cli() -> None:
    """The command group."""
