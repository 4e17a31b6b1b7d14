"""The holidays and festivals a person dates things by, in English and Chinese.

"Over Christmas", "at Easter", "Thanksgiving", "Lunar New Year", "过年", "春节", "五一",
"国庆", "中秋": each names one occurrence a year, resolved like a bare month (by the tense of
the words around it, the nearest when they say none), or the one a year or a modifier names
("Christmas 2025", "last Christmas", "next Easter", "去年春节", "明年国庆").

Fixed and weekday-counted days are computed here; Easter by the Gregorian computus
(:func:`dateutil.easter.easter`); the lunisolar festivals (the Spring Festival, the Lantern,
Dragon Boat and Mid-Autumn festivals, Qingming) from the Chinese calendar of the
``holidays`` library, read through its public country calendars (China's, in English), for
the years it holds.

A holiday names its day, even one kept for several (五一 is 1 May, 国庆 1 October, 春节 and 过年
the first day of the lunar year): the day a person dates things by.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from typing import Final

from memstrata.timeref import periods
from memstrata.timeref.chinese import YEAR_OFFSET
from memstrata.timeref.grammar import Context, Found, Grain, Rule, fixed, years_around
from memstrata.timeref.periods import Days

#: a holiday's occurrence in a year; ValueError for a year its calendar does not hold
Make = Callable[[int], Days]


def _on(month: int, day: int, length: int = 1) -> Make:
    def make(year: int) -> Days:
        first = date(year, month, day)
        return first, first + timedelta(days=length)

    return make


def _nth_weekday(month: int, weekday: int, n: int) -> Make:
    """The ``n``-th ``weekday`` (0 Monday) of ``month``; ``n`` -1: the last."""

    def make(year: int) -> Days:
        if n > 0:
            first = date(year, month, 1)
            d = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
        else:
            after = date(year + (month == 12), month % 12 + 1, 1)
            last = after - timedelta(days=1)
            d = last - timedelta(days=(last.weekday() - weekday) % 7)
        return periods.day(d)

    return make


def _easter(offset: int = 0) -> Make:
    def make(year: int) -> Days:
        from dateutil.easter import easter

        return periods.day(easter(year) + timedelta(days=offset))

    return make


#: the festivals of the Chinese calendar, as China's public calendar names them in English
_LUNAR_NAMES: Final = {
    "spring": "Spring Festival",
    "dragon boat": "Dragon Boat Festival",
    "mid-autumn": "Mid-Autumn Festival",
    "qingming": "Tomb-Sweeping Day",
}


@lru_cache(maxsize=128)
def _lunar_days(year: int) -> dict[str, date]:
    """The first day of each festival of :data:`_LUNAR_NAMES` in ``year`` (those the calendar
    holds: none for a year outside it)."""
    import holidays

    try:
        named = holidays.country_holidays("CN", years=year, language="en_US")
    except (NotImplementedError, KeyError, ValueError, OverflowError):
        return {}
    found: dict[str, date] = {}
    for day, name in sorted(named.items()):
        for key, words in _LUNAR_NAMES.items():
            if words in name and "observed" not in name.casefold() and key not in found:
                found[key] = day
    return found


def _lunar(key: str, offset: int = 0, length: int = 1) -> Make:
    def make(year: int) -> Days:
        first = _lunar_days(year).get(key)
        if first is None:
            raise ValueError(f"the Chinese calendar held here has no {key} in {year}")
        start = first + timedelta(days=offset)
        return start, start + timedelta(days=length)

    return make


@dataclass(frozen=True, slots=True)
class Festival:
    """One holiday: the words that name it (English, Chinese) and its occurrence in a year."""

    english: str
    chinese: str
    make: Make
    grain: Grain


FESTIVALS: Final = (
    Festival(r"christmas\s+eve", r"平安夜", _on(12, 24), "day"),
    Festival(r"christmas(?:\s+day)?|x-?mas", r"圣诞节?|聖誕節?", _on(12, 25), "day"),
    Festival(r"boxing\s+day", "", _on(12, 26), "day"),
    Festival(r"new\s+year'?s\s+eve|nye", r"跨年夜?", _on(12, 31), "day"),
    Festival(r"new\s+year'?s(?:\s+day)?", r"元旦", _on(1, 1), "day"),
    Festival(r"valentine'?s(?:\s+day)?", r"情人节|情人節", _on(2, 14), "day"),
    Festival(r"halloween", r"万圣节|萬聖節", _on(10, 31), "day"),
    Festival(r"(?:the\s+)?fourth\s+of\s+july|july\s+4th", "", _on(7, 4), "day"),
    Festival(r"canada\s+day", "", _on(7, 1), "day"),
    Festival(r"may\s+day", "", _on(5, 1), "day"),
    Festival(r"easter(?:\s+sunday)?", r"复活节|復活節", _easter(), "day"),
    Festival(r"good\s+friday", "", _easter(-2), "day"),
    Festival(r"easter\s+monday", "", _easter(1), "day"),
    Festival(r"easter\s+(?:weekend|break)", "", _easter(-2), "range"),
    Festival(r"(?:us\s+)?thanksgiving", r"感恩节|感恩節", _nth_weekday(11, 3, 4), "day"),
    Festival(r"mother'?s\s+day", r"母亲节|母親節", _nth_weekday(5, 6, 2), "day"),
    Festival(r"father'?s\s+day", r"父亲节|父親節", _nth_weekday(6, 6, 3), "day"),
    Festival(r"memorial\s+day", "", _nth_weekday(5, 0, -1), "day"),
    Festival(
        r"(?:lunar|chinese)\s+new\s+year|cny|spring\s+festival",
        r"春节|春節|过年|過年|农历新年|農曆新年|大年初一",
        _lunar("spring"),
        "day",
    ),
    Festival(
        r"(?:lunar|chinese)\s+new\s+year'?s\s+eve", r"除夕|大年三十", _lunar("spring", -1), "day"
    ),
    Festival(r"lantern\s+festival", r"元宵节?|元宵節", _lunar("spring", 14), "day"),
    Festival(
        r"qingming(?:\s+festival)?|tomb[-\s]sweeping\s+day",
        r"清明节?|清明節",
        _lunar("qingming"),
        "day",
    ),
    Festival(r"dragon\s+boat\s+festival", r"端午节?|端午節", _lunar("dragon boat"), "day"),
    Festival(
        r"mid-?autumn(?:\s+festival)?|moon\s+festival",
        r"中秋节?|中秋節",
        _lunar("mid-autumn"),
        "day",
    ),
    Festival(r"", r"国庆节?|國慶節?", _on(10, 1), "day"),
    Festival(r"", r"五一|劳动节|勞動節", _on(5, 1), "day"),
)

#: what follows a holiday's name when it names a thing, not a time ("Christmas tree")
_A_THING: Final = (
    r"(?!\s+(?:tree|trees|lights|card|cards|present|presents|gift|gifts|movie|movies|song|songs|"
    r"music|jumper|jumpers|sweater|sweaters|decorations|market|markets|cake|cookies|dinner\s+"
    r"recipe|egg|eggs|bunny|island|carol|carols)\b)"
)
_EN_L: Final = r"(?<![A-Za-z0-9'])"
_YEARS_NAMED: Final = "|".join(sorted(YEAR_OFFSET, key=len, reverse=True))
_EN_R: Final = r"(?![A-Za-z0-9])"


def _resolve(festival: Festival) -> Callable[[re.Match[str], Context], Found | None]:
    def handle(m: re.Match[str], ctx: Context) -> Found | None:
        today = ctx.today
        year, rel = m.groupdict().get("y"), m.groupdict().get("w")
        named = int(year) if year else today.year + YEAR_OFFSET[rel] if rel else None
        if named is not None:  # "Christmas 2025", "去年春节": that year's
            try:
                days = festival.make(named)
            except (ValueError, OverflowError):
                return None
            return fixed(days, festival.grain, relative=not year)
        options = years_around(today, festival.make, before=2)
        mod = (m.groupdict().get("mod") or "").casefold()
        if mod:
            if mod == "this":
                same = [d for d in options if d[0].year == today.year]
                chosen = same[0] if same else None
            else:
                chosen = periods.pick(
                    sorted(options), today, "past" if mod == "last" else "future", strict=True
                )
            return None if chosen is None else fixed(chosen, festival.grain)
        return ctx.bare(m, options, festival.grain)

    return handle


def _rules() -> tuple[Rule, ...]:
    rules: list[Rule] = []
    for festival in FESTIVALS:
        if festival.english:
            pattern = re.compile(
                rf"{_EN_L}(?:(?P<mod>last|this|next)\s+)?(?P<h>{festival.english}){_EN_R}"
                rf"{_A_THING}(?:,?\s+(?P<y>[12][0-9]{{3}}){_EN_R})?",
                re.IGNORECASE,
            )
            rules.append(Rule(pattern, _resolve(festival)))
        if festival.chinese:
            pattern = re.compile(
                rf"(?:(?P<y>[12][0-9]{{3}})年|(?P<w>{_YEARS_NAMED}))?"
                rf"(?<![〇零○一二两三四五六七八九十\d])(?P<h>{festival.chinese})"
                r"(?![〇零○一二两三四五六七八九十\d])(?!好|快乐|快樂)"
            )
            rules.append(Rule(pattern, _resolve(festival)))
    return tuple(rules)


RULES: Final = _rules()
