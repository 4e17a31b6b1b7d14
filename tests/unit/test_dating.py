"""The date a served fact carries (curate/dating): an event its own time, a state since when
it holds; a span up to now ("一个月了", "for three years") since its start day."""

from __future__ import annotations

from datetime import UTC, datetime

from memstrata.curate.dating import dated, stamp
from memstrata.model import Category, Fact, Scope, When

SAID = datetime(2025, 12, 12, 9, 0, tzinfo=UTC)


def _fact(text: str, when: When | None, category: Category = Category.PERSONAL) -> Fact:
    return Fact(
        id="fa_1",
        scope=Scope("u"),
        text=text,
        category=category,
        confidence=0.9,
        importance=0.7,
        topic=None,
        sources=("ep_1",),
        valid_from=SAID,
        valid_to=None,
        superseded_by=None,
        created_at=SAID,
        updated_at=SAID,
        when=when,
        slot="residence",
    )


def test_a_state_held_for_a_span_is_since_the_span_s_start() -> None:
    month = When("一个月了", datetime(2025, 11, 12, tzinfo=UTC), datetime(2025, 12, 13, tzinfo=UTC))
    assert stamp(_fact("用户住在北京", month)) == "since 2025-11-12"


def test_a_state_dated_by_a_week_keeps_the_week() -> None:
    week = When("last week", datetime(2025, 12, 1, tzinfo=UTC), datetime(2025, 12, 8, tzinfo=UTC))
    assert dated(_fact("The user moved to Ningde.", week)) == (
        "The user moved to Ningde (since week of 2025-12-01)"
    )


def test_a_state_without_a_time_is_as_of_the_day_it_was_said() -> None:
    assert stamp(_fact("The user lives in Ningde", None)) == "2025-12-12"
