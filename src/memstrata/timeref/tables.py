"""The words of time, English and Chinese: months, weekdays, seasons, units and numbers.

Plain tables and the regular-expression fragments built from them, shared by the grammar of
:mod:`memstrata.timeref` and by :mod:`memstrata.index.dates`. Nothing here depends on the
locale (``calendar.month_name`` would).
"""

from __future__ import annotations

from typing import Final

MONTH_NAMES: Final = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)

MONTHS: Final[dict[str, int]] = {
    **{name: i for i, name in enumerate(MONTH_NAMES, 1)},
    **{name[:3]: i for i, name in enumerate(MONTH_NAMES, 1)},
    "sept": 9,
}
"""English month names and their three-letter abbreviations (and "sept"), lower case."""

MONTH_PATTERN: Final = "|".join(sorted(MONTHS, key=len, reverse=True))
"""Any key of :data:`MONTHS`, longest first (a fragment for a regular expression)."""

FULL_MONTH_PATTERN: Final = "|".join(sorted((*MONTH_NAMES, "sept"), key=len, reverse=True))
"""Month names that stand alone as words ("in March"); abbreviations only next to a number."""

ORDINAL: Final = r"(?:st|nd|rd|th)?"
"""The suffix of an English ordinal day ("3rd"), optional."""

SEASONS: Final[dict[str, tuple[int, int]]] = {
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "winter": (12, 2),
}
"""Northern-hemisphere seasons as (first month, last month); winter runs into the next year."""

ZH_SEASONS: Final[dict[str, str]] = {"春": "spring", "夏": "summer", "秋": "autumn", "冬": "winter"}

WEEKDAYS: Final[dict[str, int]] = {
    name: i
    for i, name in enumerate(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    )
}
"""English weekday names, Monday = 0 (``date.weekday``)."""

WEEKDAY_PATTERN: Final = "|".join(WEEKDAYS)

WEEKDAY_ABBREVIATIONS: Final[dict[str, int]] = {
    "mon": 0,
    "tue": 1,
    "tues": 1,
    "wed": 2,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "fri": 4,
    "sat": 5,
    "sun": 6,
}
"""Weekday abbreviations, read only before a date ("Sat, May 16")."""

ZH_WEEKDAYS: Final[dict[str, int]] = {
    "一": 0,
    "二": 1,
    "三": 2,
    "四": 3,
    "五": 4,
    "六": 5,
    "日": 6,
    "天": 6,
    "1": 0,
    "2": 1,
    "3": 2,
    "4": 3,
    "5": 4,
    "6": 5,
    "7": 6,
}
"""The day after 周/星期/礼拜: 周一 is Monday, 周日 and 周天 Sunday."""

NUMBER_WORDS: Final[dict[str, int]] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
"""English cardinals to ninety; "twenty-one" and "twenty one" are read as a sum."""

_TENS: Final = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_UNITS: Final = "one|two|three|four|five|six|seven|eight|nine"
NUMBER_PATTERN: Final = (
    rf"(?:\d{{1,4}}|(?:{_TENS})(?:[- ](?:{_UNITS}))?|"
    + "|".join(
        sorted((w for w in NUMBER_WORDS if w not in _TENS.split("|")), key=len, reverse=True)
    )
    + ")"
)
"""A count in digits or words ("3", "three", "twenty-one", "a")."""

UNITS: Final[dict[str, str]] = {
    "second": "minute",
    "sec": "minute",
    "minute": "minute",
    "min": "minute",
    "hour": "hour",
    "hr": "hour",
    "day": "day",
    "week": "week",
    "wk": "week",
    "fortnight": "fortnight",
    "month": "month",
    "year": "year",
    "yr": "year",
    "decade": "decade",
    "weekend": "weekend",
}
"""English units of time (singular; a plural adds "s")."""

UNIT_PATTERN: Final = (
    r"(?:second|sec|minute|min|hour|hr|day|weekend|week|wk|fortnight|month|year|yr|decade)s?"
    r"(?!\s+and\s+a\s+half)"
)
"""An English unit of time, singular or plural (not "a year and a half": no count reads it)."""

ZH_UNITS: Final[dict[str, str]] = {
    "分钟": "minute",
    "小时": "hour",
    "钟头": "hour",
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "礼拜": "week",
    "个月": "month",
    "年": "year",
}

ZH_DIGITS: Final[dict[str, int]] = {
    "〇": 0,
    "零": 0,
    "○": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
ZH_NUMERAL: Final = "〇零○一二两三四五六七八九十百千"
"""Characters of a Chinese numeral (to ten thousand, exclusive)."""

ZH_NUMBER_PATTERN: Final = rf"(?:\d{{1,4}}|[{ZH_NUMERAL}]{{1,6}})"


def english_number(word: str) -> int | None:
    """A count in digits or English words ("12", "twelve", "twenty-one"), or None."""
    w = word.lower().strip()
    if w.isascii() and w.isdigit():
        return int(w)
    if w in NUMBER_WORDS:
        return NUMBER_WORDS[w]
    parts = w.replace("-", " ").split()
    if len(parts) == 2 and parts[0] in NUMBER_WORDS and parts[1] in NUMBER_WORDS:
        tens, unit = NUMBER_WORDS[parts[0]], NUMBER_WORDS[parts[1]]
        if tens >= 20 and tens % 10 == 0 and 1 <= unit <= 9:
            return tens + unit
    return None


def chinese_number(text: str) -> int | None:
    """A whole number written in ASCII digits or Chinese numerals, or None.

    Positional ("二十三" 23, "一百零五" 105, "两千" 2000) and digit by digit ("二〇二三" 2023,
    as years are written). Full-width digits are turned into ASCII before this is called.
    """
    if not text:
        return None
    if text.isascii():
        return int(text) if text.isdigit() else None
    if any(c not in ZH_DIGITS and c not in "十百千" for c in text):
        return None
    if not any(c in "十百千" for c in text):
        value = 0
        for c in text:
            value = value * 10 + ZH_DIGITS[c]
        return value
    total, digit, seen = 0, None, False
    for c in text:
        if c in ZH_DIGITS:
            if digit is not None and ZH_DIGITS[c] != 0:
                return None  # two digits in a row inside a positional numeral
            digit = ZH_DIGITS[c] or None
            seen = True
        else:
            place = {"十": 10, "百": 100, "千": 1000}[c]
            total += (digit if digit is not None else (1 if not seen or place == 10 else 0)) * place
            if digit is None and seen and place != 10:
                return None
            digit, seen = None, True
    return total + (digit or 0)
