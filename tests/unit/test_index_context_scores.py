"""What the index gives context assembly: curated bullets one by one with their own scores,
and the score a text outside the index (a profile slot) would have as one more turn."""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.index.config import RankingConfig
from memstrata.index.query import build_query
from memstrata.index.ranking import Ranker
from memstrata.index.scope_index import UserIndex
from memstrata.model import Granularity, Scope, SearchFilter, Turn
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice")
TURNS = [
    "I adopted a puppy named Max in May",
    "We went hiking in the hills on Sunday",
    "我对虾过敏，吃了会起疹子",
    "The new job at the bank starts in June",
    "My sister Mei loves hotpot",
    "I am training for the half marathon",
]


@pytest.fixture(params=["zscore", "minmax", "rrf"])
def mem(data_dir: Path, clock: FixedClock, request: pytest.FixtureRequest) -> Iterator[Memory]:
    with Memory.open(
        settings=load_settings(data_dir=data_dir),
        clock=clock,
        embedder=HashingEmbedder(dim=128),
        ranking=RankingConfig(fusion=request.param),
    ) as m:
        start = datetime(2024, 3, 1, tzinfo=UTC)
        m.remember(  # one session each: every view of a turn is the turn alone
            [Turn(text=t, time=start, session_id=f"s{i}") for i, t in enumerate(TURNS)], ALICE
        )
        m.add_fact("Alice is planning a trip to Kyoto in April", ALICE, topic="travel")
        m.add_fact("Alice booked a ryokan near the Kyoto station", ALICE, topic="travel")
        m.add_fact("Alice 在学 Rust，觉得借用检查器很难", ALICE, topic="编程")
        m.consolidate(ALICE)
        yield m


def _index(mem: Memory) -> UserIndex:
    mem.search("warm up", ALICE)  # catches the index up
    return mem.indexes.index(ALICE.user)


def test_passages_are_bullets_one_by_one(mem: Memory) -> None:
    index = _index(mem)
    ranker = Ranker(index)
    plan = build_query("Kyoto ryokan", mem.embedder, index.config)
    grouped = ranker.search(plan, ALICE, k=5, granularity=Granularity.TOPIC, filters=SearchFilter())
    single = ranker.search(
        plan, ALICE, k=50, granularity=Granularity.TOPIC, filters=SearchFilter(), passages=True
    )
    travel = next(h for h in grouped if h.topic == "travel")
    assert single[0].id in travel.bullets and single[0].topic == "travel"
    assert single[0].session_id == travel.id  # the bullet's document
    assert [h.score for h in single] == sorted((h.score for h in single), reverse=True)
    doc, _ = mem.doc("travel", ALICE)
    assert {h.id for h in single if h.topic == "travel"} == {
        b.id for s in doc.sections for b in s.bullets
    }


def test_a_text_scores_as_one_more_turn(mem: Memory) -> None:
    index = _index(mem)
    ranker = Ranker(index)
    query = "when did I adopt the puppy Max?"
    plan = build_query(query, mem.embedder, index.config)
    hits = mem.search(query, ALICE, k=10)
    puppy = next(h for h in hits if "puppy" in h.text)
    scored = ranker.score_texts(
        plan, ALICE, [puppy.text, "favourite colour: blue", "过敏: 虾"], Granularity.TURN
    )
    assert scored is not None
    same, unrelated, chinese = scored
    assert same > unrelated and same > chinese
    if index.config.fusion == "zscore":
        assert same == pytest.approx(puppy.score, abs=0.35)  # the population has one more
        # as one more of n + 1 entries its z-scores, like any entry's, are at most sqrt(n)
        assert same <= math.sqrt(len(TURNS)) + 1e-6
    else:
        assert same == pytest.approx(puppy.score, abs=0.05)
    zh = build_query("她对什么过敏？", mem.embedder, index.config)
    scored = ranker.score_texts(zh, ALICE, ["过敏: 虾", "colour: blue"], Granularity.TURN)
    assert scored is not None and scored[0] > scored[1]
    assert ranker.score_texts(plan, ALICE, [], Granularity.TURN) == []
    no_turns = Scope("alice", "a-thread-with-no-turns")
    assert ranker.score_texts(plan, no_turns, ["x"], Granularity.TURN) is None
