"""Deleting a turn erases every copy of it: the raw trace line and the cached vectors."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.cache import text_hash, with_cache
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import StoreError
from memstrata.model import Turn
from memstrata.settings import load_settings
from memstrata.trace import JsonlTrace
from tests.conftest import FixedClock

SECRET = "我的新地址是梧桐路 88 号 and the door code is 4417"


def test_redact_overwrites_only_the_named_events_in_place(tmp_path: Path) -> None:
    trace = JsonlTrace(tmp_path, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    trace.append("chat", [{"event": "episode", "id": "ep_1", "text": SECRET}])
    trace.append("chat", [{"event": "episode", "id": "ep_2", "text": "mentions ep_1 only"}])
    trace.append("import", [{"event": "episode", "id": "ep_1", "text": SECRET + " again"}])
    files = sorted(tmp_path.glob("*/*.jsonl"))
    sizes = [f.stat().st_size for f in files]
    assert trace.redact(["ep_1", "ep_missing"], "user_request") == 2
    assert [f.stat().st_size for f in files] == sizes  # same length: no line moved
    raw = b"".join(f.read_bytes() for f in files).decode("utf-8")
    assert "梧桐路" not in raw and "door code" not in raw
    events = list(trace.read())
    assert [e["event"] for e in events] == ["redacted", "episode", "redacted"]
    assert events[0] == {
        "at": "2026-02-03T00:00:00.000000Z",
        "surface": "chat",
        "id": "ep_1",
        "event": "redacted",
        "reason": "user_request",
    }
    assert events[1]["text"] == "mentions ep_1 only"  # another item's text naming it stays
    trace.append("chat", [{"event": "episode", "id": "ep_3", "text": "after"}])
    assert [e["id"] for e in trace.read("chat")] == ["ep_1", "ep_2", "ep_3"]
    assert trace.redact(["ep_1"], "user_request") == 0  # already a tombstone


def test_redact_without_a_trace_directory_is_a_no_op(tmp_path: Path) -> None:
    assert JsonlTrace(tmp_path / "absent").redact(["ep_1"], "user_request") == 0


def _memory(data_dir: Path, clock: FixedClock) -> Memory:
    embedder = with_cache(
        BlendEmbedder(
            [HashingEmbedder(dim=32), HashingEmbedder(dim=48)],
            {"question": [1, 0], "dialogue": [1, 1]},
        ),
        data_dir / "vectors.db",
    )
    return Memory.open(settings=load_settings(data_dir=data_dir), clock=clock, embedder=embedder)


def _cached(db: Path, text: str) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT COUNT(*) FROM vectors WHERE hash = ?", [text_hash(text)])
        return int(row.fetchone()[0])


def test_deleting_a_turn_erases_its_trace_line_and_its_cached_vectors(
    data_dir: Path, clock: FixedClock
) -> None:
    with _memory(data_dir, clock) as mem:
        turns = [
            Turn(text="hello there", speaker="Ann"),
            Turn(text=SECRET, speaker="Ann"),
            Turn(text="see you", speaker="Ann"),
        ]
        _, secret, last = mem.remember(turns, "u", surface="chat")
        mem.search("door code", "u")  # builds the index: every view embedded and cached
        db = data_dir / "vectors.db"
        said, after, before = f"Ann: {SECRET}", "Ann: see you", "Ann: hello there"
        assert _cached(db, said) == 2  # one row per model of the blend
        assert _cached(db, f"{said}\n{after}") == 2  # the next turn's view, with it as context
        report = mem.delete(secret.id, "u")
        assert report.deleted == (secret.id,)
        trace = "".join(p.read_text("utf-8") for p in (data_dir / "trace").glob("*/*.jsonl"))
        assert "door code" not in trace and "梧桐路" not in trace
        assert secret.id in trace and last.id in trace and "see you" in trace
        mem.search("door code", "u")  # the index reads the change feed and drops its copies
        assert _cached(db, said) == 0 and _cached(db, f"{said}\n{after}") == 0
        assert _cached(db, f"{before}\n{after}") == 2  # the next turn's new view
        assert _cached(db, before) == 2 and _cached(db, after) == 2
        hits = mem.search("door code 4417", "u", k=5)
        assert secret.id not in {h.id for h in hits}
        assert all("door code" not in h.text for h in hits)


def test_a_delete_that_cannot_erase_the_trace_says_so(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with _memory(data_dir, clock) as mem:
        (episode,) = mem.remember([Turn(text=SECRET)], "u")

        def refuse(ids: object, reason: str) -> int:
            raise OSError("disk is read-only")

        assert mem.trace is not None
        monkeypatch.setattr(mem.trace, "redact", refuse)
        with pytest.raises(StoreError, match="raw trace line could not be erased"):
            mem.delete(episode.id, "u")
        files = (data_dir / "trace").glob("*/*.jsonl")
        lines = [json.loads(x) for p in files for x in p.read_text("utf-8").splitlines()]
        assert lines and lines[0]["text"] == SECRET


def _append_many(root: str, count: int) -> None:
    trace = JsonlTrace(root, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    for i in range(count):
        assert trace.append("chat", [{"event": "episode", "id": f"ep_w{i}", "text": SECRET * 20}])


def test_redacting_beside_appending_processes_loses_and_corrupts_nothing(tmp_path: Path) -> None:
    import multiprocessing

    trace = JsonlTrace(tmp_path, clock=FixedClock(datetime(2026, 2, 3, tzinfo=UTC)))
    trace.append("chat", [{"event": "episode", "id": f"ep_{i}", "text": SECRET} for i in range(50)])
    ctx = multiprocessing.get_context("spawn")
    writers = [ctx.Process(target=_append_many, args=(str(tmp_path), 200)) for _ in range(2)]
    for w in writers:
        w.start()
    pending = [f"ep_{i}" for i in range(0, 50, 2)]
    redacted = 0
    while pending and any(w.is_alive() for w in writers):  # redact while they append
        redacted += trace.redact([pending.pop()], "user_request")
        time.sleep(0.01)
    redacted += trace.redact(pending, "user_request")
    for w in writers:
        w.join(timeout=120)
        assert w.exitcode == 0
    assert redacted == 25
    events = list(trace.read("chat"))  # every line still parses
    assert len(events) == 50 + 2 * 200
    kinds = {e["id"]: e["event"] for e in events if not str(e["id"]).startswith("ep_w")}
    assert all(kinds[f"ep_{i}"] == ("redacted" if i % 2 == 0 else "episode") for i in range(50))
    appended = [e for e in events if str(e["id"]).startswith("ep_w")]
    assert all(e["text"] == SECRET * 20 for e in appended)
