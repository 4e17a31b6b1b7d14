"""The raw trace: append-only JSONL per surface per day, never raising, never interleaving."""

from __future__ import annotations

import json
import multiprocessing
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.trace import JsonlTrace, surface_slug
from tests.conftest import FixedClock

LONG = "长" * 3000 + "x" * 5000  # lines far larger than a pipe buffer


def _writer(root: str, worker: int, count: int) -> None:
    trace = JsonlTrace(root, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    for i in range(count):
        assert trace.append(
            "chat",
            [{"worker": worker, "i": i, "text": LONG}, {"worker": worker, "i": i, "second": True}],
        )


def _check(root: Path, workers: int, count: int) -> None:
    path = root / "chat" / "2026-02-03.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == workers * count * 2
    seen = set()
    for line in lines:
        event = json.loads(line)  # an interleaved line would not parse
        seen.add((event["worker"], event["i"], event.get("second", False)))
        if "text" in event:
            assert event["text"] == LONG
    assert len(seen) == workers * count * 2


def test_files_per_surface_per_day(tmp_path: Path) -> None:
    clock = FixedClock(datetime(2026, 2, 3, 23, 59, tzinfo=UTC))
    trace = JsonlTrace(tmp_path, clock=clock)
    assert trace.append("chat", [{"text": "你好"}])
    clock.advance(minutes=2)
    assert trace.append("Note Book!", [{"text": "next day"}])
    assert (tmp_path / "chat" / "2026-02-03.jsonl").exists()
    assert (tmp_path / "note-book" / "2026-02-04.jsonl").exists()
    events = list(trace.read())
    assert [e["text"] for e in events] == ["你好", "next day"]
    assert events[0]["at"] == "2026-02-03T23:59:00.000000Z"


def test_concurrent_threads_never_interleave(tmp_path: Path) -> None:
    threads = [threading.Thread(target=_writer, args=(str(tmp_path), w, 40)) for w in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _check(tmp_path, 6, 40)


def test_concurrent_processes_never_interleave(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 30)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    _check(tmp_path, 4, 30)


def test_failures_are_swallowed_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    trace = JsonlTrace(blocker / "trace")
    assert trace.append("chat", [{"text": "lost but harmless"}]) is False
    assert trace.failures == 1
    assert "trace append failed" in caplog.text


def test_unserialisable_values_do_not_raise(tmp_path: Path) -> None:
    trace = JsonlTrace(tmp_path)
    assert trace.append("chat", [{"odd": object()}])


@pytest.mark.parametrize(
    ("surface", "slug"),
    [("chat", "chat"), ("../../etc", "etc"), ("", "unknown"), ("笔记", "笔记"), ("a/../b", "a-b")],
)
def test_surface_names_cannot_escape_the_trace_directory(surface: str, slug: str) -> None:
    assert surface_slug(surface) == slug
