"""Absolute dates a query names, as time windows, in English and Chinese.

"What did Maria do on 7 July, 2023?" is about what was said around that day. Recognised:
a day ("7 July, 2023", "July 7 2023", "2023-07-07", "2023年7月7日"), a range of days ("between
August 11 and 15 2023"), a month ("January 2022", "2023年7月"), a season ("summer 2021"), a year
("in 2022", "2022年"), and a month without a year ("in June", "7月") which matches that month of
any year. Relative dates ("last week") are not resolved here: that is :mod:`memstrata.timeref`,
whose month names, seasons and calendar arithmetic this module shares. Its own patterns stay:
the search bonus is tuned and measured on exactly what they read (a query's "7月" is any July,
where a turn's is the one its tense names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Final

from memstrata.timeref import periods
from memstrata.timeref.tables import MONTH_PATTERN as _MP
from memstrata.timeref.tables import MONTHS as _MONTHS
from memstrata.timeref.tables import ORDINAL as _ORD
from memstrata.timeref.tables import SEASONS as _SEASONS

_DAY_MONTH_YEAR: Final = re.compile(rf"\b(\d{{1,2}}){_ORD}\s+(?:of\s+)?({_MP})\.?,?\s*(\d{{4}})\b")
_MONTH_DAY_YEAR: Final = re.compile(rf"\b({_MP})\.?\s+(\d{{1,2}}){_ORD}\b,?\s*(\d{{4}})\b")
_RANGE: Final = re.compile(
    rf"\b({_MP})\s+(\d{{1,2}}){_ORD}\s+(?:and|to|-|–)\s+(?:({_MP})\s+)?(\d{{1,2}}){_ORD},?\s*(\d{{4}})"
)
_ISO: Final = re.compile(r"\b(\d{4})[-/](\d{1,2})[-/](\d{1,2})\b")
_ZH_DAY: Final = re.compile(r"(\d{4})年(\d{1,2})月(\d{1,2})[日号]")
_MONTH_YEAR: Final = re.compile(rf"\b({_MP})\.?,?\s+(?:of\s+)?(\d{{4}})\b")
_ZH_MONTH_YEAR: Final = re.compile(r"(\d{4})年(\d{1,2})月(?!\d)")
_SEASON_YEAR: Final = re.compile(r"\b(spring|summer|autumn|fall|winter)\s+(?:of\s+)?(\d{4})\b")
_YEAR: Final = re.compile(r"\b(?:in|during|of|since)\s+(\d{4})\b|(\d{4})年(?!\d{1,2}月)")
_MONTH_ONLY: Final = re.compile(rf"\b(?:in|during|of|early|late|mid-?)\s+({_MP})\b(?!\s+\d)")
_ZH_MONTH_ONLY: Final = re.compile(r"(?<![\d年])(\d{1,2})月(?:\d{1,2}[日号])?")


@dataclass(frozen=True, slots=True)
class DateQuery:
    """Windows of Unix seconds, and months (1-12) of any year, that a query names."""

    windows: tuple[tuple[float, float], ...] = ()
    months: frozenset[int] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.windows or self.months)


def _span(days: periods.Days) -> tuple[float, float]:
    start, end = (datetime.combine(d, datetime.min.time(), tzinfo=UTC) for d in days)
    return start.timestamp(), end.timestamp()


def _day(year: int, month: int, day: int) -> tuple[float, float] | None:
    try:
        return _span(periods.day(date(year, month, day)))
    except (ValueError, OverflowError):
        return None


def _month(year: int, month: int) -> tuple[float, float] | None:
    if not 1 <= month <= 12:
        return None
    try:  # a year the calendar does not hold (0, or a month that ends after 9999) names nothing
        return _span(periods.month(year, month))
    except ValueError:
        return None


def date_query(text: str) -> DateQuery:
    """The absolute dates ``text`` names (the most specific kind found wins)."""
    t = text.lower()
    days = [_day(int(m[3]), _MONTHS[m[2]], int(m[1])) for m in _DAY_MONTH_YEAR.finditer(t)]
    days += [_day(int(m[3]), _MONTHS[m[1]], int(m[2])) for m in _MONTH_DAY_YEAR.finditer(t)]
    days += [_day(int(m[1]), int(m[2]), int(m[3])) for m in _ISO.finditer(t)]
    days += [_day(int(m[1]), int(m[2]), int(m[3])) for m in _ZH_DAY.finditer(t)]
    for m in _RANGE.finditer(t):
        first = _day(int(m[5]), _MONTHS[m[1]], int(m[2]))
        last = _day(int(m[5]), _MONTHS[m[3] or m[1]], int(m[4]))
        if first and last and first[0] <= last[0]:
            days.append((first[0], last[1]))
    windows = [w for w in days if w]
    if not windows:
        windows = [
            w
            for w in (
                [_month(int(m[2]), _MONTHS[m[1]]) for m in _MONTH_YEAR.finditer(t)]
                + [_month(int(m[1]), int(m[2])) for m in _ZH_MONTH_YEAR.finditer(t)]
            )
            if w
        ]
    if not windows:
        for m in _SEASON_YEAR.finditer(t):
            first_month, last_month = _SEASONS[m[1]]
            year = int(m[2])
            start = _month(year, first_month)
            end = _month(year + (last_month < first_month), last_month)
            if start and end:
                windows.append((start[0], end[1]))
    if not windows:
        for m in _YEAR.finditer(t):
            year = int(m[1] or m[2])
            if 1900 <= year <= 2200:
                windows.append(_span(periods.year(year)))
    months: set[int] = set()
    if not windows:
        months = {
            _MONTHS[m[1]]
            for m in _MONTH_ONLY.finditer(t)
            if m[1] != "may" or re.search(r"\b(?:in|during|of)\s+may\b", t)
        }
        months |= {int(m[1]) for m in _ZH_MONTH_ONLY.finditer(t) if 1 <= int(m[1]) <= 12}
    return DateQuery(tuple(windows), frozenset(months))
