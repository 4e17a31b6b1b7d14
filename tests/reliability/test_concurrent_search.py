"""Search beside writes in one process: threads search while others remember, add facts,
delete and apply document edits, each search catching the index up from the change feed.

No search may raise, every hit must name a record that was written, and once the writers stop a
search must see every write and none of the deleted records."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from memstrata.api import Memory
from memstrata.document.ops import Operation, OpKind
from memstrata.document.service import document_from_json
from memstrata.embed.fake import HashingEmbedder
from memstrata.model import DocumentKind, Granularity, Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.reliability.sizes import size

USER = Scope("racer")
WORDS = ("harbor", "lantern", "violet", "granite", "meadow", "falcon", "copper", "willow")


class YieldingEmbedder(HashingEmbedder):
    """The hashing fake, giving up the interpreter while it embeds as a real model would (a
    model releases the GIL in native code), so other threads run mid-update."""

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        time.sleep(0.0005)
        out = super().embed_documents(texts)
        time.sleep(0.0005)
        return out


def _text(i: int) -> str:
    return f"note {i}: the {WORDS[i % len(WORDS)]} {WORDS[(i * 3) % len(WORDS)]} number n{i}"


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Threads switch far more often than every 5 ms, so a search and a catch-up interleave
    inside each other's steps."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)


@pytest.mark.usefixtures("fast_switching")
def test_search_beside_concurrent_writes(data_dir: Path, clock: FixedClock) -> None:
    rounds = size(30, 300)
    mem = Memory.open(
        settings=load_settings(data_dir=data_dir), clock=clock, embedder=YieldingEmbedder(64)
    )
    written: set[str] = set()  # every id ever stored (hits may only name these)
    deleted: set[str] = set()
    lock = threading.Lock()
    errors: list[BaseException] = []
    stop = threading.Event()

    def record(*ids: str) -> None:
        with lock:
            written.update(ids)

    def guarded(fn):  # type: ignore[no-untyped-def]
        def run() -> None:
            try:
                fn()
            except BaseException as exc:  # anything a thread raises fails the test
                errors.append(exc)
                stop.set()

        return run

    @guarded
    def turns() -> None:
        for i in range(rounds):
            if stop.is_set():
                return
            for ep in mem.remember(_text(i), USER, session_id=f"s{i % 7}"):
                record(ep.id)
            if i % 3 == 2:
                victim = mem.remember(_text(10_000 + i), USER, session_id=f"s{i % 7}")[0]
                record(victim.id)
                mem.delete(victim.id, USER)
                with lock:
                    deleted.add(victim.id)

    @guarded
    def facts() -> None:
        for i in range(rounds):
            if stop.is_set():
                return
            fact = mem.add_fact(_text(20_000 + i), USER, topic="notes", supersede=False)
            record(fact.id, *fact.sources)

    @guarded
    def documents() -> None:
        for i in range(rounds // 2):
            if stop.is_set():
                return
            _, version = mem.doc("garden", USER)
            op = Operation(OpKind.ADD, section="Notes", text=_text(30_000 + i))
            doc, _ = mem.apply_doc("garden", USER, [op], expected_version=version)
            stored = mem.store.get_document(USER, DocumentKind.TOPIC, "garden")
            assert stored is not None
            bullets = [b for section in doc.sections for b in section.bullets]
            cited = [c.episode_id for b in bullets for c in b.citations]
            record(stored.id, *(b.id for b in bullets), *cited)

    searches = [0]
    seen: set[str] = set()  # every id a hit named (checked against `written` at the end)

    @guarded
    def searcher() -> None:
        levels = list(Granularity)
        n = 0
        while not stop.is_set():
            level = levels[n % len(levels)]
            hits = mem.search(f"{WORDS[n % len(WORDS)]} note", USER, k=5, granularity=level)
            named = {x for hit in hits for x in (hit.bullets or hit.episodes or (hit.id,))}
            with lock:
                seen.update(named)
            n += 1
        with lock:
            searches[0] += n

    writers = [threading.Thread(target=f) for f in (turns, facts, documents)]
    readers = [threading.Thread(target=searcher) for _ in range(3)]
    for t in readers + writers:
        t.start()
    for t in writers:
        t.join(timeout=120)
    stop.set()
    for t in readers:
        t.join(timeout=60)
    try:
        assert not errors, f"{len(errors)} thread(s) failed, first: {errors[0]!r}"
        assert searches[0] > 0
        assert seen and seen <= written, f"hits named unknown records {sorted(seen - written)}"
        # every write is seen once the writers have stopped, no deleted turn is
        for i in (0, rounds // 2, rounds - 1):
            hits = mem.search(f"number n{i}", USER, k=3)
            assert hits and hits[0].text.endswith(f"number n{i}")
        index = mem.indexes.index(USER.user)
        indexed = set(index.catalog.slots)
        live_turns = {e.id for e in mem.store.iter_episodes(USER)}
        live_facts = {f.id for f in mem.store.iter_facts(USER)}
        assert live_turns | live_facts <= indexed
        assert not deleted & indexed
        garden = mem.store.get_document(USER, DocumentKind.TOPIC, "garden")
        assert garden is not None
        bullets = {b.id for s in document_from_json(garden.content).sections for b in s.bullets}
        assert bullets <= indexed  # every bullet of the last version is searchable
    finally:
        mem.close()


def test_a_catch_up_waits_for_a_search_in_progress(data_dir: Path, clock: FixedClock) -> None:
    """A search holds its index shared: a catch-up for a later write waits until it is done,
    and then applies all of the write."""
    with Memory.open(
        settings=load_settings(data_dir=data_dir), clock=clock, embedder=HashingEmbedder(32)
    ) as mem:
        mem.remember("the harbor lantern", USER)
        index = mem.indexes.index(USER.user)
        mem.remember(["the violet meadow", "the copper falcon"], USER)
        caught_up = threading.Event()

        def catch_up() -> None:
            mem.indexes.index(USER.user)
            caught_up.set()

        with index.lock.reading():
            thread = threading.Thread(target=catch_up)
            thread.start()
            assert not caught_up.wait(0.3)  # held back by the search in progress
            assert len(index) == 1
        assert caught_up.wait(30)
        thread.join(30)
        assert len(index) == 3


def test_a_rebuild_leaves_the_index_a_search_holds_unchanged(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstrata.index import manager

    monkeypatch.setattr(manager, "_REBUILD_MIN", 0)  # any change rebuilds
    with Memory.open(
        settings=load_settings(data_dir=data_dir), clock=clock, embedder=HashingEmbedder(32)
    ) as mem:
        first = mem.remember("the harbor lantern", USER)[0]
        held = mem.indexes.index(USER.user)
        mem.remember(["the violet meadow", "the copper falcon"], USER)
        mem.delete(first.id, USER)
        fresh = mem.indexes.index(USER.user)
        assert fresh is not held and mem.indexes.rebuilds == 2
        assert set(held.catalog.slots) == {first.id}  # what the old search started with
        assert first.id not in fresh.catalog.slots and len(fresh) == 2


def test_a_catch_up_during_a_search_never_changes_it_midway(
    data_dir: Path, clock: FixedClock
) -> None:
    """Deterministic: a search is paused right after its lexical scores while another thread
    writes and catches the index up. The catch-up must wait for the search (which then ranks
    one consistent index), not grow the index underneath it."""
    with Memory.open(
        settings=load_settings(data_dir=data_dir), clock=clock, embedder=HashingEmbedder(32)
    ) as mem:
        mem.remember("the harbor lantern", USER, session_id="s0")
        index = mem.indexes.index(USER.user)
        paused, resume = threading.Event(), threading.Event()
        lexical_scores = index.lexical.scores

        def pausing_scores(*args: Any, **kwargs: Any) -> Any:
            out = lexical_scores(*args, **kwargs)
            paused.set()
            resume.wait(30)
            return out

        index.lexical.scores = pausing_scores
        outcome: list[object] = []

        def search() -> None:
            try:
                outcome.append(mem.search("harbor lantern", USER, k=5))
            except Exception as exc:
                outcome.append(exc)

        def write() -> None:
            mem.remember([f"lantern {i} on the harbor wall" for i in range(40)], USER)
            mem.indexes.index(USER.user)  # the catch-up

        searcher = threading.Thread(target=search)
        searcher.start()
        assert paused.wait(30)
        index.lexical.scores = lexical_scores
        writer = threading.Thread(target=write)
        writer.start()
        lock = getattr(index, "lock", None)
        while writer.is_alive() and not (lock is not None and lock._waiting):
            writer.join(0.01)  # until the catch-up is done, or waits for the search
        resume.set()
        searcher.join(30)
        writer.join(30)
        assert len(outcome) == 1 and isinstance(outcome[0], list), outcome
        assert len(index) == 41
