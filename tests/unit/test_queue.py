"""The per-thread debounce queue."""

from __future__ import annotations

import threading

import pytest

from memstrata.curate.queue import DebounceQueue
from memstrata.errors import BusyError, InvalidInputError
from memstrata.model import Scope
from tests.conftest import FixedClock

T1 = Scope("alice", "t1")
T2 = Scope("alice", "t2")


def test_a_burst_becomes_one_run_once_quiet(clock: FixedClock) -> None:
    ran: list[Scope] = []
    queue = DebounceQueue(ran.append, delay_s=30, clock=clock)
    for _ in range(5):
        queue.touch(T1)
        clock.advance(seconds=10)  # each turn comes before the delay runs out
    queue.touch(T2)
    assert queue.run_due() == []
    clock.advance(seconds=25)
    assert queue.run_due() == [T1] and ran == [T1]
    clock.advance(seconds=5)
    assert queue.run_due() == [T2]
    assert queue.run_due() == [] and queue.pending() == []


def test_failures_are_logged_and_retried(
    clock: FixedClock, caplog: pytest.LogCaptureFixture
) -> None:
    calls = []

    def flaky(scope: Scope) -> None:
        calls.append(scope)
        if len(calls) == 1:
            raise RuntimeError("model down")

    queue = DebounceQueue(flaky, delay_s=0, clock=clock)
    queue.touch(T1)
    queue.touch(T2)
    assert queue.run_due() == [T2] and queue.failures == 1
    assert "will run again" in caplog.text
    queue.touch(T1)
    assert queue.run_due() == [T1]


def test_a_busy_scope_goes_back_in_the_queue(clock: FixedClock) -> None:
    calls: list[Scope] = []

    def busy_once(scope: Scope) -> None:
        calls.append(scope)
        if len(calls) == 1:
            raise BusyError("a curation run for 'alice' is already running")

    queue = DebounceQueue(busy_once, delay_s=30, clock=clock)
    queue.touch(T1)
    clock.advance(seconds=30)
    assert queue.run_due() == [] and queue.pending() == [T1]
    assert (queue.busy, queue.failures) == (1, 0)
    clock.advance(seconds=29)
    assert queue.run_due() == []  # not before the delay has passed again
    clock.advance(seconds=1)
    assert queue.run_due() == [T1] and calls == [T1, T1]


def test_a_halted_queue_runs_nothing(clock: FixedClock) -> None:
    ran: list[Scope] = []
    queue = DebounceQueue(ran.append, delay_s=0, clock=clock)
    queue.touch(T1)
    queue.halt()
    assert queue.run_due() == [] and ran == []


def test_background_loop_runs_due_scopes() -> None:
    done = threading.Event()
    queue = DebounceQueue(lambda scope: done.set(), delay_s=0)
    queue.start(interval_s=0.01)
    try:
        queue.touch(T1)
        assert done.wait(10)
    finally:
        queue.stop()


def test_negative_delay() -> None:
    with pytest.raises(InvalidInputError):
        DebounceQueue(print, delay_s=-1)


def test_memory_curates_a_thread_once_it_is_quiet(data_dir: object, clock: FixedClock) -> None:
    from pathlib import Path

    from memstrata.api import Memory
    from memstrata.settings import load_settings

    with Memory.open(settings=load_settings(data_dir=Path(str(data_dir))), clock=clock) as mem:
        queue = mem.start_auto_curation(delay_s=30)
        queue.stop()  # drive it by hand with the fixed clock
        mem.remember("I really love hiking in the mountains.", T1)
        assert queue.pending() == [T1] and queue.run_due() == []
        clock.advance(seconds=31)
        assert queue.run_due() == [T1]
        doc, version = mem.doc("preferences", "alice")  # the user's one set, not the thread's
        assert version == 1 and "hiking" in doc.sections[0].bullets[0].text
        assert mem.doc("preferences", T1)[1] == 0
