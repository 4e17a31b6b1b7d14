"""A fragment that adds one more thing to the statement before it ("Sulfa too.", "还有芒果。")
is read as that statement said of the thing; a fragment that names a person, or no thing,
is not; and what a person avoids keeps the word they said for it."""

from __future__ import annotations

import pytest

from memstrata.curate.ellipsis import added, said_again
from tests.unit.said import candidates


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("Sulfa too.", "sulfa"),
        ("Also latex.", "latex"),
        ("Oh and latex too", "latex"),
        ("And lisinopril.", "lisinopril"),
        ("Gluten too, I think.", "gluten"),
        ("Also Ozempic.", "Ozempic"),
        ("还有芒果。", "芒果"),
        ("对了，还有芒果", "芒果"),
        ("芒果也是。", "芒果"),
    ],
)
def test_a_fragment_names_the_thing_it_adds(text: str, thing: str) -> None:
    assert added(text) == thing


@pytest.mark.parametrize(
    "text",
    [
        "Me too.",
        "Mike too.",  # a name opens a fragment the same way
        "My wife too.",
        "Mom too.",
        "And then.",
        "我老公也是。",
        "妈妈也是。",
        "I'm allergic to sulfa too.",  # a statement of its own
        "",
    ],
)
def test_no_thing_added_by_a_person_or_by_a_whole_statement(text: str) -> None:
    assert added(text) is None


def test_said_again_replaces_only_the_thing_a_longer_value_names() -> None:
    assert said_again("I'm lactose intolerant.", "lactose intolerant", "gluten") == (
        "I'm gluten intolerant."
    )
    assert said_again("I'm allergic to penicillin.", "penicillin", "sulfa") == (
        "I'm allergic to sulfa."
    )
    assert said_again("I'm allergic to penicillin.", "amoxicillin", "sulfa") is None


def _states(*turns: str) -> set[tuple[str | None, str | None]]:
    return {(c.slot, c.value) for c in candidates(*turns)}


@pytest.mark.parametrize(
    ("turns", "state"),
    [
        (("I'm allergic to penicillin. Sulfa too.",), ("allergy:sulfa drugs", "sulfa")),
        (("I'm allergic to penicillin", "Oh and latex too"), ("allergy:latex", "latex")),
        (("I take metformin. And lisinopril.",), ("medication:lisinopril", "lisinopril")),
        (("我对花生过敏。还有芒果。",), ("allergy:mango", "芒果")),
        (("我对花生过敏", "对了，芒果也是"), ("allergy:mango", "芒果")),
        (("I don't eat pork. Beef too.",), ("avoids:beef", "beef")),
        (
            ("I'm lactose intolerant. Gluten too, I think.",),
            ("condition:gluten intolerance", "gluten intolerant"),
        ),
    ],
)
def test_a_fragment_sets_the_state_of_the_statement_before_it(
    turns: tuple[str, ...], state: tuple[str, str]
) -> None:
    assert state in _states(*turns)


def test_a_fragment_naming_a_person_sets_no_state_for_the_speaker() -> None:
    states = _states("I'm allergic to penicillin. Mike too.")
    assert states == {("allergy:penicillin", "penicillin")}


def test_a_fragment_reaches_back_only_to_the_speakers_recent_turns() -> None:
    far = ("I'm allergic to penicillin", "ok", "sure", "fine", "Latex too")
    assert not any(slot == "allergy:latex" for slot, _ in _states(*far))


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("I avoid dairy.", ("avoids:milk", "dairy")),
        ("i'm off dairy now", ("avoids:milk", "dairy")),
        ("I'm avoiding gluten.", ("avoids:wheat", "gluten")),
        ("stay away from peanuts", ("avoids:peanut", "peanuts")),
        ("I steer clear of nuts.", ("avoids:tree nut", "nuts")),
        ("and no sesame either", ("avoids:sesame", "sesame")),
        ("dairy's a no go", ("avoids:milk", "dairy")),
    ],
)
def test_what_a_person_avoids_keeps_their_word_for_it(text: str, state: tuple[str, str]) -> None:
    assert state in _states(text)


@pytest.mark.parametrize(
    "text", ["I'm off work today.", "That idea is a no go", "I'm off to Paris"]
)
def test_no_food_no_avoidance(text: str) -> None:
    assert not any((slot or "").startswith("avoids") for slot, _ in _states(text))


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("Husband's on warfarin.", ("medication:husband/blood thinners", "warfarin")),
        ("Hubby has a shellfish allergy.", ("allergy:husband/shellfish", "shellfish")),
        ("Husband is diabetic.", ("condition:husband/diabetes", "diabetic")),
    ],
)
def test_a_relation_opening_a_chat_sentence_without_my_is_theirs(
    text: str, state: tuple[str, str]
) -> None:
    assert state in _states(text)


def test_a_relation_word_inside_a_sentence_is_no_subject() -> None:
    assert not any(
        "husband/" in (slot or "") for slot, _ in _states("I told my friend husband is on call.")
    )


@pytest.mark.parametrize(
    ("text", "matter"),
    [("I can't walk far anymore.", "limited walking"), ("我现在走不远了。", "limited walking")],
)
def test_how_far_a_person_can_walk_is_a_health_matter(text: str, matter: str) -> None:
    from memstrata.curate.safety_net import health_matter

    assert health_matter(text) == matter
    assert any(c.category == "health" for c in candidates(text))
