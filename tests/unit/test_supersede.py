"""Contradictions supersede older facts; the old ones stay queryable by time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.api import Memory
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.curate.supersede import slot_of
from memstrata.model import FactFilter, HistoryOp, Scope, Turn

ALICE = Scope("alice")


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("Alice lives in Beijing", ("alice", "residence", "beijing")),
        ("Alice moved to Hangzhou.", ("alice", "residence", "hangzhou")),
        ("Alice works as a nurse", ("alice", "job", "a nurse")),
        ("Alice's favorite fruit is mango", ("alice", "favorite:fruit", "mango")),
        ("Alice is 34 years old", ("alice", "age", "34")),
        ("爱丽丝住在北京", ("爱丽丝", "residence", "北京")),
        ("爱丽丝现在在阿里巴巴工作", ("爱丽丝", "job", "阿里巴巴")),
        ("爱丽丝最喜欢的水果是芒果", ("爱丽丝", "favorite:水果", "芒果")),
    ],
)
def test_slots(text: str, slot: tuple[str, str, str]) -> None:
    found = slot_of(text)
    assert found is not None and (found.subject, found.key, found.value) == slot


@pytest.mark.parametrize("text", ["Alice likes tea", "Alice went to Paris", "爱丽丝喜欢喝茶"])
def test_no_slot(text: str) -> None:
    assert slot_of(text) is None


def test_a_contradiction_closes_the_old_fact(memory: Memory) -> None:
    march = datetime(2024, 3, 1, tzinfo=UTC)
    june = datetime(2024, 6, 1, tzinfo=UTC)
    old = memory.add_fact("Alice lives in Beijing", ALICE, category="personal", valid_from=march)
    tea = memory.add_fact("Alice likes tea", ALICE, category="preference", valid_from=march)
    new = memory.add_fact("Alice moved to Hangzhou", ALICE, category="personal", valid_from=june)
    closed = memory.get(old.id, ALICE)
    assert closed.valid_to == june and closed.superseded_by == new.id  # type: ignore[union-attr]
    assert memory.get(tea.id, ALICE).valid_to is None  # type: ignore[union-attr]
    current = memory.list(ALICE, "fact", fact_filter=FactFilter(current_only=True))
    assert {f.id for f in current} == {tea.id, new.id}
    in_april = memory.list(
        ALICE, "fact", fact_filter=FactFilter(valid_at=datetime(2024, 4, 1, tzinfo=UTC))
    )
    assert {f.id for f in in_april} == {old.id, tea.id}
    assert memory.history(old.id, ALICE)[-1].op == HistoryOp.SUPERSEDE
    same = memory.add_fact("Alice moved to Hangzhou.", ALICE, valid_from=june)
    assert memory.get(new.id, ALICE).valid_to is None  # type: ignore[union-attr]
    assert same.valid_to is None


def test_other_scopes_and_subjects_are_left_alone(memory: Memory) -> None:
    alice = memory.add_fact("Alice lives in Beijing", ALICE)
    memory.add_fact("Bob lives in Shanghai", ALICE)
    memory.add_fact("Alice lives in Paris", Scope("alice", "thread-2"))
    assert memory.get(alice.id, ALICE).valid_to is None  # type: ignore[union-attr]


def test_extraction_supersedes_too(memory: Memory) -> None:
    memory.remember(
        Turn("我住在北京。", speaker="林伟", time=datetime(2024, 1, 1, tzinfo=UTC)), ALICE
    )
    first = memory.extract(ALICE, extractor=RuleExtractor())
    memory.remember(
        Turn("我现在住在杭州。", speaker="林伟", time=datetime(2024, 6, 1, tzinfo=UTC)), ALICE
    )
    second = memory.extract(ALICE, extractor=RuleExtractor())
    assert [f.text for f in first.stored] == ["林伟住在北京。"]
    assert [f.text for f in second.superseded] == ["林伟住在北京。"]
    assert second.superseded[0].superseded_by == second.stored[0].id
