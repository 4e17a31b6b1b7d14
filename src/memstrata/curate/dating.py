"""Every fact served carries its date: the one rendering of when a fact happened or held.

A fact with a time it speaks of (:attr:`memstrata.model.Fact.when`, resolved at capture) shows
that time in the one language-neutral form of :func:`memstrata.timeref.label` ("2026-05-15",
"week of 2026-05-11", "2026-10"); one without shows the day it was said. An event or a plan
shows its own time ("finished the quarterly review last Friday (2026-05-15)", "trip to Kyoto
(2026-10)"); a state shows since when it holds when the person said so ("moved to Ningde last
week (since week of 2026-05-11)"), else the day it was said, which it held as of ("works
at CATL (2026-05-20)"), so that a year later an agent can tell what is current and when it
happened.
"""

from __future__ import annotations

from typing import Final

from memstrata import timeref
from memstrata.model import Category, Fact

#: categories whose facts are things that happen at a time (the rest are states)
_HAPPENINGS: Final = frozenset({Category.EVENT, Category.PLAN, Category.DECISION})


def said(fact: Fact) -> str:
    """The day a fact was said (UTC)."""
    return fact.valid_from.date().isoformat()


def when_label(fact: Fact) -> str | None:
    """The time a fact speaks of, as a label; None when it names none."""
    if fact.when is None:
        return None
    return timeref.label(fact.when.start, fact.when.end)


def since(fact: Fact) -> str:
    """Since when a state holds: "since <its time>" when the person dated it in the past,
    else the day it was said (it held as of then)."""
    label = when_label(fact)
    if label is not None and fact.when is not None and fact.when.start <= fact.valid_from:
        if " to " in label:  # a span up to now ("一个月了", "for three years"): since its start
            label = fact.when.start.date().isoformat()
        return f"since {label}"
    return said(fact)


def stamp(fact: Fact) -> str:
    """The date a fact is served with: its own time for an event or a plan (else the day it
    was said), since when or as of when for a state."""
    if fact.category in _HAPPENINGS:
        return when_label(fact) or said(fact)
    return since(fact)


def dated(fact: Fact, text: str | None = None) -> str:
    """``text`` (the fact's own by default) with its date: "… (2026-05-15)"."""
    return f"{(text or fact.text).rstrip(' .。;；,，')} ({stamp(fact)})"
