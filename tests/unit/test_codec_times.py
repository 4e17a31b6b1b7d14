"""Times round-trip through the codec for every year, and stored text that an older version
wrote without zero padding still reads."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memstrata.api import Memory
from memstrata.codec import format_time, parse_time
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import InvalidInputError
from memstrata.model import Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock


@pytest.mark.parametrize(
    "value",
    [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    ],
)
def test_times_round_trip(value: datetime) -> None:
    text = format_time(value)
    assert len(text) == len("2026-01-02T03:04:05.000006Z")
    assert parse_time(text) == value


@given(st.datetimes(timezones=st.just(UTC)))
def test_every_time_round_trips_and_sorts_as_text(value: datetime) -> None:
    assert parse_time(format_time(value)) == value
    later = value + timedelta(microseconds=1) if value.year < 9999 else value
    assert format_time(value) <= format_time(later)


def test_text_written_without_zero_padding_still_reads() -> None:
    assert parse_time("1-01-01T00:00:00.000000Z") == datetime(1, 1, 1, tzinfo=UTC)
    assert parse_time("33-02-03T04:05:06.7Z") == datetime(33, 2, 3, 4, 5, 6, 700000, tzinfo=UTC)


@pytest.mark.parametrize(
    "text", ["0001-01-01T00:00:00+01:00", "9999-12-31T23:00:00-05:00", "0000-01-01", "soon"]
)
def test_times_outside_the_range_are_refused_clearly(text: str) -> None:
    with pytest.raises(InvalidInputError, match=r"ISO 8601|out of range"):
        parse_time(text)


def test_a_year_one_turn_leaves_the_scope_readable(memory: Memory) -> None:
    scope = Scope("alice")
    [ep] = memory.remember({"text": "long ago", "time": "0001-01-01T00:00:00Z"}, scope)
    memory.remember("today", scope)
    assert memory.get(ep.id, scope).time == datetime(1, 1, 1, tzinfo=UTC)
    assert {e.text for e in memory.list(scope)} == {"long ago", "today"}
    assert memory.stats(scope).first_time == datetime(1, 1, 1, tzinfo=UTC)
    memory.delete(ep.id, scope)
    assert [e.text for e in memory.list(scope)] == ["today"]


def test_a_python_time_that_cannot_be_utc_is_refused(memory: Memory) -> None:
    east = timezone(timedelta(hours=5))
    with pytest.raises(InvalidInputError, match="out of range"):
        memory.remember({"text": "x", "time": datetime(1, 1, 1, tzinfo=east)}, "alice")


def test_a_store_holding_unpadded_years_still_reads(data_dir: Path, clock: FixedClock) -> None:
    settings = load_settings(data_dir=data_dir)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder()) as mem:
        [ep] = mem.remember("long ago I drank tea", "alice")
        fact = mem.add_fact("Alice drinks tea", "alice", sources=[ep.id])
    with sqlite3.connect(settings.db_path) as conn:  # what an earlier version wrote
        conn.execute("UPDATE episodes SET time = '1-01-01T00:00:00.000000Z'")
        conn.execute("UPDATE facts SET valid_from = '1-01-01T00:00:00.000000Z'")
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder()) as mem:
        assert mem.get(ep.id, "alice").time == datetime(1, 1, 1, tzinfo=UTC)
        assert mem.get(fact.id, "alice").valid_from == datetime(1, 1, 1, tzinfo=UTC)
        assert len(mem.list("alice")) == 1 and mem.stats("alice").episodes == 1
        assert mem.search("tea", "alice")[0].id == ep.id
        assert any(r["kind"] == "episode" for r in mem.export("alice"))
        mem.delete(ep.id, "alice")
        assert mem.list("alice") == []
