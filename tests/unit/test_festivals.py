"""Holidays and festivals a person dates things by: "at Christmas", "Thanksgiving", "过年"."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from memstrata import timeref


def _days(text: str, said: datetime) -> list[tuple[str, date, date]]:
    return [(m.text, m.start.date(), m.end.date()) for m in timeref.mentions(text, said)]


MAY_2026 = datetime(2026, 5, 15, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "said", "expected"),
    [
        # fixed days, by the tense around them
        ("We met at Christmas.", MAY_2026, [("Christmas", date(2025, 12, 25), date(2025, 12, 26))]),
        (
            "We'll fly home for Christmas.",
            MAY_2026,
            [("Christmas", date(2026, 12, 25), date(2026, 12, 26))],
        ),
        (
            "圣诞想回香港",
            datetime(2025, 8, 12, tzinfo=UTC),
            [("圣诞", date(2025, 12, 25), date(2025, 12, 26))],
        ),
        # computed: Easter (computus), Thanksgiving (the fourth Thursday of November)
        ("We went to Rome at Easter.", MAY_2026, [("Easter", date(2026, 4, 5), date(2026, 4, 6))]),
        (
            "going home for Thanksgiving",
            MAY_2026,
            [("Thanksgiving", date(2026, 11, 26), date(2026, 11, 27))],
        ),
        # the Chinese calendar: the Spring Festival, Mid-Autumn, Dragon Boat
        ("春节回老家了。", MAY_2026, [("春节", date(2026, 2, 17), date(2026, 2, 18))]),
        (
            "过年我们打算回烟台",
            datetime(2025, 12, 9, tzinfo=UTC),
            [("过年", date(2026, 2, 17), date(2026, 2, 18))],
        ),
        (
            "中秋回家了",
            datetime(2025, 11, 1, tzinfo=UTC),
            [("中秋", date(2025, 10, 6), date(2025, 10, 7))],
        ),
        ("端午打算去苏州", MAY_2026, [("端午", date(2026, 6, 19), date(2026, 6, 20))]),
        (
            "Lunar New Year 2027",
            MAY_2026,
            [("Lunar New Year 2027", date(2027, 2, 6), date(2027, 2, 7))],
        ),
        # named by a modifier or a year
        ("去年春节我们去了三亚", MAY_2026, [("去年春节", date(2025, 1, 29), date(2025, 1, 30))]),
        ("明年国庆去新疆", MAY_2026, [("明年国庆", date(2027, 10, 1), date(2027, 10, 2))]),
        (
            "next Easter we fly to Rome",
            MAY_2026,
            [("next Easter", date(2027, 3, 28), date(2027, 3, 29))],
        ),
        (
            "last Thanksgiving was chaos",
            MAY_2026,
            [("last Thanksgiving", date(2025, 11, 27), date(2025, 11, 28))],
        ),
        # a plan that cannot happen is a coming one ("去不成了")
        (
            "五一去不成了",
            datetime(2025, 4, 20, tzinfo=UTC),
            [("五一", date(2025, 5, 1), date(2025, 5, 2))],
        ),
        # a thing or a greeting, not a time
        ("I bought a christmas tree", MAY_2026, []),
        ("新年快乐！过年好", MAY_2026, []),
        ("我今年三十岁。", MAY_2026, [("今年", date(2026, 1, 1), date(2027, 1, 1))]),
    ],
)
def test_a_holiday_names_its_day_in_the_year_the_words_around_it_say(
    text: str, said: datetime, expected: list[tuple[str, date, date]]
) -> None:
    assert _days(text, said) == expected


def test_since_a_holiday_is_a_span_up_to_the_day_said() -> None:
    [since] = timeref.mentions("I've been off sugar since Christmas.", MAY_2026)
    assert since.start.date() == date(2025, 12, 25) and since.end.date() == date(2026, 5, 16)


def test_a_year_the_calendar_does_not_hold_names_no_day() -> None:
    assert _days("1900年中秋", MAY_2026) == [("1900年", date(1900, 1, 1), date(1901, 1, 1))]
    assert _days("Lunar New Year 1850", MAY_2026) == []
    assert _days("Christmas 1850", MAY_2026) == [
        ("Christmas 1850", date(1850, 12, 25), date(1850, 12, 26))
    ]
