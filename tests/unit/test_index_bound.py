"""The search indexes one process keeps stay within a memory bound: the least recently used
users' indexes are dropped and rebuilt, correctly, on their next search; an index in use (a
batch being embedded) is never dropped, and no pending work is lost by a drop."""

from __future__ import annotations

import gc
import random
import threading
import tracemalloc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.embed.cache import with_cache
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import InvalidInputError
from memstrata.ids import new_id
from memstrata.index.manager import IndexManager, index_bytes
from memstrata.index.query import build_query
from memstrata.index.ranking import Ranker
from memstrata.index.scope_index import UserIndex
from memstrata.model import Episode, Granularity, Role, Scope, SearchFilter, Turn
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.unit.test_background_index import GatedEmbedder

WORDS = ("piano", "garden", "flight", "dentist", "harbor", "violin", "tomato", "glacier", "lantern")


def _turns(user: str, count: int, first: int = 0) -> list[Turn]:
    return [
        Turn(text=f"{user} note {i} about the {WORDS[i % len(WORDS)]}")
        for i in range(first, first + count)
    ]


def _memory(data_dir: Path, clock: FixedClock, **settings: object) -> Memory:
    return Memory.open(
        settings=load_settings(data_dir=data_dir, **settings),
        clock=clock,
        embedder=HashingEmbedder(32),
    )


def _fill(mem: Memory, users: dict[str, int]) -> None:
    for user, count in users.items():
        mem.remember(_turns(user, count), user)


def _owner(text: str) -> str:
    """The user a hit's turn names ("user: a note 3 ..." -> "a")."""
    return text.split(": ", 1)[1].split(" ", 1)[0]


def _one_size(mem: Memory, user: str) -> int:
    return index_bytes(mem.indexes.index(user))


def test_least_recently_used_indexes_are_dropped_past_the_bound(
    data_dir: Path, clock: FixedClock
) -> None:
    with _memory(data_dir, clock) as mem:
        _fill(mem, {"a": 40, "b": 40, "c": 40})
        size = max(_one_size(mem, u) for u in "abc")
        mem.indexes.drop()
        manager = mem.indexes
        manager.memory_bytes = int(2.5 * size)  # two fit, three do not
        for user in "ab":
            mem.search("piano", user)
        assert list(manager.memory()) == ["a", "b"]
        mem.search("piano", "c")
        assert list(manager.memory()) == ["b", "c"] and sorted(manager.built()) == ["b", "c"]
        mem.search("garden", "b")  # b is now the most recently used
        mem.search("garden", "a")
        assert list(manager.memory()) == ["b", "a"] and "c" not in manager.built()
        assert sum(manager.memory().values()) <= manager.memory_bytes
        assert manager.evictions == 2


def test_the_index_just_used_is_kept_however_large(data_dir: Path, clock: FixedClock) -> None:
    with _memory(data_dir, clock) as mem:
        _fill(mem, {"a": 30, "b": 30})
        mem.indexes.memory_bytes = 1
        assert _owner(mem.search("piano", "a")[0].text) == "a"
        assert mem.indexes.built() == ["a"]
        assert _owner(mem.search("piano", "b")[0].text) == "b"
        assert mem.indexes.built() == ["b"]


def test_a_dropped_index_is_rebuilt_with_the_writes_made_meanwhile(
    data_dir: Path, clock: FixedClock
) -> None:
    with _memory(data_dir, clock) as mem:
        _fill(mem, {"a": 50, "b": 50})
        manager = mem.indexes
        witness = IndexManager(mem.store, mem.embedder, manager.config, manager.passages)
        witness.index("a")  # never dropped: follows the change feed
        manager.memory_bytes = 1
        mem.search("violin", "a")
        mem.search("violin", "b")
        assert "a" not in manager.built()
        mem.remember([Turn(text="a new turn about the saxophone")], "a")
        assert mem.search("saxophone", "a")[0].text.endswith("a new turn about the saxophone")
        assert manager.loads >= 1  # from its snapshot, caught up through the feed
        witness.embed_pending("a")
        rebuilt, followed = manager.index("a"), witness.index("a")
        assert rebuilt.pending == followed.pending == 0
        assert len(rebuilt) == len(followed) == 51
        for text in ("violin note", "saxophone", "a note 7 about the meadow"):
            plan = build_query(text, mem.embedder, manager.config)
            for level in (Granularity.TURN, Granularity.SESSION):
                got = Ranker(rebuilt).search(
                    plan, Scope("a"), k=20, granularity=level, filters=SearchFilter()
                )
                want = Ranker(followed).search(
                    plan, Scope("a"), k=20, granularity=level, filters=SearchFilter()
                )
                assert [h.id for h in got] == [h.id for h in want]
                assert [h.score for h in got] == pytest.approx([h.score for h in want])


def test_an_index_embedding_a_batch_is_not_dropped_and_nothing_pending_is_lost(
    data_dir: Path, clock: FixedClock
) -> None:
    settings = load_settings(data_dir=data_dir)
    gate = GatedEmbedder()
    embedder = with_cache(gate, settings.embedding_cache_path)
    with Memory.open(settings=settings, clock=clock, embedder=embedder) as mem:
        for user in "abc":
            mem.remember(_turns(user, 12), user)
        manager = mem.indexes
        manager.memory_bytes = 1
        assert manager.index("a").pending == 12
        done: list[int] = []
        worker = threading.Thread(target=lambda: done.append(manager.embed_pending("a", batch=4)))
        worker.start()
        assert gate.entered.wait(10)  # a batch of a's is in the model
        manager.index("b")
        manager.index("c")
        assert "a" in manager.built()  # in use: kept over the bound
        assert "b" not in manager.built()  # not in use: dropped
        assert manager.pending("c") == 12
        gate.open.set()
        worker.join(30)
        assert done == [12]
        manager.index("c")
        assert "a" not in manager.built()  # no longer in use: dropped
        # b was dropped with all of it pending: rebuilt, it is all pending again; a's
        # vectors come back from the cache
        assert manager.index("b").pending == 12
        assert manager.index("a").pending == 0
        assert manager.embed_pending("b") == 12


def test_searches_and_writes_of_many_users_under_a_small_bound(
    data_dir: Path, clock: FixedClock
) -> None:
    users = [f"u{i}" for i in range(6)]
    with _memory(data_dir, clock) as mem:
        _fill(mem, dict.fromkeys(users, 20))
        size = _one_size(mem, "u0")
        mem.indexes.drop()
        mem.indexes.memory_bytes = 2 * size
        failures: list[str] = []
        lock = threading.Lock()
        written: dict[str, list[str]] = {u: [] for u in users}

        def work(seed: int) -> None:
            rng = random.Random(seed)
            try:
                for n in range(25):
                    user = rng.choice(users)
                    if rng.random() < 0.3:
                        word = f"zebra{seed}x{n}"
                        (episode,) = mem.remember([Turn(text=f"{user} saw a {word}")], user)
                        with lock:
                            written[user].append(word)
                        hits = mem.search(word, user, k=5)  # written before: found
                        if episode.id not in [h.id for h in hits]:
                            failures.append(f"{word} not found for {user}")
                    else:
                        hits = mem.search("piano", user, k=3)
                        if any(_owner(h.text) != user for h in hits):
                            failures.append(f"another user's hit for {user}")
            except Exception as exc:  # reported below
                failures.append(repr(exc))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert not failures, failures[:5]
        manager = mem.indexes
        assert manager.evictions > 0
        mem.search("piano", "u0")  # quiet now: the bound holds after a use
        assert sum(manager.memory().values()) <= 2 * size + max(manager.memory().values())
        for user in users:  # every index, rebuilt or not, holds every write
            count = 20 + len(written[user])
            assert len(manager.index(user)) == count


def test_the_setting_bounds_the_facade_manager(data_dir: Path, clock: FixedClock) -> None:
    with _memory(data_dir, clock, index_memory_mb=3) as mem:
        assert mem.indexes.memory_bytes == 3 * 2**20
    with _memory(data_dir, clock, index_memory_mb=0) as mem:
        assert mem.indexes.memory_bytes is None
    with _memory(data_dir, clock) as mem:
        assert mem.indexes.memory_bytes == 1024 * 2**20
    with pytest.raises(InvalidInputError):
        IndexManager(mem.store, HashingEmbedder(8), memory_bytes=0)


def test_the_size_estimate_follows_the_memory_an_index_takes() -> None:
    rng = random.Random(3)
    vocabulary = [f"term{i}" for i in range(3000)] + ["the", "a", "we", "of"] * 200
    turns = [" ".join(rng.choices(vocabulary, k=rng.randint(8, 30))) for _ in range(2000)]
    start = datetime(2024, 1, 1, tzinfo=UTC)
    episodes = [
        Episode(
            new_id("ep"),
            Scope("u"),
            "chat",
            f"s{i // 20}",
            "Ann",
            Role.USER,
            text,
            start + timedelta(minutes=i),
        )
        for i, text in enumerate(turns)
    ]
    embedder = HashingEmbedder(256)
    UserIndex("u", embedder, deferred=True).add_episodes(episodes)  # warms the tokenizer's caches
    gc.collect()
    tracemalloc.start()
    try:  # dense vectors left pending: the matrices' bytes are exact, the rest is estimated
        before = tracemalloc.get_traced_memory()[0]
        index = UserIndex("u", embedder, deferred=True)
        index.add_episodes(episodes)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    estimate = index_bytes(index)
    assert 0.6 * held <= estimate <= 1.6 * held, (estimate, held)


def test_a_search_measures_the_index_again_only_when_it_changed(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memstrata.index.manager as manager_module

    measured: list[int] = []

    def counting(index: UserIndex) -> int:
        measured.append(1)
        return index_bytes(index)

    monkeypatch.setattr(manager_module, "index_bytes", counting)
    with _memory(data_dir, clock) as mem:
        _fill(mem, {"a": 20})
        mem.search("piano", "a")
        mem.search("piano", "a")  # the same terms: nothing changed, nothing measured
        first = len(measured)
        mem.search("piano", "a")
        assert len(measured) == first
        mem.remember([Turn(text="a new turn about the cello")], "a")
        mem.search("piano", "a")  # a write since: measured again
        assert len(measured) > first
