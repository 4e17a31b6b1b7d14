"""Time expressions anchored to the calendar, in English, Chinese and mixed text.

A leaf module (no I/O, nothing but the standard library and :mod:`memstrata.errors`): any
layer may use it. ``mentions(text, said_at)`` finds every expression of a time in ``text`` and
the interval it names, resolved against the moment it was said; ``recurrences(text)`` the
recurring times, which name no interval; ``label(start, end)`` a short rendering of an interval
for a model to read. Decision and measurements: ``docs/adr/0015-time-anchoring.md``.

Intervals are half-open ``[start, end)``, whole days of the speaker's calendar (the zone of
``said_at``), returned as aware UTC datetimes. What each form names (said on Friday
2026-05-15):

============================================  ==============================================
a time or part of a day: "tonight",           that day
"this morning", "at 6:30 tomorrow", "今晚"
yesterday, today, tomorrow, the day before    that day (前天 -2, 大前天 -3, 后天 +2, 大后天 +3)
yesterday, the day after tomorrow; 昨天 ...
last/this/next week; 上周, 这周, 本周, 下周,     the Monday-based week
上上周, 下下周; the week before last
last/this/next weekend; 上周末, 这周末, 下周末   Saturday and Sunday of last/this/next week
last/this/next month, year; 上个月, 去年, 前年  that calendar month or year
"last Friday", "this past Friday"             the most recent Friday before today
"this Friday"                                 today or the next Friday (a past sentence: the
                                              most recent one on or before today)
"next Friday"; 上周五, 这周五, 下周三             that weekday of last/this/next week
"last March", "next March"                    the most recent March before this month, the
                                              next one after it; "March last year"
last/this/next summer; 去年夏天, 明年春天        seasons of the northern hemisphere: spring
                                              March-May, summer June-August, autumn
                                              September-November, winter December-February
                                              (a year's winter begins in its December)
"early/mid/late May", 上旬/中旬/下旬, 月初/月底  days 1-10, 11-20, 21-end of the month
"the beginning/end of the month"              (月初 as 上旬, 月底 and 月末 as 下旬)
"early/mid/late 2024"                         January-April, May-August, September-December
"the beginning/end of the year", 年初, 年底     January-February, November-December
上半年, 下半年                                   January-June, July-December
"from May 3 to May 10", "June 3-7",           the first day to the last, inclusive
"between April 11 and 15", 5月3日到10日
"two weeks ago", 两周前, 半年前                  the interval of that unit holding the day: two
"in three days", 三天后, "two days from now"    weeks ago is that week, a year ago that year;
                                              half a year is six months (a month's grain)
"since 2019", "since last March",             from the start of what follows "since" to the
从2019年开始, 自从去年三月, 2020年以来            end of the day said
"for three years" beside a perfect ("I've     from the same day three years before to the
worked here for three years"), 三年了,          end of the day said; "for two hours" without
"the past two weeks", 过去两周, 这三年来          a perfect names nothing
the 90s, the 1980s, 90年代                      that decade
absolute dates: "7 July, 2023", "July 7       that day, month, season or year
2023", "2023-07-07", "2023年7月7日",
"二〇二三年三月五号", "January 2022", "2023年7月",
"summer 2021", "in 2022", "2022年", "23年3月"
============================================  ==============================================

A bare weekday ("on Friday", 周五), month ("in May", 十月, "10月"), month and day ("May 3",
5月3日), day of the month ("on the 20th", 20号), weekend, season or part of a period takes
its occurrence from the tense: the caller's ``tense``, else the one the sentence shows
(:mod:`memstrata.timeref.tense`). Past: the most recent occurrence that has begun by the day
said (a weekday: before the day said). Future: the next that has not ended (a weekday: after
the day said). Unknown: the nearest occurrence (a part of a period: the current period's); a
bare season is left out when the tense is unknown ("我喜欢夏天" names no summer).

Not dates: "May I ask", "I may", "March on", "a second", "one day I'll", "in his 60s",
numbers that are not years, a time of day alone ("6:30"), vague counts ("a few days ago",
前几天), and recurring times: "every morning", "on Sundays", "usually on Sunday", "每天",
"每周五", "周末一般" (:func:`recurrences`). Full-width digits and letters read as ASCII.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time

from memstrata.errors import InvalidInputError
from memstrata.timeref.labels import label
from memstrata.timeref.periods import Grain, Tense

__all__ = [
    "Grain",
    "Recurrence",
    "Tense",
    "TimeMention",
    "label",
    "mentions",
    "recurrence",
    "recurrences",
]


@dataclass(frozen=True, slots=True)
class TimeMention:
    """A time expression of a text and the interval it names.

    ``text`` is the words exactly as in the input (``input[span[0]:span[1]]``); ``start`` and
    ``end`` bound the interval, half-open, aware UTC; ``relative`` is True when resolving it
    needed the moment it was said ("last week", "in May"), False for an absolute date
    ("2023-07-07"); ``grain`` says what it names: ``day``, ``weekend``, ``week``, ``month``,
    ``season``, ``part`` (of a month or a year), ``year``, ``decade``, ``range`` or
    ``duration`` (up to the day said).
    """

    text: str
    start: datetime
    end: datetime
    span: tuple[int, int]
    relative: bool
    grain: Grain


@dataclass(frozen=True, slots=True)
class Recurrence:
    """A recurring time of a text ("every Friday", "每天早上6:30"): a habit, not a date."""

    text: str
    span: tuple[int, int]


def _utc(day: date, said_at: datetime) -> datetime:
    return datetime.combine(day, time(), tzinfo=said_at.tzinfo).astimezone(UTC)


def mentions(text: str, said_at: datetime, *, tense: Tense | None = None) -> list[TimeMention]:
    """Every time expression of ``text`` with the interval it names, in order.

    ``said_at`` is when the text was said (timezone-aware: days are those of its zone).
    ``tense`` says whether the text speaks of the past or the future, for the bare expressions;
    without it the sentence's own tense is used.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a string, not {type(text).__name__}")
    if not isinstance(said_at, datetime) or said_at.utcoffset() is None:
        raise InvalidInputError("said_at must be a timezone-aware datetime")
    if tense not in (None, "past", "future"):
        raise InvalidInputError(f"tense must be 'past', 'future' or None, not {tense!r}")
    from memstrata.timeref import engine  # the grammar compiles on first use, not on import

    found, _ = engine.find(engine.normalize(text), said_at, tense)
    out = []
    for item in found:
        try:
            start, end = _utc(item.found.days[0], said_at), _utc(item.found.days[1], said_at)
        except OverflowError:
            continue  # a day at the edge of the calendar that UTC cannot hold
        out.append(
            TimeMention(
                text[item.start : item.end],
                start,
                end,
                (item.start, item.end),
                item.found.relative,
                item.found.grain,
            )
        )
    return out


def recurrences(text: str) -> list[Recurrence]:
    """The recurring times of ``text``, in order ("every morning", "on Sundays", "每周五")."""
    if not isinstance(text, str):
        raise InvalidInputError(f"text must be a string, not {type(text).__name__}")
    from memstrata.timeref import engine, habits

    return [Recurrence(text[a:b], (a, b)) for a, b in habits.find(engine.normalize(text))]


def recurrence(text: str) -> str | None:
    """The first recurring time of ``text`` as written, or None: tells a habit from a date."""
    found = recurrences(text)
    return found[0].text if found else None
