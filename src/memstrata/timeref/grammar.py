"""What a rule of the grammar finds, and what it is given to resolve it.

A rule is one compiled pattern and a function from its match to a :class:`Found` (or None:
not a date after all). The patterns live in :mod:`memstrata.timeref.english` and
:mod:`memstrata.timeref.chinese`; :mod:`memstrata.timeref.engine` runs them, keeps the longest
of overlapping finds and joins neighbours ("from X to Y", "since X", "X next week").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from memstrata.timeref import periods
from memstrata.timeref.periods import Days, Grain, Tense
from memstrata.timeref.tense import Reader

__all__ = ["Context", "Found", "Grain", "Rule", "span"]


@dataclass(frozen=True, slots=True)
class Found:
    """An interval a rule read. ``candidates`` are the occurrences a bare expression could name
    (so that "since May" or the end of a range can choose again); ``weekdays`` the days of the
    week a weekday or a range of them names (for "Monday to Wednesday next week")."""

    days: Days
    grain: Grain
    relative: bool
    candidates: tuple[Days, ...] = ()
    strict: bool = False
    weekdays: tuple[int, int] | None = None


@dataclass(slots=True)
class Context:
    """The text (full-width forms made ASCII) and the day it was said, in the speaker's zone."""

    text: str
    said_at: datetime
    tense: Tense | None = None
    reader: Reader = field(init=False)
    _inferred: dict[tuple[int, int], Tense | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.reader = Reader(self.text)

    @property
    def today(self) -> date:
        return self.said_at.date()

    def tense_at(self, start: int, end: int) -> Tense | None:
        """The caller's tense, else the one the words around ``text[start:end]`` suggest."""
        if self.tense is not None:
            return self.tense
        key = (start, end)
        if key not in self._inferred:
            self._inferred[key] = self.reader.infer(start, end)
        return self._inferred[key]

    def bare(
        self,
        m: re.Match[str],
        candidates: Iterable[Days],
        grain: Grain,
        *,
        strict: bool = False,
        default: Days | None = None,
        need_tense: bool = False,
        weekday: int | None = None,
    ) -> Found | None:
        """The occurrence of a bare expression ("in May", "on Friday") the tense names."""
        start, end = span(m)
        which = self.tense_at(start, end)
        if need_tense and which is None:
            return None
        options = tuple(sorted(candidates))
        chosen = periods.pick(options, self.today, which, strict=strict, default=default)
        if chosen is None:
            return None
        weekdays = (weekday, weekday) if weekday is not None else None
        return Found(chosen, grain, True, options, strict, weekdays)


Handler = Callable[[re.Match[str], Context], Found | None]


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern[str]
    handler: Handler


def span(m: re.Match[str]) -> tuple[int, int]:
    """The words of the expression: group ``m`` when the pattern has one (a preposition before
    it is context, not the expression), else the whole match."""
    return m.span("m") if "m" in m.re.groupindex else m.span()


def fixed(d: Days, grain: Grain, relative: bool = True) -> Found:
    return Found(d, grain, relative)


def weekday_candidates(today: date, weekday: int) -> list[Days]:
    """Every ``weekday`` from two weeks before ``today`` to two weeks after."""
    first = today - timedelta(days=14)
    first += timedelta(days=(weekday - first.weekday()) % 7)
    return [periods.day(first + timedelta(days=7 * k)) for k in range(5)]


def years_around(today: date, make: Callable[[int], Days], before: int = 1) -> list[Days]:
    """``make(year)`` for the years around ``today``'s (those the calendar holds)."""
    found = []
    for y in range(today.year - before, today.year + 2):
        try:
            found.append(make(y))
        except (ValueError, OverflowError):
            continue
    return found


def months_around(today: date, make: Callable[[int, int], Days]) -> list[Days]:
    """``make(year, month)`` for the month before ``today``'s, its own and the next."""
    found = []
    for k in (-1, 0, 1):
        try:
            found.append(make(*periods.add_months(today.year, today.month, k)))
        except (ValueError, OverflowError):
            continue
    return found
