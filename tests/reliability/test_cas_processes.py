"""Threads in several processes increment one counter in a fact and one in a curated bullet
with compare-and-swap (re-read and retry on conflict): no update may be lost, and blind updates
(no version) beside them must outlast the contention without a conflict error."""

from __future__ import annotations

import json
from pathlib import Path

from tests.reliability import workers
from tests.reliability.sizes import report, size

PROCESSES = size(2, 4)
THREADS = size(2, 4)
ROUNDS = size(5, 25)  # increments of each counter per thread


def test_no_update_is_lost(tmp_path: Path) -> None:
    data_dir = tmp_path / "mem"
    fact_id, bullet_id = workers.setup_counters(data_dir)
    ctx = workers.context()
    pipes = [ctx.Pipe(duplex=False) for _ in range(PROCESSES)]
    procs = [
        ctx.Process(
            target=workers.cas, args=(str(data_dir), fact_id, bullet_id, THREADS, ROUNDS, w)
        )
        for _, w in pipes
    ]
    for proc in procs:
        proc.start()
    summaries = []
    try:
        for (reader, writer), proc in zip(pipes, procs, strict=True):
            writer.close()
            assert reader.poll(240), "a counting process stalled"
            summaries.append(json.loads(reader.recv_bytes()))
            proc.join(60)
            assert proc.exitcode == 0
    finally:
        for proc in procs:
            proc.kill()
            proc.join(10)
    failures = [f for s in summaries for f in s["failures"]]
    assert not failures, failures
    expected = PROCESSES * THREADS * ROUNDS
    assert sum(s["fact"] for s in summaries) == expected
    assert sum(s["doc"] for s in summaries) == expected
    assert workers.read_counters(data_dir, fact_id, bullet_id) == (expected, expected)
    report(
        "cas",
        processes=PROCESSES,
        threads=THREADS,
        cas_updates=2 * expected,
        conflicts_retried=sum(s["conflicts"] for s in summaries),
        blind_updates=sum(s["blind"] for s in summaries),
    )
