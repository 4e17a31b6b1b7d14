"""SIGKILL during ingest, document apply and consolidation: no acknowledged write is lost and
the store opens clean.

A child process (:mod:`tests.reliability.workers`) loops writes and prints one line per write
after the call returned; the parent kills it with SIGKILL at a random moment, then reopens the
data directory and checks: every acknowledged write is there, every write is whole or absent
(no half-applied ingest or document batch), ``PRAGMA integrity_check`` is ok, a write after the
crash works, and every line of the raw trace is a whole JSON object (no later append extended a
torn line). Each mode kills the same data directory again and again, so each child starts from
the state the previous crash left.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import time
from collections import Counter
from pathlib import Path

import pytest

from memstrata.document.service import document_from_json
from memstrata.model import DocumentKind, Scope
from tests.reliability import workers
from tests.reliability.sizes import report, size

USER = Scope(workers.CRASH_USER)
KILLS_PER_MODE = size(2, 20)


def _run_and_kill(mode: str, data_dir: Path, first: int, rng: random.Random) -> list[list[str]]:
    """Start a worker, let it acknowledge a few writes, SIGKILL it mid-loop; its acks."""
    ctx = workers.context()
    reader, writer = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=workers.crash, args=(mode, str(data_dir), first, writer))
    proc.start()
    writer.close()  # the child holds the only write end: its death ends the pipe
    acks: list[list[str]] = []
    try:
        assert reader.poll(60) and reader.recv_bytes() == b"ready", "worker did not start"
        target = rng.randint(1, 4)
        while len(acks) < target:
            assert reader.poll(60), "worker stalled"
            acks.append(reader.recv_bytes().decode().split())
        time.sleep(rng.uniform(0.0, 0.04))  # somewhere inside a later write
        proc.kill()  # SIGKILL
        proc.join(30)
        while True:  # what it acknowledged before it died
            try:
                acks.append(reader.recv_bytes().decode().split())
            except EOFError:
                break
    finally:
        proc.kill()
        proc.join(30)
        reader.close()
    assert proc.exitcode == -signal.SIGKILL, f"worker ended with {proc.exitcode}"
    return acks


def _check_clean(data_dir: Path, after: int) -> None:
    """The database passes its integrity check, takes a write, and the trace is whole."""
    with sqlite3.connect(data_dir / "memstrata.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with workers.open_memory(data_dir) as memory:
        memory.remember(f"written after crash {after}", USER, session_id="after")
    traces = sorted((data_dir / "trace").rglob("*.jsonl"))
    assert traces
    for path in traces:
        raw = path.read_bytes()
        assert raw.endswith(b"\n"), f"{path} ends inside a line"
        for number, line in enumerate(raw.split(b"\n")[:-1], 1):
            assert isinstance(json.loads(line), dict), f"{path}:{number} is not one whole event"


def _check_ingest(data_dir: Path, acks: list[list[str]]) -> int:
    with workers.open_memory(data_dir) as memory:
        texts = Counter(e.text for e in memory.store.iter_episodes(USER))
        ids = {e.id for e in memory.store.iter_episodes(USER)}
    batches = Counter(t.split()[1] for t in texts if t.startswith("ingest "))
    whole = workers.CONVERSATIONS * workers.TURNS_PER_CONVERSATION
    assert all(count == whole for count in batches.values()), f"half an ingest: {batches}"
    remembered = Counter(t.split()[1] for t in texts if t.startswith("remember "))
    assert all(count == workers.REMEMBERED for count in remembered.values())
    checked = 0
    for ack in acks:
        if ack[0] == "ingest":
            assert batches[ack[1]] == whole, f"acknowledged ingest {ack[1]} lost"
        else:
            assert set(ack[2:]) <= ids, f"acknowledged turns of {ack[1]} lost"
        checked += 1
    assert max(texts.values()) == 1  # nothing stored twice
    return checked


def _check_doc(data_dir: Path, acks: list[list[str]]) -> int:
    with workers.open_memory(data_dir) as memory:
        stored = memory.store.get_document(USER, DocumentKind.TOPIC, "garden")
        if stored is None:
            assert not acks
            return 0
        doc = document_from_json(stored.content)
        bullets = [b for s in doc.sections for b in s.bullets]
        cited = sorted({c.episode_id for b in bullets for c in b.citations})
        found = {e.id for e in memory.store.get_episodes(USER, cited)}
        assert found == set(cited), "a bullet cites a turn that is not stored"
    batches = Counter(b.text.split()[1] for b in bullets)
    assert all(count == 2 for count in batches.values()), f"half a batch: {batches}"
    assert len(batches) == stored.version  # one whole batch per applied version
    for ack in acks:
        assert batches[ack[1]] == 2, f"acknowledged batch {ack[1]} lost"
    return len(acks)


def _check_consolidate(data_dir: Path, acks: list[list[str]]) -> int:
    with workers.open_memory(data_dir) as memory:

        def bullet_texts() -> Counter[str]:
            return Counter(
                b.text
                for d in memory.store.list_documents(USER)
                if d.kind == DocumentKind.TOPIC
                for s in document_from_json(d.content).sections
                for b in s.bullets
            )

        before = bullet_texts()
        for ack in acks:  # consolidated before the acknowledgement: facts and bullets
            for fact_id in ack[2:]:
                fact = memory.get(fact_id, USER)
                assert before[fact.text] == 1, f"acknowledged consolidation of {fact_id} lost"
        memory.consolidate(USER)  # the next run finishes what the crash interrupted
        after = bullet_texts()
        facts = list(memory.store.iter_facts(USER))
        assert all(after[f.text] == 1 for f in facts), "a fact without its one bullet"
        assert max(after.values()) == 1
    return len(acks)


CHECKS = {"ingest": _check_ingest, "doc": _check_doc, "consolidate": _check_consolidate}


@pytest.mark.parametrize("mode", sorted(CHECKS))
def test_sigkill_loses_no_acknowledged_write(mode: str, tmp_path: Path) -> None:
    rng = random.Random(f"{mode}-{os.getpid()}-{time.time_ns()}")
    data_dir = tmp_path / "mem"
    acks: list[list[str]] = []
    checked = 0
    for kill in range(KILLS_PER_MODE):
        acks += _run_and_kill(mode, data_dir, kill * 100_000, rng)
        _check_clean(data_dir, kill)
        checked = CHECKS[mode](data_dir, acks)
    assert checked >= KILLS_PER_MODE
    report(f"sigkill-{mode}", kills=KILLS_PER_MODE, acknowledged_writes_checked=checked)
