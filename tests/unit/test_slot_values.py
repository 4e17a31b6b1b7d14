"""Slot values are clean noun phrases: no determiner, possessive or appraisal, no clause tail,
the favourite's kind when the value says it, near-duplicates one value (English and Chinese)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.curate.essentials import select
from memstrata.curate.slots import SlotFill, clean_value, same_thing, slots_in
from memstrata.model import Category, Episode, Fact, Role, Scope
from memstrata.tokens import HeuristicTokenCounter


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [  # facts as extraction writes them from LoCoMo dev turns
        (
            "Maria's favorite is the amazing banana split sundae - Maria enjoys it after a day.",
            "Maria",
            SlotFill("favorite", "banana split sundae"),
        ),
        (
            "Joanna's favorite dairy-free treat is this amazing chocolate raspberry tart.",
            "Joanna",
            SlotFill("favorite dairy-free treat", "chocolate raspberry tart"),
        ),
        (
            "Tim loves playing songs on the piano, but their favorite one to jam to is a theme "
            "from a movie Tim really enjoys.",
            "Tim",
            SlotFill("favorite to jam to", "theme from a movie"),
        ),
        (
            "Blue's Caroline's fave, it makes Caroline feel relaxed.",
            "Caroline",
            SlotFill("favorite color", "blue"),
        ),
        ("Harry Potter is Tim's favorite book.", "Tim", SlotFill("favorite book", "Harry Potter")),
        ("The Hobbit is John's favorite too.", "John", SlotFill("favorite", "The Hobbit")),
        (
            "Drawing flowers is one of Caroline's faves.",
            "Caroline",
            SlotFill("favorite", "drawing flowers"),
        ),
        ("Maria got a puppy two weeks ago!", "Maria", SlotFill("pets", "puppy")),
        ("Nate has two turtles.", "Nate", SlotFill("pets", "two turtles")),  # a number stays
        (
            "Melanie plays the acoustic guitar.",
            "Melanie",
            SlotFill("instruments", "acoustic guitar"),
        ),
        # Chinese, hand-written
        ("小红养了一只可爱的猫", "小红", SlotFill("pets", "猫")),
        ("小红最喜欢的甜点是那个超棒的巧克力蛋糕", "小红", SlotFill("favorite 甜点", "巧克力蛋糕")),
        ("小红有两个孩子", "小红", SlotFill("children", "两个孩子")),
    ],
)
def test_a_value_is_a_clean_noun_phrase(text: str, name: str, expected: SlotFill) -> None:
    assert expected in slots_in(text, name)


def test_a_favourite_takes_its_kind_from_a_colour_in_either_language() -> None:
    assert clean_value(SlotFill("favorite", "Blue"), "Ann") == SlotFill("favorite color", "blue")
    assert clean_value(SlotFill("favorite", "蓝色"), "小红") == SlotFill("favorite 颜色", "蓝色")
    assert clean_value(SlotFill("favorite", "Boston"), "Ann") == SlotFill("favorite", "Boston")


def test_the_persons_name_ends_a_value() -> None:
    cut = clean_value(SlotFill("favorite", "a song Ann"), "Ann")
    assert cut == SlotFill("favorite", "song")
    assert clean_value(SlotFill("employer", "Ann's bakery"), "Ann").value == "bakery"
    assert clean_value(SlotFill("favorite", "the amazing"), "Ann").value == "amazing"  # not empty


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("pup", "puppy", True),
        ("dog", "dogs", True),
        ("guitar", "acoustic guitar", True),
        ("kids", "son", False),
        ("cockroaches", "most reptiles and animals with fur", False),
        ("cat", "catalogue", False),
        ("猫", "小猫", True),
        ("猫", "狗", False),
    ],
)
def test_near_duplicates_are_told(a: str, b: str, same: bool) -> None:
    assert same_thing(a, b) is same and same_thing(b, a) is same


def _fact(i: int, text: str, source: str) -> Fact:
    when = datetime(2023, 5, 1 + i, tzinfo=UTC)
    return Fact(
        f"fa_{i:02d}",
        Scope("u"),
        text,
        Category.PERSONAL,
        confidence=0.9,
        importance=0.5,
        topic=None,
        sources=(source,),
        valid_from=when,
        valid_to=None,
        superseded_by=None,
        created_at=when,
        updated_at=when,
    )


def _turn(i: int, speaker: str) -> Episode:
    when = datetime(2023, 5, 1 + i, tzinfo=UTC)
    return Episode(f"ep_{i:02d}", Scope("u"), "chat", f"s{i}", speaker, Role.USER, "-", when)


@pytest.mark.parametrize(
    ("name", "texts", "slot"),
    [
        (
            "Maria",
            ["Maria just adopted this cute pup from a shelter.", "Maria got a puppy!"],
            "pets: puppy",  # the newest wording
        ),
        ("小红", ["小红养了一只狗", "小红的狗狗叫豆豆"], "pets: 狗"),
    ],
)
def test_near_duplicate_values_of_a_slot_are_one(name: str, texts: list[str], slot: str) -> None:
    turns = [_turn(i, name) for i in range(len(texts))]
    facts = [_fact(i, text, turns[i].id) for i, text in enumerate(texts)]
    chosen = select(facts, turns, counter=HeuristicTokenCounter(), user=name)
    [entry] = chosen.people[name].slots["pets"]
    assert entry.text == slot and set(entry.facts) == {f.id for f in facts}
