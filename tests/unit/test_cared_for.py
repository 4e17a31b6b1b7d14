"""The health of the people a user looks after is read, kept as theirs, and never the user's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata.api import Memory
from memstrata.curate.cared_for import cared_for, people_of
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.curate.frames import Frame
from memstrata.model import Episode, FactFilter, Role, Scope, Turn

ME = Scope("me")
DAY = datetime(2026, 1, 13, tzinfo=UTC)


def _read(*turns: str) -> list[tuple[str | None, str]]:
    episodes = [
        Episode(f"ep_{i}", ME, "chat", "s1", "user", Role.USER, text, DAY)
        for i, text in enumerate(turns)
    ]
    return [(c.slot, c.text) for c in RuleExtractor().extract(episodes).candidates]


@pytest.mark.parametrize(
    ("turns", "expected"),
    [
        (
            ["my daughter Duoduo is allergic to eggs"],
            [
                ("child:Duoduo", "The user's daughter Duoduo is allergic to eggs"),
                ("allergy:duoduo/egg", "The user's daughter Duoduo is allergic to eggs"),
            ],
        ),
        (
            # a long carer's turn: a relative clause, then "he" for the one man it names
            [
                "I look after my husband Ron who has Parkinson's, and he has co-careldopa at 7, "
                "11, 3 and 7."
            ],
            [
                ("partner", "The user looks after their husband Ron who has Parkinson's"),
                ("condition:ron/parkinson's disease", "The user's husband Ron has Parkinson's"),
                ("medication:ron/levodopa", "The user's husband Ron takes co-careldopa"),
            ],
        ),
        (
            # a name given in one turn is the person in the next
            ["我老公老周有慢阻肺", "老周在用思力华"],
            [
                ("partner", "用户老公老周有慢阻肺"),
                ("condition:老周/copd", "用户的老公老周有慢阻肺"),
                ("medication:老周/tiotropium", "用户的老公老周在用思力华"),
            ],
        ),
        (["女儿对鸡蛋过敏"], [("allergy:女儿/egg", "用户的女儿对鸡蛋过敏")]),
    ],
)
def test_the_needs_of_the_people_in_the_users_care_are_theirs(
    turns: list[str], expected: list[tuple[str, str]]
) -> None:
    assert _read(*turns) == expected


def test_what_is_not_a_need_of_theirs_is_left_to_the_other_readers() -> None:
    """ "My mom is a nurse" is no need of hers, nor a job of the user's; "he" with two men
    named in the turn is nobody in particular."""
    assert cared_for("my mom is a nurse", {}) is not None  # a person, read as "I am a nurse"
    assert [s for s, _ in _read("my mom is a nurse")] == [None]  # no job, no need: a plain fact
    two = "my husband Ron and my son Ethan came, he has asthma"
    assert cared_for("he has asthma", {}, two) is None
    read = _read(two)
    assert [s for s, _ in read] == ["partner", "child:Ethan", None]
    # whose asthma is not said: it is kept in the user's words, a health note, no one's slot
    assert read[2][1] == "The user's husband Ron and their son Ethan came, he has asthma"


def test_people_are_known_by_the_names_the_user_gave_them() -> None:
    frames = [Frame("partner", "husband Ron"), Frame("child", "女儿朵朵", "朵朵")]
    assert people_of(frames) == {"Ron": "husband Ron", "朵朵": "女儿朵朵"}
    assert people_of([Frame("partner", "husband")]) == {}  # no name given


def test_the_users_only_allergy_never_replaces_a_childs(memory: Memory) -> None:
    said = [
        ["My daughter Duoduo is allergic to eggs.", "I'm allergic to shrimp and crab."],
        ["Actually I'm only allergic to shrimp."],
    ]
    for n, turns in enumerate(said):
        memory.remember(
            [
                Turn(text=t, speaker="user", role=Role.USER, time=DAY + timedelta(days=30 * n))
                for t in turns
            ],
            ME,
            session_id=f"s{n}",
        )
    memory.extract(ME)
    current = sorted(
        f.slot or ""
        for f in memory.store.iter_facts(ME, FactFilter(current_only=True, slot_kind="allergy"))
    )
    assert current == ["allergy:duoduo/egg", "allergy:shrimp"]
    woken = memory.wake_up(ME).text
    assert "Duoduo is allergic to eggs" in woken and "only allergic to shrimp" in woken


def _health(*turns: str) -> list[str | None]:
    return [slot for slot, _ in _read(*turns) if slot and slot.split(":")[0] in _HEALTH]


_HEALTH = frozenset(
    {"allergy", "condition", "medication", "accessibility", "avoids", "restriction"}
)


def test_she_of_a_later_turn_is_the_person_spoken_of_last() -> None:
    slots = _health(
        "I've been looking after my mum Joan since Dad died last spring. She has dementia.",
        "She's on donepezil, 10mg at night.",
        "One thing I always tell the carers: she's allergic to penicillin, it gives her a rash.",
        "The GP also put her on a blood thinner, apixaban, after a little stroke.",
        "She uses a zimmer frame indoors and a wheelchair if we go anywhere further.",
    )
    assert slots == [
        "condition:joan/dementia",
        "medication:joan/donepezil",
        "allergy:joan/penicillin",
        "medication:joan/blood thinners",
        "accessibility:joan/mobility aid",
    ]


@pytest.mark.parametrize(
    ("said", "slot"),
    [
        ("Mum has dementia now, she can't be left alone.", "condition:mum/dementia"),
        ("Dad's on warfarin so he bruises easily.", "medication:dad/blood thinners"),
        (
            "My daughter Lily is allergic to peanuts, we carry an EpiPen for her.",
            "allergy:lily/peanut",
        ),
        ("Oh and our Ben, my grandson, he's got a nut allergy.", "allergy:grandson/tree nut"),
        # a Chinese clause without its subject goes on with the person before it
        ("我妈有糖尿病，在打胰岛素。", "medication:妈/insulin"),
        ("婆婆坐轮椅，出门不方便。", "accessibility:婆婆/wheelchair"),
        ("小雨对花生过敏，一点都不能吃。", "allergy:小雨/peanut"),
    ],
)
def test_the_needs_of_a_person_called_by_kin_by_name_or_by_the_clause_before(
    said: str, slot: str
) -> None:
    slots = _health(said)
    assert slot in slots
    assert not [s for s in slots if "/" not in s]  # none of them is the speaker's own


def test_a_death_in_a_clause_after_a_person_is_not_theirs() -> None:
    from tests.unit.said import candidates

    [joan] = [c for c in candidates("I look after my mum Joan since Dad died.") if c.slot]
    assert (joan.slot, joan.ended) == ("family:Joan", None)
    [dad] = [c for c in candidates("My dad Jim passed away last year.") if c.slot]
    assert dad.ended is not None
