"""States of a life said the way English chats say them: a routine on a part of a weekday, a
child born by name (whose birth ends the pregnancy), a home settled in, a role got for
someone, a grade taught."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.api import Memory
from memstrata.model import Role, Scope, Turn
from tests.unit.said import candidates


def _read(text: str) -> list[tuple[str | None, str | None, str | None]]:
    return [(c.slot, c.value, c.ended) for c in candidates(text) if c.slot]


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("I swim on Saturday mornings.", "routine:swimming"),
        ("I swim laps at the rec center Saturday mornings instead.", "routine:swimming"),
        ("I play tennis Sunday afternoons with my sister.", "routine:tennis"),
    ],
)
def test_a_part_of_a_weekday_that_recurs_is_a_routine(text: str, slot: str) -> None:
    assert slot in [s for s, _, _ in _read(text)]


def test_a_child_born_by_name_is_the_speakers() -> None:
    assert ("child:Nora", "Nora", None) in _read("She's here! Nora was born July 4th, 7 lbs 2 oz.")
    assert not [s for s, _, _ in _read("My niece Lily was born yesterday.") if s]


def test_a_pregnancy_said_in_weeks_is_a_state_a_birth_ends(memory: Memory) -> None:
    scope = Scope("kate")
    for n, (text, day) in enumerate(
        [
            ("Also I'm 14 weeks pregnant so I'm off coffee for now.", datetime(2026, 1, 12)),
            ("She's here! Nora was born July 4th.", datetime(2026, 7, 20)),
        ]
    ):
        memory.remember(
            [Turn(text, speaker="user", role=Role.USER, time=day.replace(tzinfo=UTC))],
            scope,
            session_id=f"s{n}",
        )
    memory.extract(scope)
    memory.consolidate(scope)
    text = memory.wake_up(scope).text
    assert "pregnant" not in text  # the birth closed it
    assert [
        f.fact.value
        for f in memory.facts(scope, valid="all")
        if f.fact.slot == ("condition:pregnancy")
    ] == ["pregnant"]  # kept, closed
    assert "Nora" in text


def test_a_home_settled_in_a_role_got_for_someone_and_a_grade_taught() -> None:
    assert ("residence", "Boulder", None) in _read("We're all settled in Boulder now.")
    got = _read("I got the instructional coach job for the district!")
    assert ("job", "instructional coach", None) in got
    assert ("employer", "instructional coach", None) not in got
    taught = _read("I teach 3rd grade at Lincoln Elementary.")
    assert ("job", "3rd grade teacher", None) in taught


def test_a_relation_said_then_with_its_name_is_one_value(memory: Memory) -> None:
    from memstrata.curate.slots import same_thing

    assert same_thing("son", "son Leo") and same_thing("wife Meera", "wife")
    assert not same_thing("son Leo", "son Max") and not same_thing("cat", "cat Biscuit")
    scope = Scope("kids")
    for n, text in enumerate(["My son is 5 and has a peanut allergy.", "My son Leo is 5."]):
        memory.remember(
            [Turn(text, speaker="user", role=Role.USER, time=datetime(2026, 1, 1 + n, tzinfo=UTC))],
            scope,
            session_id=f"s{n}",
        )
    memory.extract(scope)
    memory.consolidate(scope)
    [children] = [line for line in memory.wake_up(scope).text.splitlines() if "children" in line]
    assert children == "- children: son Leo"
