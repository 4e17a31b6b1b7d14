"""Time expressions anchored at capture: the gold corpus, the edges of the calendar, labels."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata import timeref
from memstrata.errors import InvalidInputError

GOLD = Path(__file__).parent.parent / "fixtures" / "timeref_gold.jsonl"
CASES = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines()]
FRIDAY = datetime(2026, 5, 15, 10, tzinfo=UTC)


def _expected(
    case: dict[str, Any], items: list[dict[str, str]]
) -> list[tuple[str, datetime, datetime]]:
    """Gold days are days of the speaker's calendar (the zone of ``said_at``)."""
    zone = datetime.fromisoformat(case["said_at"]).tzinfo

    def at(day: str) -> datetime:
        return datetime.combine(date.fromisoformat(day), time(), tzinfo=zone).astimezone(UTC)

    return [(i["text"], at(i["start"]), at(i["end"])) for i in items]


def _found(case: dict[str, Any]) -> list[tuple[str, datetime, datetime]]:
    said_at = datetime.fromisoformat(case["said_at"])
    found = timeref.mentions(case["text"], said_at, tense=case["tense"])
    for m in found:
        assert case["text"][m.span[0] : m.span[1]] == m.text
        assert m.start < m.end and m.start.tzinfo is UTC and m.end.tzinfo is UTC
    return [(m.text, m.start, m.end) for m in found]


def test_the_gold_corpus_is_large_and_bilingual() -> None:
    languages = {c["id"].split("-")[0] for c in CASES}
    assert len(CASES) >= 200 and languages == {"en", "zh", "mixed"}
    assert sum(1 for c in CASES if not c["expect"]) >= 50  # non-dates and habits


@pytest.mark.parametrize(
    "case", [c for c in CASES if "out_of_scope" not in c], ids=lambda c: c["id"]
)
def test_gold(case: dict[str, Any]) -> None:
    assert _found(case) == _expected(case, case["expect"]), case["text"]
    assert timeref.recurrence(case["text"]) == case["recurrence"], case["text"]


@pytest.mark.parametrize("case", [c for c in CASES if "out_of_scope" in c], ids=lambda c: c["id"])
def test_out_of_scope_cases_stay_as_recorded(case: dict[str, Any]) -> None:
    """A case left out of scope still gives what was recorded, so a change is noticed."""
    recorded = _expected(case, case["out_of_scope"]["got"])
    assert recorded != _expected(case, case["expect"]) and case["out_of_scope"]["reason"]
    assert _found(case) == recorded


def test_relative_and_grain() -> None:
    found = {m.text: m for m in timeref.mentions("In 2022 I moved; last week I quit.", FRIDAY)}
    assert not found["2022"].relative and found["2022"].grain == "year"
    assert found["last week"].relative and found["last week"].grain == "week"
    since = timeref.mentions("I have lived here since 2019.", FRIDAY)[0]
    assert since.relative and since.grain == "duration"
    assert since.end == datetime(2026, 5, 16, tzinfo=UTC)


def test_the_callers_tense_decides_a_bare_expression() -> None:
    def october(tense: timeref.Tense | None) -> int:
        return timeref.mentions("Kyoto in October", FRIDAY, tense=tense)[0].start.year

    assert (october("past"), october("future"), october(None)) == (2025, 2026, 2026)


def test_days_are_the_speakers_days() -> None:
    """Said at 23:30 in Shanghai, "yesterday" is the day before in Shanghai, not in UTC."""
    said_at = datetime(2026, 3, 1, 23, 30, tzinfo=timezone(timedelta(hours=8)))
    (m,) = timeref.mentions("yesterday", said_at)
    assert (m.start, m.end) == (
        datetime(2026, 2, 27, 16, tzinfo=UTC),
        datetime(2026, 2, 28, 16, tzinfo=UTC),
    )
    assert timeref.label(m.start, m.end, said_at.tzinfo) == "2026-02-28"
    assert timeref.label(m.start, m.end) == "2026-02-27 to 2026-02-28"


def test_a_day_of_23_hours() -> None:
    zoneinfo = pytest.importorskip("zoneinfo")
    try:
        new_york = zoneinfo.ZoneInfo("America/New_York")
    except zoneinfo.ZoneInfoNotFoundError:
        pytest.skip("no time zone database")
    (m,) = timeref.mentions("tomorrow", datetime(2026, 3, 7, 12, tzinfo=new_york))
    assert m.end - m.start == timedelta(hours=23)  # clocks go forward on 8 March
    assert timeref.label(m.start, m.end, new_york) == "2026-03-08"


@pytest.mark.parametrize(
    ("start", "end", "text"),
    [
        ("2026-05-15", "2026-05-16", "2026-05-15"),
        ("2026-05-11", "2026-05-18", "week of 2026-05-11"),
        ("2026-05-16", "2026-05-18", "weekend of 2026-05-16"),
        ("2026-05-01", "2026-06-01", "2026-05"),
        ("2026-06-01", "2026-09-01", "summer 2026"),
        ("2026-12-01", "2027-03-01", "winter 2026-27"),
        ("2026-01-01", "2027-01-01", "2026"),
        ("1990-01-01", "2000-01-01", "1990s"),
        ("2026-05-03", "2026-05-11", "2026-05-03 to 2026-05-10"),
        ("2026-05-12", "2026-05-19", "2026-05-12 to 2026-05-18"),  # seven days, not a week
    ],
)
def test_label(start: str, end: str, text: str) -> None:
    def at(day: str) -> datetime:
        return datetime.combine(date.fromisoformat(day), time(), tzinfo=UTC)

    assert timeref.label(at(start), at(end)) == text


def test_label_of_a_duration_up_to_a_moment() -> None:
    assert timeref.label(datetime(2019, 1, 1, tzinfo=UTC), FRIDAY) == "2019-01-01 to 2026-05-15"


def test_bad_input_is_refused_clearly() -> None:
    with pytest.raises(InvalidInputError, match="timezone-aware"):
        timeref.mentions("yesterday", datetime(2026, 5, 15))
    with pytest.raises(InvalidInputError, match="tense"):
        timeref.mentions("yesterday", FRIDAY, tense="present")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="string"):
        timeref.mentions(b"yesterday", FRIDAY)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="start before"):
        timeref.label(FRIDAY, FRIDAY)
    with pytest.raises(InvalidInputError, match="timezone-aware"):
        timeref.label(datetime(2026, 1, 1), FRIDAY)


@pytest.mark.parametrize(
    ("text", "said_at"),
    [
        (
            "tomorrow, next week, next year, in two years, the end of the year, 下个月, 明年春天",
            datetime(9999, 12, 31, 23, tzinfo=UTC),
        ),
        (
            "yesterday, last week, last year, two years ago, since May, 去年, 上个月, 三年了",
            datetime(1, 1, 1, tzinfo=UTC),
        ),
        (
            "today, this week, in May, 周五",
            datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-12))),
        ),
        (
            "today, this week, in May, 周五",
            datetime(1, 1, 1, 1, tzinfo=timezone(timedelta(hours=14))),
        ),
    ],
)
def test_the_edges_of_the_calendar_name_nothing_beyond_it(text: str, said_at: datetime) -> None:
    """Near the years 1 and 9999 what the calendar cannot hold is left out, never an error."""
    for m in timeref.mentions(text, said_at):
        assert datetime.min.replace(tzinfo=UTC) <= m.start < m.end
    assert timeref.mentions("next year", datetime(9999, 6, 1, tzinfo=UTC)) == []
    assert timeref.mentions("last year", datetime(1, 6, 1, tzinfo=UTC)) == []


def test_recurrences_name_the_habits() -> None:
    text = "I swim every Friday, and 每天早上6:30 I run; last Friday I skipped it."
    assert [r.text for r in timeref.recurrences(text)] == ["every Friday", "每天早上6:30"]
    assert [m.text for m in timeref.mentions(text, FRIDAY)] == ["last Friday"]
    assert timeref.recurrence("see you on Friday") is None


def test_a_hundred_thousand_characters() -> None:
    text = " ".join(c["text"] for c in CASES)
    text = (text * (100_000 // len(text) + 1))[:100_000]
    found = timeref.mentions(text, FRIDAY)
    assert len(found) > 1000
    assert all(text[m.span[0] : m.span[1]] == m.text for m in found)
    for pathological in ("一" * 100_000, "周一" * 50_000, "每" * 100_000, "'" * 100_000):
        timeref.mentions(pathological, FRIDAY)


_WORDS = [
    *[
        "last",
        "this",
        "next",
        "the",
        "day",
        "before",
        "after",
        "yesterday",
        "today",
        "tomorrow",
        "tonight",
        "week",
        "weekend",
        "month",
        "year",
        "since",
        "for",
        "from",
        "to",
        "between",
        "and",
        "in",
        "on",
        "ago",
        "every",
        "Friday",
        "Sunday",
        "May",
        "March",
        "summer",
        "early",
        "late",
        "end",
        "of",
        "three",
        "two",
        "a",
        "3",
        "20th",
        "2023",
        "2023-07-07",
        "1",
        "9999",
        "0000",
        "I've",
        "been",
        "have",
        "went",
        "will",
    ],
    *[
        "上周",
        "下周",
        "周五",
        "周一",
        "去年",
        "明年",
        "今年",
        "三月",
        "5月",
        "3日",
        "号",
        "到",
        "从",
        "开始",
        "以来",
        "了",
        "要",
        "每天",
        "两周前",
        "三天后",
        "年底",
        "月底",
        "上旬",
        "夏天",
        "二〇二三年",
        "十二月",
        "半年前",
        "三年了",
        "大后天",
        "，。",
        "6:30",
        "２０２３年",
    ],
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(max_size=200),
        st.lists(st.sampled_from(_WORDS), max_size=25).map(" ".join),
        st.lists(st.sampled_from(_WORDS), max_size=25).map("".join),
    ),
    said_at=st.datetimes(
        min_value=datetime(1, 1, 1),
        max_value=datetime(9999, 12, 31, 23, 59),
        timezones=st.sampled_from(
            [UTC, timezone(timedelta(hours=14)), timezone(timedelta(hours=-12))]
        ),
    ),
    tense=st.sampled_from([None, "past", "future"]),
)
def test_never_raises_and_spans_index_the_input(
    text: str, said_at: datetime, tense: timeref.Tense | None
) -> None:
    for m in timeref.mentions(text, said_at, tense=tense):
        assert text[m.span[0] : m.span[1]] == m.text
        assert m.start < m.end
        assert m.start.utcoffset() == timedelta(0)
        timeref.label(m.start, m.end)
    for r in timeref.recurrences(text):
        assert text[r.span[0] : r.span[1]] == r.text


def test_the_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (Path(__file__).parent.parent.parent / "README.md").read_text(encoding="utf-8")
    code = next(b for b in readme.split("```python")[1:] if "timeref.mentions" in b)
    exec(compile(code.split("```", 1)[0], "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines() == [
        "last week -> week of 2026-05-04",
        "十月 -> 2026-10",
        "每周五",
    ]
