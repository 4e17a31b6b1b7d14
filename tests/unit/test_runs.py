"""Curation runs: busy, cancel, ring buffer replay from a cursor."""

from __future__ import annotations

import threading

import pytest

from memstrata.curate.runs import RunRegistry, RunState
from memstrata.errors import BusyError, InvalidInputError, NotFoundError
from tests.conftest import FixedClock


def test_one_active_run_per_layer_and_key() -> None:
    runs = RunRegistry()
    with runs.start("topic", "travel") as run:
        with pytest.raises(BusyError, match="already running"), runs.start("topic", "travel"):
            pass
        with runs.start("topic", "work"):  # another key is free
            pass
        with runs.start("profile", "travel"):  # another layer too
            pass
        assert [r.id for r in runs.active()] == [run.id]
    assert run.state == RunState.DONE
    with runs.start("topic", "travel") as again:  # free again once done
        assert again.id != run.id


def test_cancellation_is_cooperative(clock: FixedClock) -> None:
    runs = RunRegistry(clock=clock)
    steps = []
    started = threading.Event()
    release = threading.Event()

    def work() -> None:
        with runs.start("topic", "t") as run:
            started.set()
            for step in range(100):
                if run.cancelled:
                    break
                steps.append(step)
                if step == 2:
                    release.wait(5)

    worker = threading.Thread(target=work)
    worker.start()
    started.wait(5)
    [active] = runs.active()
    runs.cancel(active.id)
    release.set()
    worker.join(5)
    assert steps == [0, 1, 2] and active.state == RunState.CANCELLED
    assert [e.kind for e in runs.replay(run_id=active.id).events] == ["started", "cancelled"]
    with pytest.raises(NotFoundError):
        runs.cancel("run_01AAAAAAAAAAAAAAAAAAAAAAAA")


def test_failures_are_recorded_and_raised() -> None:
    runs = RunRegistry()
    with pytest.raises(RuntimeError), runs.start("topic", "t"):
        raise RuntimeError("boom")
    last = runs.replay().events[-1]
    assert last.kind == "failed" and last.data == {"error": "RuntimeError", "message": "boom"}
    with runs.start("topic", "t"):  # the failed run released its key
        pass


def test_replay_from_a_cursor_and_overwritten_events() -> None:
    runs = RunRegistry(capacity=5)
    with runs.start("topic", "t") as run:
        for i in range(3):
            run.emit("progress", done=i)
    first = runs.replay(0)
    assert [e.kind for e in first.events] == ["started", "progress", "progress", "progress", "done"]
    assert first.missed == 0 and first.cursor == 5
    assert runs.replay(first.cursor).events == ()
    with runs.start("topic", "t") as run:
        run.emit("progress", done=1)
    later = runs.replay(first.cursor)
    assert [e.kind for e in later.events] == ["started", "progress", "done"]
    assert later.missed == 0
    behind = runs.replay(1)  # events 2 and 3 fell out of the 5-event buffer
    assert behind.missed == 2 and behind.events[0].seq == 4
    with pytest.raises(InvalidInputError):
        RunRegistry(capacity=0)


def test_followers_see_events_as_they_happen() -> None:
    runs = RunRegistry()
    seen: list[str] = []
    runs.subscribe(lambda e: seen.append(e.kind))
    runs.subscribe(lambda e: 1 / 0)  # a broken follower changes nothing
    with runs.start("topic", "t") as run:
        run.emit("progress")
    assert seen == ["started", "progress", "done"]


def test_a_run_started_inside_another_is_its_child() -> None:
    runs = RunRegistry()
    with runs.start("curation", "alice") as outer:
        with runs.start("document", "alice/tea") as inner:
            inner.emit("applied", version=1)
        assert inner.parent is outer and inner.root_id == outer.id
        outer.cancel()
        with runs.start("document", "alice/home") as cancelled_child:
            assert cancelled_child.cancelled  # cancelling a run cancels what runs inside it
    kinds = [(e.run_id == outer.id, e.kind) for e in runs.replay(run_id=outer.id).events]
    assert kinds == [
        (True, "started"),
        (False, "started"),
        (False, "applied"),
        (False, "done"),
        (False, "started"),
        (False, "cancelled"),
        (True, "cancelled"),
    ]
    assert [e.kind for e in runs.replay(run_id=inner.id).events] == ["started", "applied", "done"]
    assert runs.get(inner.id) is inner and [r.id for r in runs.runs("curation")] == [outer.id]
    assert outer.finished_at is not None and outer.state == RunState.CANCELLED
    with pytest.raises(NotFoundError):
        runs.get("run_01AAAAAAAAAAAAAAAAAAAAAAAA")


def test_a_run_opened_here_can_be_carried_in_another_thread() -> None:
    runs = RunRegistry()
    run = runs.open("curation", "alice")
    with pytest.raises(BusyError):
        runs.open("curation", "alice")

    def work() -> None:
        with runs.running(run):
            run.emit("progress")

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(5)
    assert run.state == RunState.DONE and runs.active() == []
    assert [e.kind for e in runs.replay(run_id=run.id).events] == ["started", "progress", "done"]


def test_only_the_most_recent_finished_runs_are_kept() -> None:
    runs = RunRegistry(capacity=3)
    with runs.start("curation", "held") as held:
        for i in range(5):
            with runs.start("curation", f"k{i}"):
                pass
        kept = runs.runs()
        assert held in kept and len(kept) == 3  # an active run is never dropped
    assert [r.key for r in kept[1:]] == ["k3", "k4"]
