"""Reading a served text one line at a time, for ``memstrata bench handed``.

A *served line* is a line of the ``<memory>`` block other than its tags, a heading or a blank
line, HTML-unescaped, a bullet's leading ``- `` dropped (lines outside the block, such as what
``wake_up`` says it left out, are not served lines; a text without a block is read whole). An
item is *found* in a line that holds every term of one of its alternatives: substrings,
case-insensitive, Chinese compared in simplified characters. The detectors read one line
each: a past marker, a change stated, a date, a value cut short. Their word lists are kept
here and nowhere else.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from datetime import date
from typing import Final

from memstrata.errors import InvalidInputError

Alternatives = tuple[tuple[str, ...], ...]

#: Words that mark a line as speaking of the past: a stale value in such a line is not served
#: as current. English ones match as whole words ("was", not "wasabi"); "not anymore" also
#: matches "not vegan anymore" and "doesn't ... anymore" (up to four words between).
PAST_MARKERS: Final = (
    "former",
    "formerly",
    "previously",
    "previous",
    "used to",
    "no longer",
    "not anymore",
    "until",
    "before",
    "earlier",
    "was",
    "ex-",
    "以前",
    "之前",
    "曾",
    "原来",
    "不再",
    "已经不",
    "前任",
    "之前的",
)

#: Words that state a change ("switched from metformin to Jardiance", "推迟到国庆"). They do
#: not count as past markers; a stale value served in a line with none of these either is
#: counted apart (``stale_as_current_no_change_stated``), so a reader sees how many of the
#: stale values served as current are stated with their change. In "from … to", "从 … 到"
#: and "不 … 了" (不喝奶茶了, 不跳了) other words stand between (see ``_GAPPED``).
CHANGE_WORDS: Final = (
    "switched",
    "changed",
    "instead of",
    "replaced",
    "postponed",
    "rescheduled",
    "pushed back",
    "cancelled",
    "canceled",
    "called off",
    "quit",
    "gave up",
    "given up",
    "giving up",
    "stopped",
    "no more",
    "broke up",
    "resigned",
    "handed in",
    "correction",
    "corrected",
    "from … to",
    "从 … 到",
    "不 … 了",
    "换成",
    "改成",
    "改为",
    "改到",
    "改喝",
    "改打",
    "改吃",
    "改用",
    "纠正",
    "说错",
    "推迟",
    "延期",
    "取消",
    "戒了",
    "戒掉",
    "戒酒",
    "辞职",
    "离职",
    "停用",
    "停了",
    "分手",
    "分了手",
)

#: The forms a served line carries a date in, most specific first. A month and a day without
#: the year ("October 2", "10月2日") is not a date here, in either language.
DATE_FORMS: Final = (
    ("iso-day", r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)"),
    ("iso-week", r"(?<!\d)\d{4}-W\d{2}(?!\d)"),
    ("iso-month", r"(?<!\d)\d{4}-\d{2}(?!\d)"),
    ("week-of", r"\bweek(?:end)? of\b"),
    ("season-year", r"\b(?:spring|summer|autumn|fall|winter)(?: of)?,? (?:19|20)\d{2}(?!\d)"),
    ("chinese", r"(?<!\d)(?:19|20)\d{2}年(?:\d{1,2}月(?:\d{1,2}[日号])?)?"),
    ("year", r"(?<!\d)(?:19|20)\d{2}(?!\d)"),
)

#: A served line ending in one of these (after its closing punctuation) is a value cut short.
CUT_WORDS_EN: Final = frozenset(
    (
        "at",
        "in",
        "on",
        "of",
        "to",
        "for",
        "with",
        "from",
        "and",
        "or",
        "the",
        "a",
        "an",
        "my",
        "their",
    )
)
CUT_CHARS_ZH: Final = frozenset("在的和与跟把被对")


#: An expected date as the conversation files give it: ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``
#: or ``YYYY-Www`` (an ISO week).
EXPECTED_DATE_RE: Final = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?|-W(\d{2}))?$")


def valid_expected_date(text: str) -> bool:
    """Whether ``text`` is an expected date of one of those forms, and a real one."""
    match = EXPECTED_DATE_RE.match(text)
    if match is None:
        return False
    year, month, day, week = match.groups()
    try:
        if week is not None:
            date.fromisocalendar(int(year), int(week), 1)
        else:
            date(int(year), int(month or 1), int(day or 1))
    except ValueError:
        return False
    return True


_HEADING_RE: Final = re.compile(r"^#{1,6}\s")
_TAG_RE: Final = re.compile(r"^</?memory>$")


def served_lines(text: str) -> list[str]:
    """The lines a reader is served (see the module's docstring)."""
    raw = [line.strip() for line in text.splitlines()]
    if any(_TAG_RE.match(line) for line in raw):
        inside, kept = False, []
        for line in raw:
            if _TAG_RE.match(line):
                inside = not line.startswith("</")
            elif inside:
                kept.append(line)
        raw = kept
    out = []
    for line in raw:
        line = html.unescape(line)
        if not line or _HEADING_RE.match(line):
            continue
        out.append(line[2:].strip() if line.startswith("- ") else line)
    return out


def holds(alternatives: Alternatives, line: str) -> bool:
    """Whether ``line`` holds every term of one of the alternatives, whichever script either
    writes its Chinese in ("甲減" is found in "用户有甲减")."""
    folded = _one_script(line)
    return any(all(_one_script(term) in folded for term in alt) for alt in alternatives)


def _one_script(text: str) -> str:
    from memstrata.curate.hanzi import simplified

    return simplified(text).casefold()


def found_in(alternatives: Alternatives, lines: Sequence[str]) -> list[int]:
    """The indexes of the lines that hold the item."""
    return [i for i, line in enumerate(lines) if holds(alternatives, line)]


#: The phrases of the lists above whose words may stand apart, as patterns.
_GAPPED: Final = {
    "not anymore": r"(?:\bnot|n't)(?:\W+[\w'-]+){0,4}?\W+any ?more\b",
    "from … to": r"\bfrom\b.+\bto\b",
    "从 … 到": r"从.+?(?:到|换|改|搬)",
    "不 … 了": r"不(?:喝|吃|跳|打|抽|做|用|去|玩|考)[^，。,.;；!！?？]{0,6}?了",
}


def _word_pattern(words: Iterable[str]) -> re.Pattern[str]:
    """One pattern for a list: English words whole ("was", not "wasabi"), Chinese ones as
    they are, the gapped phrases as :data:`_GAPPED` writes them."""
    parts = []
    for word in words:
        if word in _GAPPED:
            parts.append(_GAPPED[word])
        elif word.isascii():
            tail = "" if word.endswith("-") else r"\b"
            parts.append(r"\b" + re.escape(word) + tail)
        else:
            parts.append(re.escape(word))
    return re.compile("|".join(parts), re.IGNORECASE)


_PAST_RE: Final = _word_pattern(PAST_MARKERS)
_CHANGE_RE: Final = _word_pattern(CHANGE_WORDS)


def marks_past(line: str) -> bool:
    """Whether the line holds one of the :data:`PAST_MARKERS`."""
    return _PAST_RE.search(line) is not None


def states_change(line: str) -> bool:
    """Whether the line holds one of the :data:`CHANGE_WORDS`."""
    return _CHANGE_RE.search(line) is not None


_DATE_RES: Final = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in DATE_FORMS)


def date_form(line: str) -> str | None:
    """The name of the first :data:`DATE_FORMS` form the line carries a date in, or None."""
    for name, rx in _DATE_RES:
        if rx.search(line):
            return name
    return None


_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sept", "sep"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH: Final = r"(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR: Final = r"((?:19|20)\d{2})(?!\d)"
_DAY: Final = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAYS_RE: Final = (
    (re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)"), "ymd"),
    (re.compile(r"(?<!\d)(\d{4})年(\d{1,2})月(\d{1,2})[日号]"), "ymd"),
    (re.compile(rf"\b{_MONTH} {_DAY},? {_YEAR}", re.IGNORECASE), "mdy"),
    (re.compile(rf"\b{_DAY} (?:of )?{_MONTH},? {_YEAR}", re.IGNORECASE), "dmy"),
)
_MONTHS_RE: Final = (
    (re.compile(r"(?<!\d)(\d{4})-(\d{2})(?!\d)"), "ym"),
    (re.compile(r"(?<!\d)(\d{4})年(\d{1,2})月"), "ym"),
    (re.compile(rf"\b{_MONTH},? (?:of )?{_YEAR}", re.IGNORECASE), "my"),
)
_WEEK_RE: Final = re.compile(r"(?<!\d)(\d{4})-W(\d{2})(?!\d)")
_YEAR_RE: Final = re.compile(r"(?<!\d)((?:19|20)\d{2})(?!\d)")


def _month(token: str) -> int:
    return _MONTHS.get(token.lower().rstrip("."), 0) if not token.isdigit() else int(token)


def _days(line: str) -> set[date]:
    out = set()
    for rx, order in _DAYS_RE:
        for m in rx.finditer(line):
            a, b, c = m.groups()
            y, mo, d = {"ymd": (a, b, c), "mdy": (c, a, b), "dmy": (c, b, a)}[order]
            try:
                out.add(date(int(y), _month(mo), int(d)))
            except ValueError:
                continue
    return out


def states_date(line: str, expected: str) -> bool:
    """Whether the line states the ``expected`` date (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``
    or ``YYYY-Www``) with its year: ISO, Chinese (2026年10月2日) or English (October 2, 2026;
    2 October 2026; October 2026) forms, or a day inside the expected month or week."""
    match = EXPECTED_DATE_RE.match(expected)
    if match is None:
        raise InvalidInputError(
            f"{expected!r} is not a date: YYYY, YYYY-MM, YYYY-MM-DD or YYYY-Www"
        )
    year, month, day, week = (int(g) if g else None for g in match.groups())
    days = _days(line)
    if week is not None:
        weeks = {(int(a), int(b)) for a, b in _WEEK_RE.findall(line)}
        return (year, week) in weeks or any(d.isocalendar()[:2] == (year, week) for d in days)
    if day is not None:
        return date(year or 0, month or 0, day) in days
    if month is not None:
        months = set()
        for rx, order in _MONTHS_RE:
            for a, b in rx.findall(line):
                y, mo = (a, b) if order == "ym" else (b, a)
                months.add((int(y), _month(mo)))
        return (year, month) in months or any((d.year, d.month) == (year, month) for d in days)
    return str(year) in _YEAR_RE.findall(line)


_TRAILING: Final = " \t.,;:!?…。，、；：！？)]}）】」』》\"'”’*_—-"
_LAST_WORD_RE: Final = re.compile(r"([A-Za-z]+)$")


def cut_value(line: str) -> bool:
    """Whether the line ends in a word that cannot end a phrase ("... at Tencent in", "住在"),
    after its closing punctuation. A line cut mid-word cannot be told from a whole one."""
    text = line.rstrip(_TRAILING)
    if not text:
        return False
    if text[-1] in CUT_CHARS_ZH:
        return True
    match = _LAST_WORD_RE.search(text)
    return match is not None and match.group(1).lower() in CUT_WORDS_EN
