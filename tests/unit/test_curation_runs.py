"""Curation runs in the background (``Memory.start_run``): a report when done, one per scope,
cancellation before the next step, and closing the memory stops them."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.curate.runs import Run, RunState
from memstrata.errors import BusyError, InvalidInputError


def _wait(run: Run) -> None:
    for _ in range(3000):
        if run.finished_at is not None:
            return
        threading.Event().wait(0.01)
    raise AssertionError(f"run {run.id} did not end")


def test_a_background_run_extracts_consolidates_and_reports(memory: Memory) -> None:
    memory.remember(["I moved to Hangzhou last year.", "I love Longjing tea."], "alice")
    run = memory.start_run("alice")
    _wait(run)
    assert run.state == RunState.DONE and run.result is not None
    extraction, consolidation = run.result["extraction"], run.result["consolidation"]
    assert extraction["stored"] and consolidation["documents"]
    assert memory.list("alice", "document")
    kinds = [e.kind for e in memory.runs.replay(run_id=run.id).events]
    assert kinds[0] == "started" and kinds[-2:] == ["report", "done"]
    assert kinds.count("started") > 1  # the documents it wrote are its children
    only = memory.start_run("alice", "extract")
    _wait(only)
    assert only.result == {"kind": "extract", "extraction": only.result["extraction"]}
    with pytest.raises(InvalidInputError, match="mode"):
        memory.start_run("alice", mode="tidy")
    with pytest.raises(InvalidInputError, match="kind"):
        memory.start_run("alice", "summarise")  # type: ignore[arg-type]


def test_one_run_per_scope_and_cancel_stops_before_the_next_step(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("I moved to Hangzhou last year.", "alice")
    entered, release = threading.Event(), threading.Event()
    extract = memory.extract

    def slow(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(30)
        return extract(*args, **kwargs)

    monkeypatch.setattr(memory, "extract", slow)
    run = memory.start_run("alice")
    assert entered.wait(30)
    with pytest.raises(BusyError):
        memory.start_run("alice")
    other = memory.start_run("bob", "consolidate", extract=False)  # another scope is free
    _wait(other)
    memory.runs.cancel(run.id)
    release.set()
    _wait(run)
    assert run.state == RunState.CANCELLED and run.result is not None
    assert "consolidation" not in run.result and memory.list("alice", "document") == []


def test_a_failed_run_is_recorded(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError("extractor exploded")

    monkeypatch.setattr(memory, "extract", broken)
    run = memory.start_run("alice")
    _wait(run)
    last = memory.runs.replay(run_id=run.id).events[-1]
    assert run.state == RunState.FAILED and last.data["message"] == "extractor exploded"


def test_closing_the_memory_cancels_and_waits_for_runs(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("I moved to Hangzhou last year.", "alice")
    entered = threading.Event()
    extract = memory.extract

    def slow(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        run = memory.runs.active()[0]
        while not run.cancelled:
            threading.Event().wait(0.01)
        return extract(*args, **kwargs)

    monkeypatch.setattr(memory, "extract", slow)
    run = memory.start_run("alice")
    assert entered.wait(30)
    memory.stop_runs()
    assert run.state == RunState.CANCELLED
