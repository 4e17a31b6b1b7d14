"""Calendar arithmetic on days: the intervals the grammar names, and the choice by tense.

Every interval is half-open, ``(first day, day after the last)``, in the speaker's calendar.
Functions raise ``ValueError`` or ``OverflowError`` for a day the calendar does not hold (the
year 0 or 10,000, 30 February); the grammar drops such an expression.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, timedelta
from typing import Final, Literal

from memstrata.timeref.tables import SEASONS

Days = tuple[date, date]
Tense = Literal["past", "future"]
Grain = Literal[
    "day", "weekend", "week", "month", "season", "part", "year", "decade", "range", "duration"
]

ONE_DAY: Final = timedelta(days=1)


def day(d: date) -> Days:
    return d, d + ONE_DAY


def week(d: date) -> Days:
    """The Monday-based week holding ``d``."""
    monday = d - timedelta(days=d.weekday())
    return monday, monday + timedelta(days=7)


def weekend(d: date) -> Days:
    """Saturday and Sunday of the week holding ``d``."""
    saturday = d - timedelta(days=d.weekday()) + timedelta(days=5)
    return saturday, saturday + timedelta(days=2)


def add_months(year: int, month: int, count: int) -> tuple[int, int]:
    index = year * 12 + month - 1 + count
    return index // 12, index % 12 + 1


def month(year: int, month_: int) -> Days:
    ny, nm = add_months(year, month_, 1)
    return date(year, month_, 1), date(ny, nm, 1)


def year(y: int) -> Days:
    return date(y, 1, 1), date(y + 1, 1, 1)


def months(year_: int, first: int, count: int) -> Days:
    """``count`` months from ``first`` of ``year_`` (running into the next year if need be)."""
    ey, em = add_months(year_, first, count)
    return date(year_, first, 1), date(ey, em, 1)


def season(year_: int, name: str) -> Days:
    """A season of ``year_``; winter is December of ``year_`` to February of the next."""
    first, last = SEASONS[name]
    return months(year_, first, (last - first) % 12 + 1)


def season_year(d: date, name: str) -> int:
    """The year whose ``name`` season holds ``d``, or ``d``'s own year when none does."""
    if name == "winter" and d.month <= 2:
        return d.year - 1
    return d.year


def decade(first_year: int) -> Days:
    return date(first_year, 1, 1), date(first_year + 10, 1, 1)


def shift_day(d: date, unit: str, count: int) -> date:
    """``d`` moved by ``count`` units (a month from 31 May is 30 June)."""
    if unit in ("day", "hour", "minute"):
        return d + timedelta(days=count) if unit == "day" else d
    if unit in ("week", "weekend"):
        return d + timedelta(weeks=count)
    if unit == "fortnight":
        return d + timedelta(weeks=2 * count)
    if unit == "decade":
        unit, count = "year", 10 * count
    if unit == "year":
        unit, count = "month", 12 * count
    y, m = add_months(d.year, d.month, count)
    last = month(y, m)[1] - ONE_DAY
    return date(y, m, min(d.day, last.day))


def unit_interval(d: date, unit: str) -> Days:
    """The interval of grain ``unit`` that holds ``d`` (a week ago: that week)."""
    if unit in ("day", "hour", "minute"):
        return day(d)
    if unit in ("week", "fortnight"):
        return week(d)
    if unit == "weekend":
        return weekend(d)
    if unit == "month":
        return month(d.year, d.month)
    if unit == "decade":
        return decade(d.year - d.year % 10)
    return year(d.year)


# Parts of a month: days (first, last); parts of a year: months (first, count).
MONTH_PARTS: Final[dict[str, tuple[int, int]]] = {
    "early": (1, 10),
    "mid": (11, 20),
    "late": (21, 31),
}
YEAR_PARTS: Final[dict[str, tuple[int, int]]] = {
    "early": (1, 4),
    "mid": (5, 4),
    "late": (9, 4),
    "start": (1, 2),
    "end": (11, 2),
    "first-half": (1, 6),
    "second-half": (7, 6),
}


def month_part(year_: int, month_: int, part: str) -> Days:
    first, last = MONTH_PARTS[part]
    start, end = month(year_, month_)
    return start.replace(day=first), min(end, start.replace(day=1) + timedelta(days=last))


def year_part(year_: int, part: str) -> Days:
    first, count = YEAR_PARTS[part]
    return months(year_, first, count)


def pick(
    candidates: Sequence[Days],
    today: date,
    tense: Tense | None,
    *,
    strict: bool = False,
    default: Days | None = None,
) -> Days | None:
    """The occurrence a bare expression names, among ``candidates`` (sorted by start).

    Past: the latest that started on or before ``today`` (``strict``: that ended before it).
    Future: the earliest that has not ended by ``today`` (``strict``: that starts after it).
    Unknown: ``default`` if given, else the one holding ``today``, else the nearest (a tie
    goes to the future).
    """
    if tense == "past":
        past = [c for c in candidates if (c[1] <= today if strict else c[0] <= today)]
        return past[-1] if past else None
    if tense == "future":
        future = [c for c in candidates if (c[0] > today if strict else c[1] > today)]
        return future[0] if future else None
    if default is not None:
        return default
    best: Days | None = None
    best_gap = 0
    for c in candidates:
        if c[0] <= today < c[1]:
            return c
        gap = (c[0] - today).days if c[0] > today else (today - c[1]).days + 1
        if best is None or gap <= best_gap:  # sorted by start: a later one wins a tie
            best, best_gap = c, gap
    return best
