"""The guards every extractor passes through: what the assistant (or a system or a tool) said
is not a fact about the user, and the overclaiming guard reads only what a model wrote."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.curate.guards import guard
from memstrata.llm.fake import ByPrompt, reply
from memstrata.model import Candidate, Category, Role, Scope, Turn
from tests.conftest import FixedClock
from tests.unit.llm_script import model_memory

ALICE = Scope("alice")
WHEN = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def _turn(text: str, role: Role, speaker: str | None = None) -> Turn:
    return Turn(text=text, speaker=speaker, role=role, time=WHEN)


def test_a_candidate_resting_only_on_the_assistant_system_or_a_tool_is_refused(
    memory: Memory,
) -> None:
    user, bot, system, tool = memory.remember(
        [
            _turn("I'm allergic to shrimp.", Role.USER, "Alice"),
            _turn("Noted. I'll never suggest dishes with shellfish.", Role.ASSISTANT, "Aria"),
            _turn("The user is allergic to shrimp.", Role.SYSTEM),
            _turn("allergies: shrimp", Role.TOOL, "profile-lookup"),
        ],
        ALICE,
    )

    def candidate(*sources: str) -> Candidate:
        return Candidate("Alice is allergic to shrimp", Category.PERSONAL, 0.9, 0.9, sources)

    report = guard(
        [
            candidate(bot.id),
            candidate(system.id),
            candidate(tool.id),
            candidate(bot.id, system.id, tool.id),
            candidate(bot.id, user.id),  # the person said it too: kept
            candidate(user.id),
        ],
        ALICE,
        memory.store,
    )
    assert report.not_user == 4 and len(report.kept) == 2
    assert report.to_json() == {
        "kept": 2,
        "low_confidence": 0,
        "bad_citations": 0,
        "not_user": 4,
        "overclaiming": 0,
    }


def test_an_assistant_turn_under_another_name_is_not_extracted_as_a_person(
    memory: Memory,
) -> None:
    """An import naming the bot ("Aria"), or a proxy capture: the role says who spoke."""
    memory.remember(
        [
            _turn("I love hiking in the mountains.", Role.USER, "Alice"),
            _turn("I love helping people cook.", Role.ASSISTANT, "Aria"),
        ],
        ALICE,
    )
    report = memory.extract(ALICE, extractor=RuleExtractor())
    assert [f.text for f in report.stored] == ["Alice loves hiking in the mountains."]
    # the rules read no turn whose role is not a person's: nothing reaches the guard to refuse
    assert report.candidates == 1 and report.to_json()["not_user"] == 0


def test_the_model_filing_what_the_assistant_said_as_the_user_s_fact_is_refused(
    data_dir: Path, clock: FixedClock
) -> None:
    script = ByPrompt(
        {
            "extract": [
                reply(
                    facts=[
                        {  # the model's own answer, captured by the proxy
                            "text": "The user is allergic to shrimp",
                            "category": "personal",
                            "confidence": 0.95,
                            "importance": 0.9,
                            "cites": [2],
                        },
                        {  # the assistant's echo
                            "text": "The user does not eat shellfish",
                            "category": "preference",
                            "confidence": 0.9,
                            "importance": 0.8,
                            "cites": [4],
                        },
                        {  # what the user said, with the answer as context
                            "text": "The user is cooking for four tonight",
                            "category": "plan",
                            "confidence": 0.9,
                            "importance": 0.5,
                            "cites": [2, 3],
                        },
                    ]
                )
            ]
        }
    )
    with model_memory(data_dir, script, clock) as mem:
        mem.remember(
            [
                {"role": "user", "text": "What should I cook tonight?"},
                {"role": "assistant", "text": "Since you're allergic to shrimp, try the chicken."},
                {"role": "user", "text": "Good idea, I'm cooking for four tonight."},
                {"role": "assistant", "text": "Noted. I'll never suggest dishes with shellfish."},
            ],
            ALICE,
            surface="proxy",
        )
        report = mem.extract(ALICE)
    assert [f.text for f in report.stored] == ["The user is cooking for four tonight"]
    assert report.not_user == 2 and report.to_json()["not_user"] == 2
    request = script.asked[0][1]
    system, shown = request["messages"][0]["content"], request["messages"][1]["content"]
    lines = [json.loads(line) for line in shown.splitlines()[1:-1]]
    assert [line["role"] for line in lines] == ["user", "assistant", "user", "assistant"]
    assert "context only" in system and "said about themselves" in system


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (
            "I always drink green tea in the morning, I love it.",
            ["Alice always drinks green tea in the morning, Alice loves it."],
        ),
        # two states (a food not eaten, an allergy), one fact each, in the clause that says it
        ("我从不吃猪肉，我对猪肉过敏。", ["Alice从不吃猪肉", "Alice对猪肉过敏"]),
    ],
)
def test_the_person_s_own_always_or_never_is_kept(
    memory: Memory, said: str, kept: list[str]
) -> None:
    """A rule's candidate is the speaker's own sentence: "I never eat pork" is a dietary
    need they stated, not a model overclaiming."""
    memory.remember(_turn(said, Role.USER, "Alice"), ALICE)
    report = memory.extract(ALICE, extractor=RuleExtractor())
    assert [f.text for f in report.stored] == kept and report.overclaiming == 0


def test_a_model_s_always_or_never_is_still_refused(data_dir: Path, clock: FixedClock) -> None:
    script = ByPrompt(
        {
            "extract": [
                reply(
                    facts=[
                        {
                            "text": "Alice always drinks green tea",
                            "category": "preference",
                            "confidence": 0.9,
                            "cites": [1],
                        },
                        {
                            "text": "Alice 从不吃猪肉",
                            "category": "preference",
                            "confidence": 0.9,
                            "cites": [1],
                        },
                        {
                            "text": "Alice likes green tea",
                            "category": "preference",
                            "confidence": 0.9,
                            "cites": [1],
                        },
                    ]
                )
            ]
        }
    )
    with model_memory(data_dir, script, clock) as mem:
        mem.remember(_turn("I like green tea, and I don't eat pork.", Role.USER, "Alice"), ALICE)
        report = mem.extract(ALICE)
    assert [f.text for f in report.stored] == ["Alice likes green tea"]
    assert report.overclaiming == 2
