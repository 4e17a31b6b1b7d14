"""Running the grammar over a text: every rule, the longest of overlapping finds, then joins.

1. Full-width ASCII forms (``２０２３``, ``－``) and the ideographic space become ASCII, one
   character for one, so offsets stay those of the input.
2. Recurring times (:mod:`memstrata.timeref.habits`) are found; nothing inside one is a date.
3. Every rule of :mod:`memstrata.timeref.english` and :mod:`memstrata.timeref.chinese` runs;
   of finds that overlap, the longest wins (then the earliest, then the rule listed first).
4. Neighbours are joined: "from X to Y", "between X and Y", "X到Y" into a range; a weekday (or
   a range of them) and a week beside it ("Monday to Wednesday next week", "下周从周一到周三")
   into days of that week; "since X", "从X开始", "X以来" into a duration up to the day said.
5. A bare expression (resolved by tense) in a clause with a habit ("Every year in May") is
   dropped: it is part of the habit.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Final

from memstrata.timeref import chinese, english, festivals, habits, periods
from memstrata.timeref.grammar import Context, Found, Grain, span
from memstrata.timeref.periods import Tense

RULES: Final = (*english.RULES, *chinese.RULES, *festivals.RULES)

WIDTH: Final = {0xFF01 + i: 0x21 + i for i in range(0x5E)} | {0x3000: 0x20}
"""Full-width ASCII forms to ASCII, one character for one."""


@dataclass(frozen=True, slots=True)
class Placed:
    start: int
    end: int
    found: Found


def normalize(text: str) -> str:
    return text.translate(WIDTH)


def _overlaps(a: tuple[int, int], spans: list[tuple[int, int]]) -> bool:
    i = bisect.bisect_left(spans, (a[1],))
    return i > 0 and spans[i - 1][1] > a[0]


def _select(found: list[tuple[int, int, int, Found]]) -> list[Placed]:
    found.sort(key=lambda f: (f[0] - f[1], f[0], f[2]))
    starts: list[int] = []
    kept: list[Placed] = []
    for start, end, _, what in found:
        i = bisect.bisect_right(starts, start)
        if i > 0 and kept[i - 1].end > start:
            continue
        if i < len(kept) and kept[i].start < end:
            continue
        starts.insert(i, start)
        kept.insert(i, Placed(start, end, what))
    return kept


_RANGE_GAP: Final = re.compile(
    r"\s*(?:-|–|—|~|～|to|through|thru|until|till|到|至)\s*", re.IGNORECASE
)
_AND_GAP: Final = re.compile(r"\s+and\s+", re.IGNORECASE)
_RANGE_OPEN: Final = re.compile(
    r"(?:(?<![A-Za-z])(?P<en>from|between)\s+|(?P<zh>从|由))$", re.IGNORECASE
)
_WEEK_AFTER: Final = re.compile(r"\s*(?:,\s*|of\s+)?", re.IGNORECASE)
_WEEK_BEFORE: Final = re.compile(r"\s*(?:的|从|,\s*|，)?\s*")
_SINCE_EN: Final = re.compile(r"(?<![A-Za-z])since\s+$", re.IGNORECASE)
_SINCE_ZH_OPEN: Final = re.compile(r"(?P<word>自从|自打|从|自)$")
_SINCE_ZH_CLOSE: Final = re.compile(r"开始|起|以来|至今|到现在|到今天")
_JOINABLE: Final = frozenset({"day", "weekend", "week", "month", "season", "part", "year"})


def _later_occurrence(x: Found, y: Found) -> periods.Days | None:
    """``y``'s interval, moved to its first occurrence from ``x``'s start when ``y`` is bare."""
    if not y.candidates or y.days[0] >= x.days[0]:
        return y.days
    return next((c for c in y.candidates if c[0] >= x.days[0]), None)


def _ranges(text: str, items: list[Placed]) -> list[Placed]:
    out: list[Placed] = []
    i = 0
    while i < len(items):
        x = items[i]
        if i + 1 < len(items):
            y = items[i + 1]
            joined = _join(text, x, y)
            if joined is not None:
                out.append(joined)
                i += 2
                continue
        out.append(x)
        i += 1
    return out


def _join(text: str, x: Placed, y: Placed) -> Placed | None:
    if x.found.grain not in _JOINABLE or y.found.grain not in _JOINABLE:
        return None
    gap = text[x.end : y.start]
    opener = _RANGE_OPEN.search(text, max(0, x.start - 10), x.start)
    if _AND_GAP.fullmatch(gap):
        if opener is None or (opener["en"] or "").lower() != "between":
            return None
    elif not _RANGE_GAP.fullmatch(gap):
        return None
    last = _later_occurrence(x.found, y.found)
    if last is None or last[1] <= x.found.days[0]:
        return None
    wx, wy = x.found.weekdays, y.found.weekdays
    found = Found(
        (x.found.days[0], last[1]),
        "range",
        x.found.relative or y.found.relative,
        weekdays=(wx[0], wy[1]) if wx and wy else None,
    )
    return Placed(opener.start() if opener else x.start, y.end, found)


_WEEKDAY_AFTER_DATE: Final = re.compile(r"\s*[(（,，]?\s*")
_CLOSE: Final = re.compile(r"\s*[)）]")


def _dated_weekdays(text: str, items: list[Placed]) -> list[Placed]:
    """A date followed by its weekday ("5月16号周六", "May 16 (Saturday)") is one expression."""
    out: list[Placed] = []
    for item in items:
        before = out[-1] if out else None
        wd = item.found.weekdays
        if (
            before is not None
            and wd is not None
            and item.found.candidates
            and before.found.grain == "day"
            and before.found.weekdays is None
            and _WEEKDAY_AFTER_DATE.fullmatch(text, before.end, item.start)
        ):
            date_found = before.found
            if date_found.candidates and date_found.days[0].weekday() != wd[0]:
                match = [c for c in date_found.candidates if c[0].weekday() == wd[0]]
                if match:
                    date_found = Found(match[-1], "day", True)
            close = _CLOSE.match(text, item.end)
            end = (
                close.end()
                if close and text[before.end : item.start].strip() in "(（"
                else item.end
            )
            out[-1] = Placed(before.start, end, date_found)
            continue
        out.append(item)
    return out


def _in_week(text: str, items: list[Placed]) -> list[Placed]:
    out: list[Placed] = []
    i = 0
    while i < len(items):
        item = items[i]
        days = item.found.weekdays
        if days is not None:
            after = items[i + 1] if i + 1 < len(items) else None
            before = out[-1] if out else None
            if (
                after
                and after.found.grain == "week"
                and _WEEK_AFTER.fullmatch(text, item.end, after.start)
            ):
                out.append(_weekdays_of(item, after, days, item.start, after.end))
                i += 2
                continue
            if (
                before
                and before.found.grain == "week"
                and _WEEK_BEFORE.fullmatch(text, before.end, item.start)
            ):
                out[-1] = _weekdays_of(item, before, days, before.start, item.end)
                i += 1
                continue
        out.append(item)
        i += 1
    return out


def _weekdays_of(item: Placed, week: Placed, days: tuple[int, int], a: int, b: int) -> Placed:
    monday = week.found.days[0]
    try:
        start = monday + timedelta(days=days[0])
        end = monday + timedelta(days=days[1] + 1)
    except OverflowError:
        return item
    grain: Grain = "day" if days[0] == days[1] else "range"
    return Placed(a, b, Found((start, end), grain, True))


def _since(text: str, items: list[Placed], ctx: Context) -> list[Placed]:
    out: list[Placed] = []
    for item in items:
        start, end = item.start, item.end
        en = _SINCE_EN.search(text, max(0, start - 12), start)
        zh_open = _SINCE_ZH_OPEN.search(text, max(0, start - 2), start)
        zh_close = _SINCE_ZH_CLOSE.match(text, end)
        if en:
            start = en.start()
        elif zh_open and (zh_close or zh_open["word"] in ("自从", "自打")):
            start = zh_open.start()
            end = zh_close.end() if zh_close else end
        elif zh_close and zh_close.group() == "以来":
            end = zh_close.end()
        else:
            out.append(item)
            continue
        found = item.found
        days = found.days
        if found.candidates:
            chosen = periods.pick(found.candidates, ctx.today, "past", strict=found.strict)
            if chosen is None:
                out.append(item)
                continue
            days = chosen
        if ctx.today == date.max:
            out.append(item)
            continue
        tomorrow = ctx.today + timedelta(days=1)
        if (found.grain not in _JOINABLE and found.grain != "decade") or days[0] >= tomorrow:
            out.append(item)
            continue
        out.append(Placed(start, end, Found((days[0], tomorrow), "duration", True)))
    return out


def _unhabitual(ctx: Context, items: list[Placed], habit: list[tuple[int, int]]) -> list[Placed]:
    if not habit:
        return items
    kept = []
    for item in items:
        if item.found.candidates:
            a, b = ctx.reader.clause(item.start, item.end)
            i = bisect.bisect_left(habit, (a,))
            if i < len(habit) and habit[i][0] < b:
                continue
        kept.append(item)
    return kept


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in spans:
        if out and a < out[-1][1]:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


def find(
    text: str, said_at: datetime, tense: Tense | None
) -> tuple[list[Placed], list[tuple[int, int]]]:
    """The time expressions of ``text`` (already normalized) and its recurring times."""
    ctx = Context(text, said_at, tense)
    habit = habits.find(text, ctx.reader)
    merged = _merged(habit)
    found: list[tuple[int, int, int, Found]] = []
    for index, rule in enumerate(RULES):
        for m in rule.pattern.finditer(text):
            start, end = span(m)
            if end <= start or _overlaps((start, end), merged):
                continue
            try:
                what = rule.handler(m, ctx)
            except (ValueError, OverflowError):
                continue  # a day the calendar does not hold: 30 February, the year 10,000
            if what is not None and what.days[0] < what.days[1]:
                found.append((start, end, index, what))
    items = _select(found)
    items = _dated_weekdays(text, items)
    items = _ranges(text, items)
    items = _in_week(text, items)
    items = _since(text, items, ctx)
    items = _unhabitual(ctx, items, merged)
    return items, habit
