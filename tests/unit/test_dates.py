"""Absolute dates in queries, and the search bonus for entries dated then."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata import timeref
from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.index.dates import date_query
from memstrata.model import Scope, Turn
from memstrata.settings import load_settings


def _days(text: str) -> list[tuple[str, str]]:
    return [
        (
            datetime.fromtimestamp(a, UTC).date().isoformat(),
            datetime.fromtimestamp(b, UTC).date().isoformat(),
        )
        for a, b in date_query(text).windows
    ]


@pytest.mark.parametrize(
    ("text", "windows"),
    [
        ("What did Maria do on 7 July, 2023?", [("2023-07-07", "2023-07-08")]),
        ("on July 7th 2023", [("2023-07-07", "2023-07-08")]),
        ("on December 1,2023", [("2023-12-01", "2023-12-02")]),
        ("deployed 2023-07-07", [("2023-07-07", "2023-07-08")]),
        ("我2023年7月7日去了哪里？", [("2023-07-07", "2023-07-08")]),
        ("what happened in January 2022", [("2022-01-01", "2022-02-01")]),
        ("2023年7月发生了什么", [("2023-07-01", "2023-08-01")]),
        ("which state in summer 2021", [("2021-06-01", "2021-09-01")]),
        ("winter 2022 trip", [("2022-12-01", "2023-03-01")]),
        ("what did I do in 2022", [("2022-01-01", "2023-01-01")]),
        ("30 February, 2023 is not a day", [("2023-02-01", "2023-03-01")]),  # the month remains
        ("When did Caroline go to the support group?", []),
        ("I may go there", []),
    ],
)
def test_windows(text: str, windows: list[tuple[str, str]]) -> None:
    assert _days(text) == windows


def test_months_of_any_year() -> None:
    assert date_query("When did Melanie go camping in June?").months == {6}
    assert date_query("我们7月去了海边").months == {7}
    assert not date_query("去年7月") and not date_query("how are you")


def test_search_prefers_what_was_said_around_a_named_date(tmp_path: object) -> None:
    from pathlib import Path

    with Memory.open(
        settings=load_settings(data_dir=Path(str(tmp_path)) / "m"), embedder=HashingEmbedder(dim=64)
    ) as mem:
        scope = Scope("alice")
        early = mem.remember(
            Turn(
                "We went to the lake for a picnic",
                time=datetime(2023, 3, 4, tzinfo=UTC),
                session_id="s1",
            ),
            scope,
        )[0]
        late = mem.remember(
            Turn(
                "We went to the lake for a swim",
                time=datetime(2023, 7, 8, tzinfo=UTC),
                session_id="s2",
            ),
            scope,
        )[0]
        hits = mem.search("What did we do at the lake on 7 July, 2023?", scope, k=2)
        assert [h.id for h in hits] == [late.id, early.id]
        assert hits[0].score - hits[1].score > 1.0
        hits = mem.search("What did we do at the lake on 3 March, 2023?", scope, k=2)
        assert hits[0].id == early.id


@pytest.mark.parametrize(
    "query",
    ["March 0000", "December 9999", "winter 9999", "0000年3月", "9999年12月", "December 31 9999"],
)
def test_dates_outside_the_calendar_name_no_window(query: str) -> None:
    found = date_query(query)
    assert all(start < end for start, end in found.windows)


@pytest.mark.parametrize(
    "text",
    [
        "on 7 July, 2023",
        "on July 7th 2023",
        "deployed 2023-07-07",
        "我2023年7月7日去了哪里",
        "in January 2022",
        "2023年7月发生了什么",
        "in summer 2021",
        "the winter of 2022",
        "what did I do in 2022",
        "2022年",
    ],
)
def test_absolute_dates_read_as_timeref_reads_them(text: str) -> None:
    """Where a query and a turn name the same absolute date, both grammars give one window."""
    (found,) = timeref.mentions(text, datetime(2026, 5, 15, tzinfo=UTC))
    assert date_query(text).windows == ((found.start.timestamp(), found.end.timestamp()),)
