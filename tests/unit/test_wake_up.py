"""wake_up: L0 + L1 within a budget, trimmed by priority, saying what was left out."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memstrata.api import Memory
from memstrata.errors import InvalidInputError
from memstrata.model import Category, Profile, Scope, Slot
from memstrata.tokens import HeuristicTokenCounter
from tests.conftest import FixedClock

ALICE = Scope("alice")


def _seed(memory: Memory, clock: FixedClock, facts: int = 30) -> None:
    memory.set_identity("I am Alice's assistant. 我用中文和英文回答。", ALICE)
    ep = memory.remember("My name is Alice and I prefer short answers", ALICE)[0]
    memory.put_profile(
        Profile(
            fields={"name": Slot("Alice", (ep.id,)), "role": Slot("backend engineer", (ep.id,))},
            preferences={"verbosity": Slot("short answers", (ep.id,))},
        ),
        ALICE,
    )
    for i in range(facts):
        memory.add_fact(
            f"Alice fact number {i} about her project work and plans",
            ALICE,
            category=Category.EVENT,
            importance=0.1 + 0.8 * (i % 2),
            topic="work" if i % 3 else "life",
            valid_from=clock.now() - timedelta(days=i),
        )


def test_everything_fits_in_a_large_budget(memory: Memory, clock: FixedClock) -> None:
    _seed(memory, clock, facts=5)
    result = memory.wake_up(ALICE, budget=2000)
    assert not result.trimmed and len(result.facts_included) == 5
    text = result.text
    assert text.index("## Identity") < text.index("## Profile") < text.index("## Preferences")
    assert "- name: Alice" in text and "- verbosity: short answers" in text
    assert "### work" in text and "### life" in text and "not shown" not in text


def test_trimming_order_and_budget(memory: Memory, clock: FixedClock) -> None:
    _seed(memory, clock, facts=30)
    result = memory.wake_up(ALICE, budget=200)
    assert result.tokens <= 200
    assert result.trimmed and result.left_out["facts"] > 0
    assert result.left_out.get("profile", 0) == 0  # the profile goes in before any fact
    assert "not shown within 200 tokens" in result.text and "recall(topic)" in result.text
    facts = {f.id: f for f in memory.list(ALICE, "fact", limit=100)}
    kept = [facts[i] for i in result.facts_included]
    assert kept and all(f.importance == pytest.approx(0.9) for f in kept)  # important first


def test_recency_breaks_ties(memory: Memory, clock: FixedClock) -> None:
    old = memory.add_fact(
        "Alice liked jazz", ALICE, importance=0.8, valid_from=clock.now() - timedelta(days=400)
    )
    new = memory.add_fact(
        "Alice likes techno", ALICE, importance=0.8, valid_from=clock.now() - timedelta(days=1)
    )
    result = memory.wake_up(ALICE, budget=100)
    assert result.facts_included[0] == new.id
    assert old.id in result.facts_included or result.left_out["facts"] == 1


def test_a_thread_without_memory_falls_back_to_its_user(memory: Memory, clock: FixedClock) -> None:
    _seed(memory, clock, facts=2)
    thread = Scope("alice", "t9")
    assert memory.wake_up(thread).scope == ALICE
    assert memory.wake_up(thread, fall_back_to_user=False).text == ""
    memory.add_fact("Thread-only fact", thread)
    own = memory.wake_up(thread)
    assert own.scope == thread and "Thread-only fact" in own.text


def test_budget_floor(memory: Memory) -> None:
    with pytest.raises(InvalidInputError, match="at least"):
        memory.wake_up(ALICE, budget=10)


def test_counter_matches_text(memory: Memory, clock: FixedClock) -> None:
    _seed(memory, clock, facts=3)
    result = memory.wake_up(ALICE)
    assert result.tokens == HeuristicTokenCounter().count(result.text)


def test_the_fact_cache_follows_writes(memory: Memory, clock: FixedClock) -> None:
    first = memory.add_fact("Alice likes tea", ALICE, importance=0.9)
    assert memory.wake_up(ALICE).facts_included == [first.id]
    second = memory.add_fact("Alice likes coffee too", ALICE, importance=0.95)
    assert set(memory.wake_up(ALICE).facts_included) == {first.id, second.id}
    memory.delete(first.id, ALICE)
    assert memory.wake_up(ALICE).facts_included == [second.id]
