"""Reading the raw trace past torn lines, and mending them in place."""

from __future__ import annotations

import json
from pathlib import Path

from memstrata.trace import JsonlTrace, mend_torn, scan_file
from tests.conftest import FixedClock

TORN = b'{"at": "2026-01-01T12:00:00.000000Z", "surface": "chat", "event": "episode", "te'


def _trace(tmp_path: Path) -> tuple[JsonlTrace, Path]:
    trace = JsonlTrace(tmp_path / "trace", clock=FixedClock())
    trace.append("chat", [{"event": "episode", "id": "ep_1", "text": "one"}])
    [file] = trace.files()
    return trace, file


def test_a_torn_last_line_is_skipped_by_read_and_ended_by_mending(tmp_path: Path) -> None:
    trace, file = _trace(tmp_path)
    with file.open("ab") as fh:
        fh.write(TORN)
    lines = list(scan_file(file))
    assert [(ln.event is None, ln.terminated) for ln in lines] == [(False, True), (True, False)]
    assert [e["id"] for e in trace.read()] == ["ep_1"]
    size = file.stat().st_size
    assert mend_torn(file) == 1
    assert file.read_bytes().endswith(b" " * len(TORN) + b"\n")
    assert file.stat().st_size == size + 1
    assert all(ln.terminated and (ln.event or not ln.raw.strip()) for ln in scan_file(file))
    trace.append("chat", [{"event": "episode", "id": "ep_2", "text": "two"}])
    assert [e["id"] for e in trace.read()] == ["ep_1", "ep_2"]


def test_an_append_after_a_torn_line_is_readable_before_any_mending(tmp_path: Path) -> None:
    trace, file = _trace(tmp_path)
    with file.open("ab") as fh:
        fh.write(TORN)
    trace.append("chat", [{"event": "episode", "id": "ep_2", "text": "two"}])
    assert [e["id"] for e in trace.read()] == ["ep_1", "ep_2"]
    assert mend_torn(file) == 1  # the torn fragment, on its own line
    assert [e["id"] for e in trace.read()] == ["ep_1", "ep_2"]


def test_an_event_an_older_version_wrote_on_a_torn_line_is_kept_and_no_line_moves(
    tmp_path: Path,
) -> None:
    trace, file = _trace(tmp_path)
    two = {"at": "2026-01-01T12:00:01.000000Z", "surface": "chat", "event": "episode"}
    with file.open("ab") as fh:  # an older version appended onto the torn line
        fh.write(TORN + json.dumps({**two, "id": "ep_2", "text": "two"}).encode() + b"\n")
    trace.append("chat", [{"event": "episode", "id": "ep_3", "text": "three"}])
    before = [(ln.offset, len(ln.raw)) for ln in scan_file(file)]
    assert [e["id"] for e in trace.read()] == ["ep_1", "ep_3"]
    assert mend_torn(file) == 1
    assert [(ln.offset, len(ln.raw)) for ln in scan_file(file)] == before
    assert [e["id"] for e in trace.read()] == ["ep_1", "ep_2", "ep_3"]
    assert mend_torn(file) == 0
    assert trace.redact(["ep_2"], "user-request") == 1
    assert b'"two"' not in file.read_bytes()
    assert [json.loads(ln.raw)["event"] for ln in scan_file(file)][1] == "redacted"
