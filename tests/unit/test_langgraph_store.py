"""``MemstrataStore`` behaves as LangGraph's own stores do.

The behaviour tests run against LangGraph's reference ``InMemoryStore`` and against
``MemstrataStore`` alike (the same assertions must hold for both), in the manner of
LangGraph's store test suites; the tests after them cover what only memstrata does (scopes,
exact round trips, hybrid search, episodes)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph")

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import InvalidInputError, TooLargeError
from memstrata.integrations.langgraph import MemstrataStore, session_of
from memstrata.model import EpisodeFilter, Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock


@pytest.fixture
def mem(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    settings = load_settings(data_dir=data_dir, load_sample=False)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as memory:
        yield memory


@pytest.fixture(params=["langgraph-in-memory", "memstrata"])
def store(request: pytest.FixtureRequest, mem: Memory, clock: FixedClock) -> BaseStore:
    if request.param == "memstrata":
        clock.advance(seconds=1)  # each test starts after the memory opened

        class Ticking(MemstrataStore):
            def batch(self, ops: Any) -> Any:
                clock.advance(seconds=1)  # later writes are later, as on a real clock
                return super().batch(ops)

        return Ticking(mem)
    return InMemoryStore()


# --- LangGraph's store behaviour ------------------------------------------------------------


def test_batch_answers_each_operation_in_order(store: BaseStore) -> None:
    store.put(("test", "foo"), "key1", {"data": "value1"})
    store.put(("test", "bar"), "key2", {"data": "value2"})
    results = store.batch(
        [
            GetOp(("test", "foo"), "key1"),
            PutOp(("test", "bar"), "key2", {"data": "value2"}),
            SearchOp(("test",), filter={"data": "value1"}, limit=10, offset=0),
            ListNamespacesOp(match_conditions=None, max_depth=None, limit=10, offset=0),
            GetOp(("test",), "key3"),
        ]
    )
    assert len(results) == 5
    first = results[0]
    assert isinstance(first, Item)
    assert (first.namespace, first.key, first.value) == (
        ("test", "foo"),
        "key1",
        {"data": "value1"},
    )
    assert results[1] is None
    found = results[2]
    assert isinstance(found, list) and [i.key for i in found] == ["key1"]
    assert results[3] == [("test", "bar"), ("test", "foo")]
    assert results[4] is None
    again = store.batch(
        [
            SearchOp(("test",), filter=None, limit=5, offset=0),
            GetOp(("test", "bar"), "key2"),
            PutOp(("test",), "key3", {"data": "value3"}),
            GetOp(("test", "foo"), "key1"),
        ]
    )
    assert isinstance(again[0], list) and len(again[0]) == 2
    assert isinstance(again[1], Item) and again[1].value == {"data": "value2"}
    assert again[2] is None
    assert isinstance(again[3], Item) and again[3].value == {"data": "value1"}
    third = store.get(("test",), "key3")
    assert third is not None and third.value == {"data": "value3"}


def test_puts_and_deletes_in_one_batch(store: BaseStore) -> None:
    results = store.batch(
        [
            PutOp(("test",), "key1", {"data": "value1"}),
            PutOp(("test",), "key2", {"data": "value2"}),
            PutOp(("test",), "key3", None),  # a delete of nothing
        ]
    )
    assert results == [None, None, None]
    one, two = store.get(("test",), "key1"), store.get(("test",), "key2")
    assert one is not None and one.value == {"data": "value1"}
    assert two is not None and two.value == {"data": "value2"}
    assert store.get(("test",), "key3") is None
    store.batch([PutOp(("test",), "key1", {"v": 1}), PutOp(("test",), "key1", {"v": 2})])
    last = store.get(("test",), "key1")
    assert last is not None and last.value == {"v": 2}  # the last write of a key wins


def test_put_get_update_delete(store: BaseStore) -> None:
    namespace = ("test", "documents")
    store.put(namespace, "doc1", {"title": "Test Document", "content": "Hello, World!"})
    item = store.get(namespace, "doc1")
    assert item is not None
    assert (item.namespace, item.key) == (namespace, "doc1")
    assert item.value == {"title": "Test Document", "content": "Hello, World!"}
    store.put(namespace, "doc1", {"title": "Updated Document", "content": "Hello, Updated!"})
    updated = store.get(namespace, "doc1")
    assert updated is not None
    assert updated.value == {"title": "Updated Document", "content": "Hello, Updated!"}
    assert updated.updated_at >= item.updated_at
    assert store.get(("test", "other_documents"), "doc1") is None
    store.delete(namespace, "doc1")
    assert store.get(namespace, "doc1") is None


def test_search_by_prefix_filter_and_pages(store: BaseStore) -> None:
    data = [
        (
            ("test", "docs"),
            "doc1",
            {"title": "First Doc", "author": "Alice", "tags": ["important"]},
        ),
        (("test", "docs"), "doc2", {"title": "Second Doc", "author": "Bob", "tags": ["draft"]}),
        (("test", "images"), "img1", {"title": "Image 1", "author": "Alice", "tags": ["final"]}),
    ]
    for namespace, key, value in data:
        store.put(namespace, key, value)
    assert len(store.search(("test",))) == 3
    docs = store.search(("test", "docs"))
    assert len(docs) == 2 and all(i.namespace == ("test", "docs") for i in docs)
    alice = store.search(("test",), filter={"author": "Alice"})
    assert sorted(i.key for i in alice) == ["doc1", "img1"]
    assert [i.key for i in store.search(("test",), filter={"tags": ["draft"]})] == ["doc2"]
    assert len(store.search(("test",), limit=2)) == 2
    assert len(store.search(("test",), offset=2)) == 1
    pages = store.search(("test",), limit=2) + store.search(("test",), limit=2, offset=2)
    assert sorted(i.key for i in pages) == ["doc1", "doc2", "img1"]
    assert store.search(("nobody",)) == []


def test_search_filters_with_operators_and_nested_values(store: BaseStore) -> None:
    store.put(("u", "t"), "a", {"n": 1, "meta": {"kind": "x", "deep": {"ok": True}}})
    store.put(("u", "t"), "b", {"n": 5, "meta": {"kind": "y"}})
    store.put(("u", "t"), "c", {"n": 10, "meta": {"kind": "x"}})

    def keys(**query: Any) -> list[str]:
        return sorted(i.key for i in store.search(("u",), **query))

    assert keys(filter={"n": {"$gt": 1}}) == ["b", "c"]
    assert keys(filter={"n": {"$gte": 5, "$lt": 10}}) == ["b"]
    assert keys(filter={"n": {"$lte": 5}}) == ["a", "b"]
    assert keys(filter={"n": {"$ne": 5}}) == ["a", "c"]
    assert keys(filter={"n": {"$eq": 10}}) == ["c"]
    assert keys(filter={"meta": {"kind": "x"}}) == ["a", "c"]
    assert keys(filter={"meta": {"deep": {"ok": True}}}) == ["a"]
    assert keys(filter={"missing": 1}) == []


def test_list_namespaces_by_prefix_suffix_wildcards_depth_and_pages(store: BaseStore) -> None:
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
    ]
    for i, namespace in enumerate(namespaces):
        store.put(namespace, f"id_{i}", {"data": f"value_{i:02d}"})
    under_ab = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f")]
    assert store.list_namespaces(prefix=("a", "b")) == under_ab
    assert store.list_namespaces(suffix=("f",)) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a", "b"), limit=2) == under_ab[:2]
    assert store.list_namespaces(prefix=("a", "b"), offset=2) == under_ab[2:]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("*", "f")) == [
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
    ]
    assert store.list_namespaces(prefix=("users", "*")) == [
        ("users", "123"),
        ("users", "456", "settings"),
    ]
    assert store.list_namespaces(prefix=("*", "users"), suffix=("*", "settings")) == []
    assert store.list_namespaces(prefix=("nonexistent",)) == []
    assert store.list_namespaces(prefix=("users", "123")) == [("users", "123")]
    assert store.list_namespaces(max_depth=2) == [
        ("a", "b"),
        ("a", "c"),
        ("admin", "users"),
        ("b", "a"),
        ("users", "123"),
        ("users", "456"),
    ]
    assert store.list_namespaces() == sorted(namespaces)


def test_list_namespaces_pages_in_order(store: BaseStore) -> None:
    assert store.list_namespaces() == []
    for i in range(12):
        store.put(("namespace", f"sub_{i:02d}"), f"id_{i:02d}", {"data": i})
    for offset in (0, 5, 10):
        expected = [("namespace", f"sub_{i:02d}") for i in range(offset, min(offset + 5, 12))]
        assert store.list_namespaces(prefix=("namespace",), limit=5, offset=offset) == expected
    ops = [
        ListNamespacesOp(match_conditions=(MatchCondition("suffix", ("sub_03",)),)),
        ListNamespacesOp(max_depth=1),
    ]
    assert store.batch(ops) == [[("namespace", "sub_03")], [("namespace",)]]


def test_bad_namespaces_are_refused(store: BaseStore) -> None:
    for namespace in [(), ("a.b",), ("", "x"), ("langgraph", "x")]:
        with pytest.raises(InvalidNamespaceError):
            store.put(namespace, "k", {"v": 1})
    with pytest.raises((InvalidNamespaceError, TypeError)):
        store.put(("ok", 1), "k", {"v": 1})  # type: ignore[arg-type]


def test_async_methods_do_what_the_sync_ones_do(store: BaseStore) -> None:
    async def scenario() -> None:
        await store.aput(("users", "u1"), "k1", {"text": "prefers dark mode"})
        await store.aput(("users", "u1"), "k2", {"text": "lives in Lisbon"})
        item = await store.aget(("users", "u1"), "k1")
        assert item is not None and item.value == {"text": "prefers dark mode"}
        assert len(await store.asearch(("users",))) == 2
        assert await store.alist_namespaces(prefix=("users",)) == [("users", "u1")]
        await store.adelete(("users", "u1"), "k1")
        assert await store.aget(("users", "u1"), "k1") is None
        results = await store.abatch([GetOp(("users", "u1"), "k2"), GetOp(("users", "u1"), "k1")])
        assert isinstance(results[0], Item) and results[1] is None

    asyncio.run(scenario())


def test_non_ascii_values(store: BaseStore) -> None:
    value = {"text": "用户喜欢喝龙井茶 ☕", "émoji": "🙂", "list": ["中文", 1.5, None, True]}
    store.put(("user_123", "memories"), "1", value)
    item = store.get(("user_123", "memories"), "1")
    assert item is not None and item.value == value
    assert [i.key for i in store.search(("user_123",), filter={"émoji": "🙂"})] == ["1"]


# --- memstrata's own -------------------------------------------------------------------------


def test_values_round_trip_exactly_and_searches_rank_by_meaning(mem: Memory) -> None:
    store = MemstrataStore(mem)
    value: dict[str, Any] = {
        "text": "The user's cat is called Miso",
        "n": 3,
        "ratio": 0.25,
        "big": 12345678901234567,
        "flags": [True, False, None],
        "nested": {"a": {"b": ["x", {"c": "d"}]}},
        "empty": {},
    }
    store.put(("alice", "memories"), "cat", value)
    store.put(("alice", "memories"), "coffee", {"text": "Alice drinks dark roast coffee"})
    store.put(("alice", "memories"), "city", {"text": "Alice moved to Hangzhou"})
    item = store.get(("alice", "memories"), "cat")
    assert item is not None and item.value == value
    assert type(item.value["big"]) is int and type(item.value["ratio"]) is float
    hits = store.search(("alice",), query="what is the cat called?", limit=2)
    assert hits[0].key == "cat" and hits[0].score is not None
    assert len(hits) == 2 and hits[0].score >= hits[1].score
    assert [h.key for h in store.search(("alice",), query="cat", offset=1, limit=5)] == [
        h.key for h in store.search(("alice",), query="cat", limit=5)
    ][1:]
    filtered = store.search(("alice",), query="coffee", filter={"n": 3})
    assert [h.key for h in filtered] == ["cat"]


def test_each_item_is_one_searchable_episode_of_its_users_scope(mem: Memory) -> None:
    store = MemstrataStore(mem)
    store.put(("alice",), "p", {"text": "Alice is allergic to peanuts"})
    store.put(("alice", "t1", "prefs"), "q", {"text": "prefers short answers"})
    store.put(("bob", "t1"), "p", {"text": "Bob is allergic to shellfish"})
    episodes = mem.list(
        Scope("alice"), "episode", episode_filter=EpisodeFilter(surface="langgraph")
    )
    assert sorted(e.text for e in episodes) == [  # type: ignore[union-attr]
        "Alice is allergic to peanuts",
        "prefers short answers",
    ]
    thread = mem.list(Scope("alice", "t1"), "episode")
    assert [e.session_id for e in thread] == [session_of(("alice", "t1", "prefs"), "q")]  # type: ignore[union-attr]
    hits = mem.search("allergic to peanuts", "alice", granularity="turn")
    assert any(h.text.endswith("Alice is allergic to peanuts") for h in hits)
    assert [i.key for i in store.search(("bob",), query="allergic")] == ["p"]
    assert [i.key for i in store.search(("alice", "t1"), query="allergic")] == ["q"]
    store.put(("alice",), "p", {"text": "Alice is no longer allergic"})
    left = mem.list(Scope("alice"), "episode", episode_filter=EpisodeFilter(surface="langgraph"))
    assert len(left) == 2  # the old episode went with the update
    store.delete(("alice", "t1", "prefs"), "q")
    assert store.list_namespaces(prefix=("alice",)) == [("alice",)]  # as the SQL stores do


def test_updates_keep_the_creation_time_and_index_choices_hold(mem: Memory) -> None:
    store = MemstrataStore(mem, index_fields=["title"])
    store.put(("u",), "a", {"title": "tea ceremony", "body": "zebra"})
    store.put(("u",), "b", {"title": "zebra crossing", "body": "tea"}, index=["body"])
    store.put(("u",), "c", {"title": "tea at five"}, index=False)
    episodes = {e.text for e in mem.list("u", "episode")}  # type: ignore[union-attr]
    assert {"tea ceremony", "tea"} <= episodes
    assert sorted(i.key for i in store.search(("u",), query="tea")) == ["a", "b"]  # not c
    assert sorted(i.key for i in store.search(("u",))) == ["a", "b", "c"]  # listed all the same
    first = store.get(("u",), "a")
    store.put(("u",), "a", {"title": "tea again"})
    second = store.get(("u",), "a")
    assert first is not None and second is not None
    assert second.created_at == first.created_at


def test_the_user_can_sit_deeper_in_the_namespace(mem: Memory) -> None:
    store = MemstrataStore(mem, user_at=1)
    store.put(("memories", "alice"), "k", {"text": "likes jazz"})
    store.put(("memories", "bob", "music"), "k", {"text": "likes opera"})
    assert [e.text for e in mem.list("alice", "episode")] == ["likes jazz"]  # type: ignore[union-attr]
    assert [e.scope for e in mem.list("bob", "episode")] == [Scope("bob", "music")]  # type: ignore[union-attr]
    assert store.list_namespaces(prefix=("memories",)) == [
        ("memories", "alice"),
        ("memories", "bob", "music"),
    ]
    with pytest.raises(InvalidNamespaceError):
        store.put(("memories",), "k", {"text": "whose?"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("memories", "a/b"), "k", {"text": "not a user name"})
    with pytest.raises(InvalidInputError):
        MemstrataStore(mem, user_at=-1)


def test_values_that_are_not_json_are_refused_and_nothing_is_stored(mem: Memory) -> None:
    store = MemstrataStore(mem)
    with pytest.raises(InvalidInputError):
        store.put(("u",), "k", {"when": object()})
    with pytest.raises(InvalidInputError):
        store.batch([PutOp(("u",), "ok", {"v": 1}), PutOp(("u",), "bad", {"x": float("nan")})])
    with pytest.raises(TooLargeError):
        store.batch([PutOp(("u",), "ok", {"v": 1}), PutOp(("u",), "big", {"t": "x" * 10**6})])
    assert store.search(("u",)) == []


def test_a_query_search_looks_further_when_the_filter_leaves_too_few(mem: Memory) -> None:
    store = MemstrataStore(mem)
    store.batch(
        [
            PutOp(("u", "notes"), f"n{i}", {"text": f"tea note {i}", "tag": "common"})
            for i in range(120)
        ]
    )
    store.put(("u", "notes"), "rare", {"text": "tea note rare", "tag": "rare"})
    found = store.search(("u",), query="tea note", filter={"tag": "rare"}, limit=1)
    assert [i.key for i in found] == ["rare"]
    assert len(store.search(("u",), query="tea note", limit=100, offset=60)) == 61


def test_a_secret_in_a_value_is_scrubbed_before_it_is_stored(mem: Memory) -> None:
    """Values are stored verbatim like any capture, so secrets leave them as they leave a
    turn's text; everything else round-trips."""
    secret = "sk-proj-" + "Ab3xYz9Q" * 4
    store = MemstrataStore(mem)
    store.put(("alice", "memories"), "k", {"note": f"my key is {secret}", "n": 1, "tag": "茶"})
    item = store.get(("alice", "memories"), "k")
    assert item is not None
    assert secret not in str(item.value) and "[REDACTED:api_key]" in item.value["note"]
    assert item.value["n"] == 1 and item.value["tag"] == "茶"
    stored = mem.list(Scope("alice"), "episode", limit=10)
    assert stored and all(secret not in str(e) for e in stored)
