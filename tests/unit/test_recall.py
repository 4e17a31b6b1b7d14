"""recall(topic): the topic's documents with citations and its facts, within a budget."""

from __future__ import annotations

import pytest

from memstrata.api import Memory
from memstrata.errors import InvalidInputError
from memstrata.model import Category, Scope

ALICE = Scope("alice")


def _seed(memory: Memory) -> None:
    tea, trip = memory.remember(["I love green tea", "We flew to Kyoto in April"], ALICE)
    memory.add_fact(
        "Alice loves green tea",
        ALICE,
        category=Category.PREFERENCE,
        sources=[tea.id],
        topic="drinks",
    )
    memory.add_fact(
        "Alice flew to Kyoto in April",
        ALICE,
        category=Category.EVENT,
        sources=[trip.id],
        topic="travel",
    )
    memory.consolidate(ALICE)
    memory.add_fact(
        "Alice wants to see Osaka next",
        ALICE,
        category=Category.PLAN,
        sources=[trip.id],
        topic="travel",
        importance=0.9,
    )  # not consolidated yet


def test_recall_shows_the_document_then_newer_facts(memory: Memory) -> None:
    _seed(memory)
    result = memory.recall("Travel", ALICE)
    assert result.documents == ["travel"] and len(result.facts_included) == 1
    assert "# travel" in result.text and "Alice flew to Kyoto in April [^1]" in result.text
    assert "## Facts about Travel" in result.text and "Osaka" in result.text
    assert "green tea" not in result.text
    assert result.tokens <= result.budget


def test_recall_is_bounded_and_says_so(memory: Memory) -> None:
    _seed(memory)
    for i in range(40):
        memory.add_fact(
            f"Alice has travel note number {i} about trains and hotels", ALICE, topic="travel"
        )
    result = memory.recall("travel", ALICE, budget=150)
    assert result.tokens <= 150 and result.left_out > 0
    assert "not shown within 150 tokens" in result.text


def test_unknown_topics_and_bad_input(memory: Memory) -> None:
    _seed(memory)
    assert memory.recall("astronomy", ALICE).text == "(nothing is remembered about astronomy)"
    with pytest.raises(InvalidInputError):
        memory.recall("  ", ALICE)
