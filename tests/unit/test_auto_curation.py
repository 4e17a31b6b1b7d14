"""The automatic curation of a quiet thread (``Memory.start_auto_curation``): one curated set
per user, every step a run marked ``auto``, a busy scope tried again later, a failure recorded
and the queue going on."""

from __future__ import annotations

import logging
import threading
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.api.curation import CURATION
from memstrata.curate.queue import DebounceQueue
from memstrata.curate.runs import RunState
from memstrata.model import DocumentKind, Scope
from tests.conftest import FixedClock

ALICE = Scope("alice")
T1 = Scope("alice", "t1")
T2 = Scope("alice", "t2")


def _queue(memory: Memory) -> DebounceQueue:
    queue = memory.start_auto_curation(delay_s=30)
    queue.stop()  # driven by hand with the fixed clock
    return queue


def _say(memory: Memory, scope: Scope, *texts: str) -> None:
    memory.remember([{"speaker": "Alice", "text": t} for t in texts], scope)


def _runs(memory: Memory) -> list[tuple[str, str, str, str]]:
    return [
        (r.key, r.trigger, r.state.value, str(r.result and r.result["kind"]))
        for r in memory.runs.runs(CURATION)
    ]


def test_each_thread_s_turns_are_curated_into_the_user_s_one_set(
    memory: Memory, clock: FixedClock
) -> None:
    queue = _queue(memory)
    _say(memory, T1, "I really love hiking in the mountains.")
    _say(memory, T2, "I work at Alibaba as an engineer.")
    clock.advance(seconds=31)
    assert sorted(queue.run_due(), key=str) == [T1, T2]
    documents = memory.store.list_documents(ALICE)
    assert {d.scope for d in documents} == {ALICE}  # no second set beside the user's
    kinds = [d.kind for d in documents]
    assert kinds.count(DocumentKind.ESSENTIALS) == 1 and kinds.count(DocumentKind.PROFILE) == 1
    facts = {f.text: f.scope for f in memory.store.iter_facts(ALICE)}
    assert facts == {  # the facts keep their thread: they cite its turns
        "Alice really loves hiking in the mountains.": T1,
        "Alice works at Alibaba as an engineer.": T2,  # the job, in her words
        "Alice works at Alibaba": T2,  # the employer, said plainly
    }
    woke = memory.wake_up(ALICE).text
    assert "hiking" in woke and "Alibaba" in woke
    assert _runs(memory) == [
        ("user=alice thread=t1", "auto", "done", "extract"),
        ("user=alice", "auto", "done", "consolidate"),
        ("user=alice thread=t2", "auto", "done", "extract"),
        ("user=alice", "auto", "done", "consolidate"),
    ]
    memory.start_run(ALICE, "extract")  # a caller's run is marked so
    assert memory.runs.runs(CURATION)[-1].trigger == "request"


def test_a_thread_s_only_turns_fall_back_to_the_user_s_set(
    memory: Memory, clock: FixedClock
) -> None:
    """A thread holding no memory of its own (a question, no fact) is served the user's."""
    queue = _queue(memory)
    _say(memory, T1, "I really love hiking in the mountains.")
    _say(memory, T2, "What should I pack?")
    clock.advance(seconds=31)
    queue.run_due()
    assert memory.wake_up(T2).text == memory.wake_up(ALICE).text
    assert "hiking" in memory.wake_up(T2).text


def test_an_agent_s_thread_is_curated_in_the_user_s_scope_with_the_agent(
    memory: Memory, clock: FixedClock
) -> None:
    queue = _queue(memory)
    helper = Scope("alice", "t1", "helper")
    _say(memory, helper, "I really love hiking in the mountains.")
    clock.advance(seconds=31)
    assert queue.run_due() == [helper]
    assert {d.scope for d in memory.store.list_documents(ALICE)} == {Scope("alice", None, "helper")}


def test_a_user_s_own_turns_are_one_run(memory: Memory, clock: FixedClock) -> None:
    queue = _queue(memory)
    _say(memory, ALICE, "I really love hiking in the mountains.")
    clock.advance(seconds=31)
    assert queue.run_due() == [ALICE]
    [run] = memory.runs.runs(CURATION)
    assert run.trigger == "auto" and run.result is not None
    assert set(run.result) == {"kind", "extraction", "consolidation"}
    assert {d.scope for d in memory.store.list_documents(ALICE)} == {ALICE}


@pytest.mark.parametrize("held", [T1, ALICE], ids=["thread", "user"])
def test_a_busy_scope_is_tried_again_later_and_not_lost(
    memory: Memory, clock: FixedClock, held: Scope
) -> None:
    queue = _queue(memory)
    _say(memory, T1, "I really love hiking in the mountains.")
    clock.advance(seconds=31)
    holder = memory.runs.open(CURATION, str(held), scope=held)  # a caller's run, going on
    assert queue.run_due() == [] and queue.busy == 1 and queue.failures == 0
    assert queue.pending() == [T1]  # back in the queue
    with memory.runs.running(holder):
        pass
    assert queue.run_due() == []  # due again only after the delay
    clock.advance(seconds=31)
    assert queue.run_due() == [T1]
    assert memory.store.get_document(ALICE, DocumentKind.ESSENTIALS, "essentials") is not None
    states = [(r.trigger, r.state) for r in memory.runs.runs(CURATION) if r.id != holder.id]
    assert states and all(s == ("auto", RunState.DONE) for s in states)


def test_a_failed_run_is_recorded_logged_and_the_queue_goes_on(
    memory: Memory,
    clock: FixedClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    queue = _queue(memory)
    consolidate = memory.consolidate

    def broken(scope: Any, **kwargs: Any) -> Any:
        if broken.calls == 0:  # type: ignore[attr-defined]
            broken.calls += 1  # type: ignore[attr-defined]
            raise RuntimeError("disk on fire")
        return consolidate(scope, **kwargs)

    broken.calls = 0  # type: ignore[attr-defined]
    monkeypatch.setattr(memory, "consolidate", broken)
    _say(memory, T1, "I really love hiking in the mountains.")
    clock.advance(seconds=1)
    _say(memory, T2, "I work at Alibaba as an engineer.")
    clock.advance(seconds=31)
    with caplog.at_level(logging.WARNING):
        assert queue.run_due() == [T2] and queue.failures == 1
    assert "disk on fire" in caplog.text
    failed = [r for r in memory.runs.runs(CURATION) if r.state == RunState.FAILED]
    assert [(r.key, r.trigger, r.error) for r in failed] == [
        ("user=alice", "auto", "RuntimeError: disk on fire")
    ]
    assert memory.runs.replay(run_id=failed[0].id).events[-1].data["message"] == "disk on fire"
    _say(memory, T1, "I also like tea.")  # the next turn curates the thread again
    clock.advance(seconds=31)
    assert queue.run_due() == [T1]
    texts = {
        b["text"]
        for d in memory.store.list_documents(ALICE)
        if d.kind == DocumentKind.TOPIC
        for s in d.content["sections"]
        for b in s["bullets"]
    }  # type: ignore[union-attr]
    assert any("hiking" in t for t in texts)


def test_closing_the_memory_starts_no_automatic_run(memory: Memory, clock: FixedClock) -> None:
    queue = _queue(memory)
    _say(memory, T1, "I really love hiking in the mountains.")
    clock.advance(seconds=31)
    memory.stop_runs()
    assert queue.run_due() == [] and memory.runs.runs(CURATION) == []


def test_a_thread_s_and_its_user_s_extraction_side_by_side_store_each_fact_once(
    memory: Memory,
) -> None:
    """The queue extracting a thread while a caller's run extracts the whole user: the second
    waits for the first and finds the thread's turns already cited."""
    from memstrata.curate.extract_rules import RuleExtractor
    from memstrata.model import Episode, Extraction

    _say(memory, T1, "I really love hiking in the mountains.")
    inside, shown = threading.Event(), []
    second: list[Any] = []

    class Slow:
        name = "slow"

        def extract(self, episodes: list[Episode]) -> Extraction:
            if not inside.is_set():
                inside.set()
                worker = threading.Thread(
                    target=lambda: second.append(memory.extract(T1, extractor=Recording()))
                )
                worker.start()
                worker.join(1.0)  # it waits for this extraction (or, unguarded, runs now)
                second.append(worker)
            return RuleExtractor().extract(episodes)

    class Recording:
        name = "recording"

        def extract(self, episodes: list[Episode]) -> Extraction:
            shown.extend(episodes)
            return RuleExtractor().extract(episodes)

    first = memory.extract(ALICE, extractor=Slow())
    worker = next(w for w in second if isinstance(w, threading.Thread))
    worker.join(30)
    assert len(first.stored) == 1 and shown == []  # the thread's turn was taken once
    assert [f.text for f in memory.store.iter_facts(ALICE)] == [
        "Alice really loves hiking in the mountains."
    ]
