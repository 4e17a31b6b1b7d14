"""The ``fact`` commands: add a fact by hand, list facts with their filters."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from memstrata.cli.base import (
    ScopeArgs,
    cli,
    data_dir_option,
    describe,
    json_option,
    memory_for,
    print_json,
    scope_options,
)
from memstrata.codec import record_to_json
from memstrata.errors import InvalidInputError
from memstrata.model import Category

if TYPE_CHECKING:
    from memstrata.api.browse import Validity

_CATEGORIES = [c.value for c in Category]


@cli.group(help="Facts (L3): add one by hand, or list them by category, topic, validity, slot.")
def fact() -> None:
    """The fact group."""


def _when(text: str | None, start: str | None, end: str | None) -> dict[str, Any] | None:
    """``--when-text``, ``--when-start`` and ``--when-end`` as ``Memory.add_fact`` takes them."""
    if start is None and end is None:
        if text is not None:
            raise InvalidInputError("--when-text needs --when-start and --when-end")
        return None
    if start is None or end is None:
        raise InvalidInputError("a fact's time needs both --when-start and --when-end")
    return {"text": text, "start": start, "end": end}


@fact.command(
    name="add",
    help="Add a fact by hand. Without --source its own words are stored as a turn (surface "
    "manual) and cited. --when-start and --when-end give the time it speaks of, [start, end) "
    "in ISO 8601 (without a zone: UTC), --when-text the words that named it (left out: the "
    "interval in words); --slot the state it sets for its subject, kind or kind:qualifier "
    "(employer, allergy:shrimp), --value that slot's value as said (CATL).",
)
@click.argument("text", nargs=-1, required=True)
@scope_options
@click.option("--category", default="other", show_default=True, type=click.Choice(_CATEGORIES))
@click.option("--confidence", default=1.0, show_default=True, type=click.FloatRange(0, 1))
@click.option("--importance", default=0.5, show_default=True, type=click.FloatRange(0, 1))
@click.option("--topic", default=None, help="The topic it belongs to.")
@click.option(
    "--source", "sources", multiple=True, help="An episode it rests on (repeat for more)."
)
@click.option("--slot", default=None, help="The state it sets: employer, allergy:shrimp...")
@click.option("--value", default=None, help="The slot's value as said: CATL, husband 王磊.")
@click.option("--when-text", default=None, help="The words that named its time: 'last Friday'.")
@click.option("--when-start", default=None, help="Where its time starts (ISO 8601, included).")
@click.option("--when-end", default=None, help="Where its time ends (ISO 8601, not included).")
@data_dir_option
@json_option
def add(
    text: tuple[str, ...],
    scope_args: ScopeArgs,
    category: str,
    confidence: float,
    importance: float,
    topic: str | None,
    sources: tuple[str, ...],
    slot: str | None,
    value: str | None,
    when_text: str | None,
    when_start: str | None,
    when_end: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    when = _when(when_text, when_start, when_end)
    with memory_for(data_dir, create=True) as mem:
        added = mem.add_fact(
            " ".join(text),
            scope_args.scope(),
            category=category,
            confidence=confidence,
            importance=importance,
            topic=topic,
            sources=sources,
            when=when,
            slot=slot,
            value=value,
        )
    if as_json:
        print_json(record_to_json(added))
    else:
        click.echo(describe(added))


@fact.command(
    name="list",
    help="List a scope's facts in id order, with filters: --slot keeps one slot, --slot-kind "
    "every slot of a kind (allergy: allergy and allergy:...).",
)
@scope_options
@click.option("--category", default=None, type=click.Choice(_CATEGORIES))
@click.option("--topic", default=None, help="Only facts of this topic.")
@click.option(
    "--valid",
    default="current",
    show_default=True,
    type=click.Choice(["current", "superseded", "all"]),
    help="Facts holding now, no longer holding, or both.",
)
@click.option("--slot", default=None, help="Only facts of this slot (allergy:shrimp).")
@click.option("--slot-kind", default=None, help="Only facts whose slot is of this kind.")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 10_000))
@click.option("--after", default=None, help="Continue after this fact id.")
@data_dir_option
@json_option
def list_(
    scope_args: ScopeArgs,
    category: str | None,
    topic: str | None,
    valid: str,
    slot: str | None,
    slot_kind: str | None,
    limit: int,
    after: str | None,
    data_dir: Path | None,
    as_json: bool,
) -> None:
    with memory_for(data_dir) as mem:
        views = mem.facts(
            scope_args.scope(),
            category=category,
            topic=topic,
            valid=cast("Validity", valid),
            slot=slot,
            slot_kind=slot_kind,
            after=after,
            limit=limit,
        )
    if as_json:
        print_json(
            [{**record_to_json(v.fact), "superseded_by_text": v.superseded_by_text} for v in views]
        )
        return
    for view in views:
        click.echo(describe(view.fact))
        if view.superseded_by_text is not None:
            click.echo(f"  superseded by: {view.superseded_by_text}")
