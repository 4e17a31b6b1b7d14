"""Recurring times: "every morning", "on weekends", "usually on Sunday", "每天", "每周五".

A habit names no interval. Two kinds are found:

- explicit: every/each + a time ("every Friday", "every other day", "every day at 9:30"),
  plurals ("on Sundays", "weekends", "in the evenings"), frequency words ("daily", "weekly",
  "twice a week"); 每 + a time ("每天早上6:30", "每周五", "每个月15号"), 天天, 隔天, 每逢周五;
- governed: a bare time (a weekday, the weekend, a part of the day, a season, a clock time) in a
  clause with a habitual adverb ("I usually call my mother on Sunday", "周末一般都去爬山",
  "夏天我们经常去海边"). A time with its own anchor ("last Friday", "上周五") is not governed.
"""

from __future__ import annotations

import bisect
import re
from typing import Final

from memstrata.timeref.tables import FULL_MONTH_PATTERN, NUMBER_PATTERN, WEEKDAY_PATTERN
from memstrata.timeref.tense import Reader

_L: Final = r"(?<![A-Za-z0-9])"
_R: Final = r"(?![A-Za-z0-9])"
_CLOCK_EN: Final = (
    r"(?:\s+(?:at\s+)?(?:\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\d{1,2}:\d{2}|"
    r"\d{1,2}\s+o'clock|noon|midnight))?"
)
_TIME_EN: Final = (
    rf"(?:day|morning|afternoon|evening|night|week|weekend|weekday|month|year|spring|summer|"
    rf"autumn|fall|winter|hour|minute|time|{WEEKDAY_PATTERN}|{FULL_MONTH_PATTERN})"
)
_ZH_NUM: Final = r"[\d〇零一二两三四五六七八九十百]{1,4}"
_CLOCK_ZH: Final = rf"(?:\d{{1,2}}[:：]\d{{2}}|{_ZH_NUM}点(?:半|{_ZH_NUM}分?)?)"
_DAYPART_ZH: Final = r"(?:早上|早晨|上午|中午|下午|傍晚|晚上|夜里|凌晨|白天)"
_TAIL_ZH: Final = (
    rf"(?:{_DAYPART_ZH}|{_ZH_NUM}[号日]|[一二三四五六日天1-7](?:{_DAYPART_ZH})?|"
    rf"[春夏秋冬][天季]|{_ZH_NUM}月{_ZH_NUM}?[号日]?)?{_CLOCK_ZH}?"
)

EXPLICIT: Final = re.compile(
    "|".join(
        (
            rf"{_L}(?:every|each)\s+(?:other\s+|single\s+|(?:{NUMBER_PATTERN})\s+)?{_TIME_EN}s?"
            rf"{_R}{_CLOCK_EN}",
            rf"{_L}(?:once|twice|(?:{NUMBER_PATTERN})\s+times)\s+(?:a|an|per|every)\s+"
            rf"(?:day|week|month|year){_R}",
            rf"{_L}(?:{WEEKDAY_PATTERN})s{_R}",
            rf"{_L}(?:weekends|weekdays|weeknights){_R}",
            rf"(?:(?<=in the )|(?<=on )|(?<=most )|(?<=some )|(?<=all ))"
            rf"(?:mornings|afternoons|evenings|nights){_R}",
            rf"{_L}(?:works?|working)\s+(?:nights|weekends){_R}",
            rf"{_L}(?:daily|weekly|fortnightly|monthly|yearly|annually|nightly|hourly){_R}",
            rf"每(?:逢|隔{_ZH_NUM}?)?(?:个|一)?(?:天|日|晚|早|周末|周|星期|礼拜|月|年|季度|次|小时)"
            rf"{_TAIL_ZH}",
            rf"每逢(?:周|星期|礼拜)[一二三四五六日天]{_TAIL_ZH}",
            r"天天|(?<![一两三])隔(?:天|周|日|月)",
            rf"每(?:个|一)?\s*(?:day|morning|evening|night|week|weekend|month|year|{WEEKDAY_PATTERN})"
            rf"{_R}",
        )
    ),
    re.IGNORECASE,
)

_COUNTED: Final = re.compile(rf"{_L}(?:{NUMBER_PATTERN})\s+$", re.IGNORECASE)
"""A count before a plural ("two weekends ago", "three Sundays"): not a habit."""
_HABITUAL: Final = re.compile(
    r"(?<![A-Za-z])(?:usually|normally|typically|generally|always|often|mostly|regularly|"
    r"tend\s+to|tends\s+to|every\s+time)(?![A-Za-z])|一般|通常|经常|总是|常常|往往|平时|平常|老是|"
    r"向来|一向|习惯",
    re.IGNORECASE,
)
_GOVERNED: Final = re.compile(
    rf"{_L}(?<!last\s)(?<!next\s)(?<!this\s)(?:{WEEKDAY_PATTERN})(?:\s+(?:morning|afternoon|evening|"
    rf"night))?{_R}|{_L}(?<!last\s)(?<!next\s)(?<!this\s)(?:the\s+)?weekend{_R}"
    rf"|(?<=\bin\sthe\s)(?:morning|afternoon|evening){_R}"
    rf"|{_L}\d{{1,2}}(?::\d{{2}})?\s*(?:am|pm){_R}|{_L}\d{{1,2}}:\d{{2}}{_R}"
    rf"|(?<![上这本下每个])(?:周|星期|礼拜)[一二三四五六日天](?:{_DAYPART_ZH})?{_CLOCK_ZH}?"
    rf"|(?<![上这本下每个])周末|(?<![今明昨])(?:{_DAYPART_ZH}){_CLOCK_ZH}?|{_CLOCK_ZH}"
    rf"|(?<![去今明前后这个每年])[春夏秋冬][天季]",
    re.IGNORECASE,
)


def find(text: str, reader: Reader | None = None) -> list[tuple[int, int]]:
    """The spans of the recurring times in ``text``, in order."""
    explicit = [
        m.span()
        for m in EXPLICIT.finditer(text)
        if not _COUNTED.search(text, max(0, m.start() - 16), m.start())
    ]
    habitual = [m.start() for m in _HABITUAL.finditer(text)]
    if not habitual:
        return explicit
    reader = reader or Reader(text)
    spans = list(explicit)
    for m in _GOVERNED.finditer(text):
        i = bisect.bisect_left(explicit, (m.end(),))
        if i and explicit[i - 1][1] > m.start():
            continue  # inside an explicit habit already
        a, b = reader.clause(m.start(), m.end())
        j = bisect.bisect_left(habitual, a)
        if j < len(habitual) and habitual[j] < b:
            spans.append(m.span())
    spans.sort()
    return spans
