"""A run-on turn (a pasted page, a chat written as one endless sentence) is read in time linear
in its length: its clauses are split once for all the states it says, a state it repeats is one
state, and a clause is read beside the latest states only. Nothing here times anything: the
tests count the work done and check what comes out."""

from __future__ import annotations

import pytest

from memstrata.curate import extract_rules, lexicon
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.model import Episode
from tests.unit.said import user_turns


def _turn(text: str) -> Episode:
    return user_turns(text)[0]


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        (
            "I'm allergic to peanuts and I take loratadine, ",
            [
                ("allergy:peanut", "The user is allergic to peanuts"),
                ("medication:loratadine", "The user takes loratadine"),
            ],
        ),
        (
            "我对花生过敏，我在吃氯雷他定，",
            [("allergy:peanut", "用户对花生过敏"), ("medication:loratadine", "用户在吃氯雷他定")],
        ),
        (
            "My husband Tom is allergic to peanuts and ",
            [
                ("partner", "The user's partner: husband Tom"),
                ("allergy:tom/peanut", "The user's husband Tom is allergic to peanuts"),
            ],
        ),
    ],
)
def test_a_state_repeated_through_a_run_on_turn_is_one_state(
    unit: str, expected: list[tuple[str, str]]
) -> None:
    said_once = unit.rstrip(" ,，").removesuffix(" and")
    once = RuleExtractor().extract([_turn(said_once)]).candidates
    many = RuleExtractor().extract([_turn(unit * 300)]).candidates
    assert [(c.slot, c.text) for c in many] == expected
    assert {c.slot for c in once} == {slot for slot, _ in expected}


def test_the_clauses_of_a_sentence_are_split_once_for_all_its_states(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[str] = []
    real = extract_rules._Clauses.__init__

    def counted(self: extract_rules._Clauses, sentence: str, *, alone: bool) -> None:
        made.append(sentence)
        real(self, sentence, alone=alone)

    monkeypatch.setattr(extract_rules._Clauses, "__init__", counted)
    text = (
        "I'm allergic to peanuts, I take loratadine every day, I live in Berlin and I work at "
        "Siemens as an engineer"
    )
    found = RuleExtractor().extract([_turn(text)]).candidates
    assert {c.slot for c in found} >= {
        "allergy:peanut",
        "medication:loratadine",
        "residence",
        "employer",
    }
    assert len(made) == 1  # one split of the one sentence, not one per state


def test_an_allergy_list_goes_on_across_commas_only_while_it_names_foods() -> None:
    def slots(text: str) -> list[str | None]:
        return [c.slot for c in RuleExtractor().extract([_turn(text)]).candidates]

    assert slots("I'm allergic to peanuts, shrimp and sesame") == ["allergy:peanut+sesame+shrimp"]
    assert slots("I'm allergic to peanuts, shrimp, and sesame, which is a pain") == [
        "allergy:peanut+sesame+shrimp"
    ]
    assert slots("I'm allergic to peanuts, which is annoying") == ["allergy:peanut"]


def test_a_clause_is_read_beside_the_latest_states_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from memstrata.curate import frame_reader as frames

    seen: list[int] = []
    real = frames.frames_in

    def counted(clause: str, earlier=(), *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(len(earlier))
        return real(clause, earlier, *args, **kwargs)

    monkeypatch.setattr(extract_rules, "frames_in", counted)
    RuleExtractor().extract([_turn("我对花生过敏，我在吃氯雷他定，" * 200)])
    assert seen and max(seen) <= 2 * frames.EARLIER
    assert max(seen) >= frames.EARLIER  # the turn's earlier states are still read


def test_a_table_is_read_longest_word_first_whatever_was_asked_before() -> None:
    assert lexicon.canonical(lexicon.DRINKS, "green tea") == lexicon.canonical(
        lexicon.DRINKS, "I love green tea"
    )
    first = lexicon.canonical(lexicon.FOODS, "虾和花生")
    assert lexicon.canonical(lexicon.FOODS, "虾和花生") == first
    assert len(first) == 2
