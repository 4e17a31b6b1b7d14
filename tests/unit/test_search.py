"""Search: indexes in step with writes and deletes (in this process and others), Chinese,
filters, granularity, score components. Uses the hashing embedder so it is fast and hermetic."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import InvalidInputError
from memstrata.model import Category, Granularity, Scope, SearchFilter, Turn
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice")


def _open(data_dir: Path, clock: FixedClock) -> Memory:
    return Memory.open(
        settings=load_settings(data_dir=data_dir), clock=clock, embedder=HashingEmbedder(dim=128)
    )


@pytest.fixture
def mem(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    with _open(data_dir, clock) as m:
        yield m


def _ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.id for h in hits]


def test_new_turns_are_found_and_deleted_ones_are_not(mem: Memory) -> None:
    a = mem.remember("I adopted a golden retriever puppy named Max", ALICE, session_id="s1")[0]
    mem.remember("The quarterly revenue report is due Friday", ALICE, session_id="s2")
    assert _ids(mem.search("puppy Max", ALICE, k=1)) == [a.id]
    b = mem.remember("Max the puppy learned to sit today", ALICE, session_id="s3")[0]
    assert set(_ids(mem.search("puppy Max", ALICE, k=2))) == {a.id, b.id}
    mem.delete(a.id, ALICE)
    hits = mem.search("puppy Max", ALICE, k=5)
    assert a.id not in _ids(hits) and _ids(hits)[0] == b.id


def test_chinese_queries_find_chinese_turns(mem: Memory) -> None:
    target = mem.remember("周末我去梧桐山徒步，风景很美。", ALICE, session_id="s1")[0]
    mem.remember("下周要交季度财务报告。", ALICE, session_id="s2")
    mem.remember("I had dim sum with my parents.", ALICE, session_id="s3")
    assert _ids(mem.search("梧桐山徒步", ALICE, k=1)) == [target.id]
    assert _ids(mem.search("上次去哪里爬山徒步了？", ALICE, k=1)) == [target.id]
    mixed = mem.remember("Deploy 到 production 之前要跑 migration", ALICE, session_id="s4")[0]
    assert _ids(mem.search("production migration 部署", ALICE, k=1)) == [mixed.id]


def test_writes_from_another_process_are_seen(data_dir: Path, clock: FixedClock) -> None:
    with _open(data_dir, clock) as first, _open(data_dir, clock) as second:
        first.remember("seed turn about gardening", ALICE)
        assert first.search("gardening", ALICE, k=1)  # builds the index
        added = second.remember("tomatoes need full sun", ALICE, session_id="x")[0]
        assert _ids(first.search("tomatoes sun", ALICE, k=1)) == [added.id]
        second.delete(added.id, ALICE)
        assert added.id not in _ids(first.search("tomatoes sun", ALICE, k=5))
        assert first.indexes.rebuilds == 1  # caught up from the change feed, not rebuilt


def test_scope_isolation_in_search(mem: Memory) -> None:
    mem.remember("alice's secret recipe uses saffron", ALICE)
    mem.remember("bob likes saffron rice", "bob")
    t1 = mem.remember("thread one talks about saffron", Scope("alice", "t1"))[0]
    assert all(h.scope.user == "alice" for h in mem.search("saffron", ALICE, k=10))
    assert _ids(mem.search("saffron", Scope("alice", "t1"), k=10)) == [t1.id]
    assert mem.search("saffron", "carol", k=10) == []


def test_filters(mem: Memory) -> None:
    mem.remember(
        [
            Turn(
                "we talked about the trip to Kyoto",
                speaker="alice",
                time=datetime(2024, 1, 5, tzinfo=UTC),
                session_id="s1",
            ),
            Turn(
                "the Kyoto trip budget is tight",
                speaker="bob",
                time=datetime(2024, 3, 5, tzinfo=UTC),
                session_id="s2",
            ),
        ],
        ALICE,
    )
    by_speaker = mem.search("Kyoto trip", ALICE, filters=SearchFilter(speaker="bob"))
    assert [h.speaker for h in by_speaker] == ["bob"]
    since = mem.search(
        "Kyoto trip", ALICE, filters=SearchFilter(since=datetime(2024, 2, 1, tzinfo=UTC))
    )
    assert [h.session_id for h in since] == ["s2"]
    until = mem.search("Kyoto", ALICE, filters=SearchFilter(until=datetime(2024, 2, 1, tzinfo=UTC)))
    assert [h.session_id for h in until] == ["s1"]
    by_session = mem.search("Kyoto", ALICE, filters=SearchFilter(session_id="s2"))
    assert [h.session_id for h in by_session] == ["s2"]
    assert mem.search("Kyoto", ALICE, filters=SearchFilter(surface="notebook")) == []


def test_facts_granularity_category_and_supersession(mem: Memory, clock: FixedClock) -> None:
    old = mem.add_fact("Alice lives in Beijing", ALICE, category=Category.PERSONAL, topic="home")
    mem.add_fact("Alice prefers green tea", ALICE, category=Category.PREFERENCE, topic="drinks")
    hits = mem.search("where does Alice live", ALICE, granularity="fact", k=1)
    assert _ids(hits) == [old.id]
    prefs = mem.search(
        "Alice",
        ALICE,
        granularity=Granularity.FACT,
        filters=SearchFilter(category=Category.PREFERENCE),
    )
    assert [h.text for h in prefs] == ["Alice prefers green tea"]
    clock.advance(days=1)
    new = mem.add_fact("Alice lives in Hangzhou", ALICE, category=Category.PERSONAL, topic="home")
    mem.update(old.id, ALICE, valid_to=clock.now(), superseded_by=new.id)
    current = mem.search(
        "where does Alice live", ALICE, granularity="fact", filters=SearchFilter(topic="home")
    )
    assert _ids(current) == [new.id]
    everything = mem.search(
        "where does Alice live",
        ALICE,
        granularity="fact",
        filters=SearchFilter(topic="home", current_only=False),
    )
    assert set(_ids(everything)) == {old.id, new.id}
    turns = mem.search("Alice lives", ALICE)  # the facts' own statements are turns too
    assert all(h.granularity == Granularity.TURN for h in turns)


def test_session_granularity_groups_turns(mem: Memory) -> None:
    mem.remember(
        ["planning the wedding in June", "the wedding venue is booked"], ALICE, session_id="wedding"
    )
    mem.remember(["my car needs new tyres"], ALICE, session_id="car")
    hits = mem.search("wedding venue", ALICE, granularity="session", k=2)
    assert hits[0].id == "/wedding" and len(hits[0].episodes) == 2
    assert [h.session_id for h in hits] == ["wedding", "car"]


def test_archived_turns_are_left_out_unless_asked(mem: Memory) -> None:
    ep = mem.remember("an old note about fishing", ALICE)[0]
    mem.store.archive_episodes(ALICE, [ep.id])
    assert mem.search("fishing", ALICE) == []
    assert _ids(mem.search("fishing", ALICE, filters=SearchFilter(include_archived=True))) == [
        ep.id
    ]


def test_score_components(mem: Memory) -> None:
    mem.remember(["apples and pears", "nothing related here"], ALICE)
    hit = mem.search("apples", ALICE, k=1)[0]
    assert set(hit.components) == {"lexical", "dense", "fused"}
    assert hit.components["lexical"] > 0 and hit.score == hit.components["fused"]


@pytest.mark.parametrize(
    ("query", "k", "granularity"), [("", 5, "turn"), ("x", 0, "turn"), ("x", 5, "paragraph")]
)
def test_bad_search_input(mem: Memory, query: str, k: int, granularity: str) -> None:
    with pytest.raises(InvalidInputError):
        mem.search(query, ALICE, k=k, granularity=granularity)


def test_empty_scope_returns_nothing(mem: Memory) -> None:
    assert mem.search("anything", ALICE) == []


def test_session_score_is_the_mean_of_its_best_turns() -> None:
    import numpy as np

    from memstrata.ids import new_id
    from memstrata.index.config import RankingConfig
    from memstrata.index.ranking import Ranker
    from memstrata.index.scope_index import UserIndex
    from memstrata.model import Episode, Role

    index = UserIndex("u", HashingEmbedder(dim=16), RankingConfig(session_top=2))
    eps = [
        Episode(
            new_id("ep"),
            Scope("u"),
            "chat",
            session,
            "x",
            Role.USER,
            f"t{i}",
            datetime(2024, 1, 1, i, tzinfo=UTC),
        )
        for i, session in enumerate(["a", "a", "a", "b", "b", "c"])
    ]
    index.add_episodes(eps)
    n = index.catalog.capacity
    fused = np.full(n, -np.inf, dtype=np.float32)
    for ep, score in zip(eps, [3.0, -1.0, -2.0, 1.5, 1.4, 1.6], strict=True):
        fused[index.catalog.slots[ep.id]] = score
    mask = np.isfinite(fused)
    zeros = np.zeros(n, dtype=np.float32)
    hits = Ranker(index)._groups_ranked(zeros, zeros, fused, mask, 3, Granularity.SESSION)
    # a: mean(3, -1) = 1.0; b: mean(1.5, 1.4) = 1.45; c: 1.6 (one turn)
    assert [h.session_id for h in hits] == ["c", "b", "a"]
    assert [round(h.score, 2) for h in hits] == [1.6, 1.45, 1.0]
    assert hits[2].episodes[0] == eps[0].id  # best turn first


def test_approximate_graph_for_large_scopes_agrees_with_exact(data_dir: Path) -> None:
    from memstrata.bench.scale import synthetic_turns
    from memstrata.index.config import RankingConfig
    from memstrata.index.query import Query
    from memstrata.index.ranking import Ranker
    from memstrata.index.scope_index import UserIndex

    embedder = HashingEmbedder(dim=64)
    turns = synthetic_turns(800, user="u")
    exact = UserIndex("u", embedder, RankingConfig(ann_threshold=None))
    approx = UserIndex("u", embedder, RankingConfig(ann_threshold=300, ann_candidates=200))
    exact.add_episodes(turns)
    approx.add_episodes(turns)
    assert approx.views[0].approximate and not exact.views[0].approximate
    ranked, exactly = Ranker(approx), Ranker(exact)
    agree = 0
    queries = [t.text for t in turns[::40]]
    for text in queries:
        q = Query(text, embedder.embed_query(text))
        a = ranked.search(q, Scope("u"), k=5, granularity=Granularity.TURN, filters=SearchFilter())
        e = exactly.search(q, Scope("u"), k=5, granularity=Granularity.TURN, filters=SearchFilter())
        agree += a[0].id == e[0].id
    assert agree >= len(queries) - 1  # the candidates hold the true best almost always
    target = turns[100]
    approx.remove([target.id])
    q = Query(target.text, embedder.embed_query(target.text))
    hits = ranked.search(q, Scope("u"), k=10, granularity=Granularity.TURN, filters=SearchFilter())
    assert target.id not in _ids(hits)
    only = ranked.search(
        q, Scope("u"), k=3, granularity=Granularity.TURN, filters=SearchFilter(session_id="s3")
    )  # too narrow: exact fallback
    assert only and all(h.session_id == "s3" for h in only)


def test_a_speaker_the_query_names_is_raised(mem: Memory) -> None:
    from memstrata.index.ranking import Ranker

    mem.remember(
        [
            Turn(text="I went hiking on Saturday", speaker="Bob", session_id="s1"),
            Turn(text="I went hiking on Saturday", speaker="Bobby", session_id="s2"),
            Turn(text="我周六去爬山了", speaker="小明", session_id="s3"),
            Turn(text="我周六去爬山了", speaker="Ann", session_id="s4"),
        ],
        ALICE,
    )
    ranker = Ranker(mem.indexes.index("alice"))
    assert ranker._speakers_named("Where did BOB go hiking?") == ["Bob"]
    assert ranker._speakers_named("what did bobby say") == ["Bobby"]
    assert ranker._speakers_named("小明上周六去哪了") == ["小明"]
    assert ranker._speakers_named("和bob说的") == ["Bob"]
    assert ranker._speakers_named("nobody said so") == []
    hits = mem.search("Where did Bob go hiking on Saturday?", ALICE, k=2)
    assert hits[0].speaker == "Bob"
    hits = mem.search("小明周六去爬山了吗", ALICE, k=2)
    assert hits[0].speaker == "小明"


def test_the_best_k_hits_are_the_first_k_of_any_larger_search(mem: Memory) -> None:
    mem.remember(["green tea"] * 9 + ["green tea and biscuits"] * 3, "alice")
    full = _ids(mem.search("green tea", "alice", k=12))
    for k in range(1, 12):
        assert _ids(mem.search("green tea", "alice", k=k)) == full[:k], k
