"""A short rendering of an interval for a model to read: "2026-05-15", "week of 2026-05-11"."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta, tzinfo
from typing import Final

from memstrata.errors import InvalidInputError

_SEASON_STARTS: Final = {3: "spring", 6: "summer", 9: "autumn", 12: "winter"}


def label(start: datetime, end: datetime, tz: tzinfo = UTC) -> str:
    """``[start, end)`` as the calendar names it, in ``tz`` (UTC unless given).

    A day "2026-05-15"; a weekend "weekend of 2026-05-16" (its Saturday); a Monday-based week
    "week of 2026-05-11"; a month "2026-05"; a season "summer 2026" ("winter 2026-27" runs
    December to February); a year "2026"; a decade "1990s"; anything else its first and last
    days, "2026-05-03 to 2026-05-10" (the last day inclusive: ``end`` is excluded).
    """
    if start.tzinfo is None or end.tzinfo is None:
        raise InvalidInputError("label needs timezone-aware datetimes")
    if not start < end:
        raise InvalidInputError(f"an interval must start before it ends: {start} to {end}")
    try:
        a, b = start.astimezone(tz), end.astimezone(tz)
    except OverflowError:  # beyond the calendar in that zone: read it in UTC
        a, b = start.astimezone(UTC), end.astimezone(UTC)
    if a.time() == time() and b.time() == time():
        named = _named(a, b)
        if named is not None:
            return named
    first = a.date()
    last = (b - timedelta(microseconds=1)).date()
    return first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"


def _named(a: datetime, b: datetime) -> str | None:
    d0, d1 = a.date(), b.date()
    days = (d1 - d0).days
    if days == 1:
        return d0.isoformat()
    if days == 2 and d0.weekday() == 5:
        return f"weekend of {d0.isoformat()}"
    if days == 7 and d0.weekday() == 0:
        return f"week of {d0.isoformat()}"
    if d0.day != 1 or d1.day != 1:
        return None
    months = (d1.year - d0.year) * 12 + d1.month - d0.month
    if months == 1:
        return f"{d0.year:04d}-{d0.month:02d}"
    if months == 3 and d0.month in _SEASON_STARTS:
        name = _SEASON_STARTS[d0.month]
        if name == "winter":
            return f"winter {d0.year:04d}-{(d0.year + 1) % 100:02d}"
        return f"{name} {d0.year:04d}"
    if d0.month == 1 and months == 12:
        return f"{d0.year:04d}"
    if d0.month == 1 and months == 120 and d0.year % 10 == 0:
        return f"{d0.year:04d}s"
    return None
