"""The English grammar of time expressions: one compiled pattern and one resolver per form.

Words are matched without regard to case, between letters and digits that are not part of
them (so "我们next month去" is read, while "Mayday" is not). See :mod:`memstrata.timeref` for
what each form resolves to.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Final

from memstrata.timeref import periods
from memstrata.timeref.grammar import (
    Context,
    Found,
    Grain,
    Rule,
    fixed,
    months_around,
    span,
    weekday_candidates,
    years_around,
)
from memstrata.timeref.periods import Days
from memstrata.timeref.tables import (
    FULL_MONTH_PATTERN,
    MONTH_PATTERN,
    MONTHS,
    NUMBER_PATTERN,
    ORDINAL,
    SEASONS,
    UNIT_PATTERN,
    UNITS,
    WEEKDAY_ABBREVIATIONS,
    WEEKDAY_PATTERN,
    WEEKDAYS,
    english_number,
)
from memstrata.timeref.tense import direct_future

L: Final = r"(?<![A-Za-z0-9])"
R: Final = r"(?![A-Za-z0-9])"
_DAYPART: Final = r"(?:\s+(?:morning|afternoon|evening|night|noon|lunchtime))?"
_SEASON: Final = "|".join(SEASONS)
_DAY: Final = rf"(?:[12][0-9]|3[01]|0?[1-9]){ORDINAL}"
_YEAR: Final = r"(?:[12][0-9]{3})"
_MOD: Final = {"last": -1, "this": 0, "next": 1}
_WEEKDAY_ANY: Final = "|".join(sorted((*WEEKDAYS, *WEEKDAY_ABBREVIATIONS), key=len, reverse=True))
_ON_WEEKDAY: Final = rf"(?:(?P<wd>{_WEEKDAY_ANY})\.?,?\s+)?"
"""A weekday before a date ("Saturday, May 16", "Sat, May 16"): it tells the year."""


def _compile(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _num(word: str) -> int:
    value = english_number(word)
    if value is None:  # the pattern admits only counts english_number reads
        raise ValueError(word)
    return value


def _unit(word: str) -> str:
    w = word.lower()
    return UNITS.get(w, UNITS.get(w[:-1], w))


def _day_number(text: str) -> int:
    return int(text.rstrip("stndrhSTNDRH"))


def _month(word: str) -> int:
    return MONTHS[word.lower().rstrip(".")]


# --- days ---------------------------------------------------------------------------------

_REL_DAYS: Final = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}


def _relative_day(m: re.Match[str], ctx: Context) -> Found:
    return fixed(periods.day(ctx.today + timedelta(days=_REL_DAYS[m["w"].lower()])), "day")


def _day_before_after(m: re.Match[str], ctx: Context) -> Found:
    offset = -2 if m["w"].lower() == "before yesterday" else 2
    return fixed(periods.day(ctx.today + timedelta(days=offset)), "day")


def _this_part(m: re.Match[str], ctx: Context) -> Found:
    offset = -1 if m["mod"].lower() == "last" else 0
    return fixed(periods.day(ctx.today + timedelta(days=offset)), "day")


# --- weekdays, weeks, weekends ------------------------------------------------------------


def _weekday_mod(m: re.Match[str], ctx: Context) -> Found | None:
    wd = WEEKDAYS[m["wd"].lower()]
    mod = " ".join(m["mod"].lower().split())
    if mod == "next":
        start = periods.week(ctx.today + timedelta(days=7))[0] + timedelta(days=wd)
        return Found(periods.day(start), "day", True, weekdays=(wd, wd))
    options = weekday_candidates(ctx.today, wd)
    if mod in ("last", "this past", "past"):
        chosen = periods.pick(options, ctx.today, "past", strict=True)
    elif mod == "this" and ctx.tense_at(*span(m)) == "past":
        chosen = periods.pick(options, ctx.today, "past")
    else:  # "this", "this coming", "coming": today or the next one
        chosen = periods.pick(options, ctx.today, "future")
    return None if chosen is None else Found(chosen, "day", True, weekdays=(wd, wd))


def _weekday(m: re.Match[str], ctx: Context) -> Found | None:
    wd = WEEKDAYS[m["wd"].lower()]
    return ctx.bare(m, weekday_candidates(ctx.today, wd), "day", strict=True, weekday=wd)


def _weekday_far(m: re.Match[str], ctx: Context) -> Found:
    wd = WEEKDAYS[m["wd"].lower()]
    weeks = 2 if m["w"].lower().startswith("after") else -2
    start = periods.week(ctx.today)[0] + timedelta(weeks=weeks, days=wd)
    return Found(periods.day(start), "day", True, weekdays=(wd, wd))


def _week_mod(m: re.Match[str], ctx: Context) -> Found:
    words = " ".join(m["w"].lower().split())
    offset = {"last": -7, "this": 0, "next": 7, "before last": -14, "after next": 14}[words]
    return fixed(periods.week(ctx.today + timedelta(days=offset)), "week")


def _weekend_mod(m: re.Match[str], ctx: Context) -> Found:
    mod = " ".join(m["mod"].lower().split())
    offset = {"last": -7, "this past": -7, "past": -7, "this": 0, "next": 7}.get(mod, 0)
    if mod in ("this coming", "coming"):
        offset = 7 if ctx.today.weekday() == 6 else 0
    return fixed(periods.weekend(ctx.today + timedelta(days=offset)), "weekend")


def _weekend(m: re.Match[str], ctx: Context) -> Found | None:
    options = [periods.weekend(ctx.today + timedelta(days=7 * k)) for k in (-2, -1, 0, 1, 2)]
    return ctx.bare(m, options, "weekend")


# --- months, years, seasons ---------------------------------------------------------------


def _month_mod(m: re.Match[str], ctx: Context) -> Found:
    words = " ".join(m["w"].lower().split())
    offset = {"last": -1, "this": 0, "next": 1, "before last": -2, "after next": 2}[words]
    return fixed(
        periods.month(*periods.add_months(ctx.today.year, ctx.today.month, offset)), "month"
    )


def _year_mod(m: re.Match[str], ctx: Context) -> Found:
    words = " ".join(m["w"].lower().split())
    offset = {"last": -1, "this": 0, "next": 1, "before last": -2, "after next": 2}[words]
    return fixed(periods.year(ctx.today.year + offset), "year")


def _named_month_mod(m: re.Match[str], ctx: Context) -> Found:
    month, mod, today = _month(m["mon"]), m["mod"].lower(), ctx.today
    if mod == "this":
        y = today.year
    elif mod == "last":
        y = today.year if month < today.month else today.year - 1
    else:
        y = today.year if month > today.month else today.year + 1
    return fixed(periods.month(y, month), "month")


def _month_of_year_mod(m: re.Match[str], ctx: Context) -> Found:
    return fixed(periods.month(ctx.today.year + _MOD[m["mod"].lower()], _month(m["mon"])), "month")


def _bare_month(m: re.Match[str], ctx: Context) -> Found | None:
    word, prep = m["m"].lower(), m["prep"].lower()
    loose = prep in ("and", "or", "to", "about", "for", "over", "around")
    if (
        word in ("may", "march")
        and loose
        and not (prep == "to" and direct_future(ctx.text, m.start("m")))
    ):
        return None  # "Lily and May", "we want to march": not the month (but "postponed to May")
    month = _month(m["m"])
    return ctx.bare(m, years_around(ctx.today, lambda y: periods.month(y, month)), "month")


def _season_mod(m: re.Match[str], ctx: Context) -> Found | None:
    name = "autumn" if m["s"].lower() == "fall" else m["s"].lower()
    mod = " ".join(m["mod"].lower().split())
    options = years_around(ctx.today, lambda y: periods.season(y, name), before=2)
    this = periods.season(periods.season_year(ctx.today, name), name)
    if mod in ("last", "this past", "past"):
        chosen = periods.pick(options, ctx.today, "past", strict=True)
        return None if chosen is None else fixed(chosen, "season")
    if mod == "next":
        return fixed(periods.season(this[0].year + 1, name), "season")
    return fixed(this, "season")


def _season_of_year_mod(m: re.Match[str], ctx: Context) -> Found:
    name = "autumn" if m["s"].lower() == "fall" else m["s"].lower()
    return fixed(periods.season(ctx.today.year + _MOD[m["mod"].lower()], name), "season")


def _bare_season(m: re.Match[str], ctx: Context) -> Found | None:
    name = "autumn" if m["s"].lower() == "fall" else m["s"].lower()
    options = years_around(ctx.today, lambda y: periods.season(y, name), before=2)
    return ctx.bare(m, options, "season", need_tense=True)


# --- days of a month, absolute dates ------------------------------------------------------


def _on_weekday(m: re.Match[str], options: list[Days]) -> list[Days]:
    """The occurrences that fall on the weekday the date is given with, if any does."""
    word = (m.groupdict().get("wd") or "").lower()
    if not word:
        return options
    wd = WEEKDAYS.get(word, WEEKDAY_ABBREVIATIONS.get(word))
    return [o for o in options if o[0].weekday() == wd] or options


def _month_day(m: re.Match[str], ctx: Context) -> Found | None:
    month, dom = _month(m["mon"]), _day_number(m["d"])
    options = years_around(ctx.today, lambda y: periods.day(date(y, month, dom)))
    return ctx.bare(m, _on_weekday(m, options), "day")


def _day_of_month(m: re.Match[str], ctx: Context) -> Found | None:
    dom = _day_number(m["d"])
    options = months_around(ctx.today, lambda y, mo: periods.day(date(y, mo, dom)))
    return ctx.bare(m, _on_weekday(m, options), "day")


def _week_of_month(m: re.Match[str], ctx: Context) -> Found | None:
    month = _month(m["mon"])
    nth = {"first": 0, "second": 1, "third": 2, "fourth": 3, "last": -1}[m["nth"].lower()]

    def make(y: int) -> Days:
        start, end = periods.month(y, month)
        if nth < 0:
            return end - timedelta(days=7), end
        return start + timedelta(days=7 * nth), start + timedelta(days=7 * nth + 7)

    if m["y"]:
        return fixed(make(int(m["y"])), "part", False)
    return ctx.bare(m, years_around(ctx.today, make), "part")


def _date(m: re.Match[str], ctx: Context) -> Found:
    month = int(m["mon"]) if m["mon"].isdigit() else _month(m["mon"])
    return fixed(periods.day(date(int(m["y"]), month, _day_number(m["d"]))), "day", False)


def _month_year(m: re.Match[str], ctx: Context) -> Found:
    return fixed(periods.month(int(m["y"]), _month(m["mon"])), "month", False)


def _season_year(m: re.Match[str], ctx: Context) -> Found:
    name = "autumn" if m["s"].lower() == "fall" else m["s"].lower()
    return fixed(periods.season(int(m["y"]), name), "season", False)


def _years_between(m: re.Match[str], ctx: Context) -> Found | None:
    first, last = int(m["y"]), int(m["y2"])
    return (
        fixed((date(first, 1, 1), date(last + 1, 1, 1)), "range", False) if first < last else None
    )


def _year(m: re.Match[str], ctx: Context) -> Found:
    return fixed(periods.year(int(m["m"])), "year", False)


_DECADE_WORDS: Final = {
    w: 10 * i
    for i, w in enumerate(
        (
            "twenties",
            "thirties",
            "forties",
            "fifties",
            "sixties",
            "seventies",
            "eighties",
            "nineties",
        ),
        start=2,
    )
}


def _decade(m: re.Match[str], ctx: Context) -> Found:
    if m["full"]:
        first, relative = int(m["full"]), False
        if first % 100 == 0 and first < 2000:  # the 1900s: the century
            return fixed((date(first, 1, 1), date(first + 100, 1, 1)), "decade", False)
    else:
        tens = _DECADE_WORDS[m["w"].lower()] if m["w"] else int(m["d"] or m["d2"]) * 10
        first = ctx.today.year - ctx.today.year % 100 + tens
        if first > ctx.today.year:
            first -= 100
        relative = True
    return fixed(periods.decade(first), "decade", relative)


# --- parts of a month or a year -----------------------------------------------------------

_MONTH_PART: Final = {
    "early": "early",
    "beginning": "early",
    "start": "early",
    "mid": "mid",
    "middle": "mid",
    "late": "late",
    "end": "late",
}
_YEAR_PART: Final = {
    "early": "early",
    "mid": "mid",
    "middle": "mid",
    "late": "late",
    "beginning": "start",
    "start": "start",
    "end": "end",
}


def _part(m: re.Match[str], ctx: Context) -> Found | None:
    part, today = (m["part"] or m["part2"]).lower(), ctx.today
    mp, yp = _MONTH_PART[part], _YEAR_PART[part]
    if m["mon"]:
        month = _month(m["mon"])
        if m["y"]:
            return fixed(periods.month_part(int(m["y"]), month, mp), "part", False)
        options = years_around(today, lambda y: periods.month_part(y, month, mp))
        return ctx.bare(m, options, "part")
    if m["y2"]:
        return fixed(periods.year_part(int(m["y2"]), yp), "part", False)
    mod = (m["mod"] or "").lower()
    if m["unit"].lower() == "month":
        if mod:
            y, mo = periods.add_months(today.year, today.month, _MOD[mod])
            return fixed(periods.month_part(y, mo, mp), "part")
        current = periods.month_part(today.year, today.month, mp)
        options = months_around(today, lambda y, mo: periods.month_part(y, mo, mp))
        return ctx.bare(m, options, "part", default=current)
    if mod:
        return fixed(periods.year_part(today.year + _MOD[mod], yp), "part")
    current = periods.year_part(today.year, yp)
    options = years_around(today, lambda y: periods.year_part(y, yp))
    return ctx.bare(m, options, "part", default=current)


# --- ranges of days -----------------------------------------------------------------------


def _day_range(m: re.Match[str], ctx: Context) -> Found | None:
    if m["sep"].lower() == "and" and not m["between"]:
        return None  # "May 3 and 10" are two days
    month = _month(m["mon"])
    first, last = _day_number(m["d1"]), _day_number(m["d2"])
    if last <= first:
        return None

    def make(y: int) -> Days:
        return date(y, month, first), date(y, month, last) + timedelta(days=1)

    if m["y"]:
        return fixed(make(int(m["y"])), "range", False)
    return ctx.bare(m, years_around(ctx.today, make), "range")


# --- counts of units: ago, in, for, the past ----------------------------------------------


def _moved(ctx: Context, unit: str, count: int) -> date:
    if unit in ("hour", "minute"):
        delta = timedelta(hours=count) if unit == "hour" else timedelta(minutes=count)
        return (ctx.said_at + delta).date()
    return periods.shift_day(ctx.today, unit, count)


def _count(m: re.Match[str]) -> tuple[int, str]:
    unit = _unit(m["unit"])
    if m["half"]:
        if unit == "year":
            return 6, "month"
        if unit == "month":
            return 2, "week"
        return 0, unit
    return _num(m["n"]), unit


_UNIT_GRAIN: Final[dict[str, Grain]] = {
    "minute": "day",
    "hour": "day",
    "day": "day",
    "week": "week",
    "weekend": "weekend",
    "fortnight": "week",
    "month": "month",
    "year": "year",
    "decade": "decade",
}


def _ago(m: re.Match[str], ctx: Context) -> Found:
    count, unit = _count(m)
    return fixed(periods.unit_interval(_moved(ctx, unit, -count), unit), _UNIT_GRAIN[unit])


def _later(m: re.Match[str], ctx: Context) -> Found | None:
    if not m.groupdict().get("after") and ctx.tense_at(*span(m)) == "past":
        return None  # "we finished it in two days": how long, not when
    count, unit = _count(m)
    return fixed(periods.unit_interval(_moved(ctx, unit, count), unit), _UNIT_GRAIN[unit])


def _past_units(m: re.Match[str], ctx: Context) -> Found | None:
    if not m["n"] and not m["the"]:
        return None  # "last year" is the calendar year; "the last year" the twelve months
    count, unit = (_num(m["n"]), _unit(m["unit"])) if m["n"] else (1, _unit(m["unit"]))
    return fixed((_moved(ctx, unit, -count), ctx.today + timedelta(days=1)), "duration")


_PERFECT: Final = re.compile(
    r"(?:(?<![A-Za-z])(?:have|has)|['’]ve)(?:\s+(?:not|never|always|already|just|only))?\s+"
    r"(?:been|\w+ed|known|had|done|gone|seen|met|got|gotten|made|taught|kept|felt|spent|built|"
    r"run|sat|stood|held|slept|grown|driven|ridden|written|spoken|eaten|taken|given)(?![A-Za-z])"
    r"|['’]s\s+been(?![A-Za-z])",
    re.IGNORECASE,
)


def _for_units(m: re.Match[str], ctx: Context) -> Found | None:
    a, b = ctx.reader.clause(*span(m))
    if not m["now"] and not _PERFECT.search(ctx.text, a, b):
        return None  # "I ran for two hours": how long, not since when
    count, unit = _num(m["n"]), _unit(m["unit"])
    return fixed((_moved(ctx, unit, -count), ctx.today + timedelta(days=1)), "duration")


RULES: Final = (
    Rule(
        _compile(rf"{L}the\s+day\s+(?P<w>before\s+yesterday|after\s+tomorrow){R}"),
        _day_before_after,
    ),
    Rule(_compile(rf"{L}(?P<w>yesterday|today|tonight|tomorrow){_DAYPART}{R}"), _relative_day),
    Rule(_compile(rf"{L}(?P<mod>this|last)\s+(?:morning|afternoon|evening|night){R}"), _this_part),
    Rule(
        _compile(
            rf"{L}(?P<mod>this\s+coming|this\s+past|coming|past|last|this|next)\s+"
            rf"(?P<wd>{WEEKDAY_PATTERN}){_DAYPART}{R}"
        ),
        _weekday_mod,
    ),
    Rule(
        _compile(
            rf"{L}(?<!\ba\s)(?P<wd>{WEEKDAY_PATTERN}){_DAYPART}{R}(?!(?:'s)?\s+(?:paper|papers|school|"
            rf"times|roast|service|edition|newspaper|league){R})"
        ),
        _weekday,
    ),
    Rule(
        _compile(
            rf"{L}(?P<wd>{WEEKDAY_PATTERN}),?\s+the\s+(?P<d>(?:[12][0-9]|3[01]|[1-9])"
            rf"(?:st|nd|rd|th)){R}"
        ),
        _day_of_month,
    ),
    Rule(
        _compile(
            rf"{L}the\s+(?P<nth>first|second|third|fourth|last)\s+week\s+of\s+"
            rf"(?P<mon>{FULL_MONTH_PATTERN})(?:,?\s+(?P<y>{_YEAR}))?{R}"
        ),
        _week_of_month,
    ),
    Rule(
        _compile(
            rf"{L}(?:the\s+)?(?P<wd>{WEEKDAY_PATTERN})\s+(?P<w>after\s+next|before\s+last){R}"
        ),
        _weekday_far,
    ),
    Rule(_compile(rf"{L}(?P<w>last|this|next){R}\s+week{R}"), _week_mod),
    Rule(_compile(rf"{L}the\s+week\s+(?P<w>before\s+last|after\s+next){R}"), _week_mod),
    Rule(
        _compile(rf"{L}(?P<mod>this\s+coming|this\s+past|coming|past|last|this|next)\s+weekend{R}"),
        _weekend_mod,
    ),
    Rule(
        _compile(
            rf"{L}(?<!\ba\s)(?P<m>(?:the\s+)?weekend){R}(?!\s+(?:class|classes|course|courses|trip|trips|"
            rf"job|jobs|shift|shifts|market|markets|getaway|warrior|workshop|edition|hours|"
            rf"brunch|plans?|visitors?|school|league){R})"
        ),
        _weekend,
    ),
    Rule(_compile(rf"{L}between\s+(?P<y>{_YEAR})\s+and\s+(?P<y2>{_YEAR}){R}"), _years_between),
    Rule(_compile(rf"{L}(?P<w>last|this|next)\s+month{R}"), _month_mod),
    Rule(_compile(rf"{L}the\s+month\s+(?P<w>before\s+last|after\s+next){R}"), _month_mod),
    Rule(_compile(rf"{L}(?P<w>last|this|next)\s+year{R}"), _year_mod),
    Rule(_compile(rf"{L}the\s+year\s+(?P<w>before\s+last|after\s+next){R}"), _year_mod),
    Rule(
        _compile(rf"{L}(?P<mod>last|this|next)\s+(?P<mon>{FULL_MONTH_PATTERN}){R}"),
        _named_month_mod,
    ),
    Rule(
        _compile(
            rf"{L}(?P<mon>{FULL_MONTH_PATTERN})(?:\s+of)?\s+(?P<mod>last|this|next)\s+year{R}"
        ),
        _month_of_year_mod,
    ),
    Rule(
        _compile(
            rf"{L}(?P<prep>in|during|since|by|until|till|from|through|throughout|around|about|of|"
            rf"for|over|to|and|or)\s+(?P<m>{FULL_MONTH_PATTERN}){R}"
        ),
        _bare_month,
    ),
    Rule(
        _compile(
            rf"{L}(?P<mod>this\s+past|this\s+coming|last|this|next|past)\s+(?P<s>{_SEASON}){R}"
        ),
        _season_mod,
    ),
    Rule(
        _compile(rf"{L}(?P<s>{_SEASON})(?:\s+of)?\s+(?P<mod>last|this|next)\s+year{R}"),
        _season_of_year_mod,
    ),
    Rule(
        _compile(
            rf"{L}(?:in|during|over|through|throughout|since|until)\s+"
            rf"(?P<m>(?:the\s+)?(?P<s>{_SEASON})){R}(?!\s+(?:of\s+)?\d)(?!['’]s{R})"
        ),
        _bare_season,
    ),
    Rule(
        _compile(
            rf"{L}{_ON_WEEKDAY}(?P<mon>{MONTH_PATTERN})\.?\s+(?:the\s+)?"
            rf"(?P<d>{_DAY}){R}(?![:.]\d)"
        ),
        _month_day,
    ),
    Rule(
        _compile(
            rf"{L}{_ON_WEEKDAY}(?:the\s+)?(?P<d>{_DAY})\s+(?:of\s+)?"
            rf"(?P<mon>{MONTH_PATTERN}){R}"
        ),
        _month_day,
    ),
    Rule(
        _compile(
            rf"{L}(?:on|by|until|till|before|after|from|since)\s+(?P<m>the\s+"
            rf"(?P<d>(?:[12][0-9]|3[01]|[1-9])(?:st|nd|rd|th))){R}"
            rf"(?=\s*(?:[,.;!?)]|$)|\s+(?:at|and|or|to|when|so|but|because|for|as)\b)"
        ),
        _day_of_month,
    ),
    Rule(
        _compile(
            rf"{L}(?:(?:{_WEEKDAY_ANY})\.?,?\s+)?(?:the\s+)?(?P<d>{_DAY})\s+(?:of\s+)?"
            rf"(?P<mon>{MONTH_PATTERN})\.?,?\s*(?P<y>{_YEAR}){R}"
        ),
        _date,
    ),
    Rule(
        _compile(
            rf"{L}(?:(?:{_WEEKDAY_ANY})\.?,?\s+)?(?P<mon>{MONTH_PATTERN})\.?\s+(?:the\s+)?"
            rf"(?P<d>{_DAY}),?\s*(?P<y>{_YEAR}){R}"
        ),
        _date,
    ),
    Rule(
        _compile(
            rf"{L}(?P<y>{_YEAR})[-/.](?P<mon>1[0-2]|0?[1-9])[-/.](?P<d>3[01]|[12][0-9]|0?[1-9]){R}"
        ),
        _date,
    ),
    Rule(_compile(rf"{L}(?P<mon>{MONTH_PATTERN})\.?,?\s+(?:of\s+)?(?P<y>{_YEAR}){R}"), _month_year),
    Rule(_compile(rf"{L}(?:the\s+)?(?P<s>{_SEASON})\s+(?:of\s+)?(?P<y>{_YEAR}){R}"), _season_year),
    Rule(
        _compile(
            rf"{L}(?:in|during|of|since|by|until|till|from|through|around|circa|to)\s+"
            rf"(?:the\s+year\s+)?(?P<m>{_YEAR}){R}(?![:.,]\d)"
        ),
        _year,
    ),
    Rule(
        _compile(
            rf"{L}(?:the\s+(?:'(?P<d2>\d)0s|(?P<d>\d)0s|(?P<w>twenties|thirties|forties|fifties|"
            rf"sixties|seventies|eighties|nineties))|(?:the\s+)?(?P<full>1[0-9]\d0|20\d0)s){R}"
        ),
        _decade,
    ),
    Rule(
        _compile(
            rf"{L}(?:(?P<part>early|mid|late)[- ]?|(?:the\s+)?(?P<part2>beginning|start|middle|end)"
            rf"\s+of\s+(?:the\s+)?)(?:(?P<mon>{FULL_MONTH_PATTERN})(?:,?\s+(?P<y>{_YEAR}))?"
            rf"|(?P<y2>{_YEAR})|(?:(?P<mod>last|this|next)\s+)?(?P<unit>month|year)){R}"
        ),
        _part,
    ),
    Rule(
        _compile(
            rf"{L}(?:(?P<between>between)\s+|from\s+)?(?P<mon>{MONTH_PATTERN})\.?\s+(?P<d1>{_DAY})"
            rf"\s*(?P<sep>-|–|—|to|through|thru|until|till|and)\s*(?P<d2>{_DAY}){R}"
            rf"(?:,?\s*(?P<y>{_YEAR}){R})?"
        ),
        _day_range,
    ),
    Rule(
        _compile(
            rf"{L}(?:(?P<n>{NUMBER_PATTERN})|(?P<half>half\s+an?))\s+(?P<unit>{UNIT_PATTERN})\s+"
            rf"ago{R}"
        ),
        _ago,
    ),
    Rule(
        _compile(
            rf"{L}in\s+(?:(?P<n>{NUMBER_PATTERN})|(?P<half>half\s+an?))\s+(?P<unit>{UNIT_PATTERN})"
            rf"{R}(?:'s?\s+time{R})?"
        ),
        _later,
    ),
    Rule(
        _compile(
            rf"{L}(?:(?P<n>{NUMBER_PATTERN})|(?P<half>half\s+an?))\s+(?P<unit>{UNIT_PATTERN})\s+"
            rf"(?P<after>from\s+(?:now|today)){R}"
        ),
        _later,
    ),
    Rule(
        _compile(
            rf"{L}(?P<the>the\s+)?(?:past|last)\s+(?:(?P<n>{NUMBER_PATTERN})\s+)?"
            rf"(?P<unit>{UNIT_PATTERN}){R}"
        ),
        _past_units,
    ),
    Rule(
        _compile(
            rf"{L}(?P<m>for\s+(?P<n>{NUMBER_PATTERN})\s+(?P<unit>{UNIT_PATTERN})){R}"
            rf"(?P<now>\s+now{R})?"
        ),
        _for_units,
    ),
)
