"""Four processes of four threads each make 200 writes apiece (remember, ingest, and
compare-and-swap increments of one shared fact) against one SQLite data directory, while the
parent follows the change feed with an index. Nothing acknowledged may be lost: every write
is there, the counts are exact, no id is given twice, the change feed names every record once
in order, and the index that followed the feed holds exactly the store's records."""

from __future__ import annotations

import json
import re
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from memstrata.errors import ConflictError
from memstrata.index.manager import IndexManager
from memstrata.model import ChangeOp, Fact, Scope, Turn
from tests.reliability import workers
from tests.reliability.sizes import report

USER = "many"
PROCESSES = 4
WRITES = 200  # per process
THREADS = 4  # per process
INGEST_TURNS = 2
_COUNT = re.compile(r"count (\d+)")


def writer(data_dir: str, proc: int, fact_id: str, conn: Connection) -> None:
    """One process: THREADS threads share one Memory and make WRITES writes between them;
    each write is recorded only once its call has returned."""
    memory = workers.open_memory(data_dir)
    scope = Scope(USER)
    lock = threading.Lock()
    done: dict[str, Any] = {"remembered": {}, "ingested": [], "cas": 0, "conflicts": 0}
    failures: list[str] = []

    def increment() -> None:
        while True:
            fact = memory.get(fact_id, scope)
            assert isinstance(fact, Fact)
            found = _COUNT.search(fact.text)
            assert found is not None
            text = f"the shared count {int(found.group(1)) + 1}"
            try:
                memory.update(fact_id, scope, expected_version=fact.version, text=text)
            except ConflictError:
                with lock:
                    done["conflicts"] += 1
                continue
            with lock:
                done["cas"] += 1
            return

    def work(thread: int) -> None:
        source = Path(data_dir).parent / f"ingest-{proc}-{thread}.jsonl"
        try:
            for n in range(thread, WRITES, THREADS):
                tag = f"p{proc}w{n}"
                if n % 10 < 6:
                    (episode,) = memory.remember([Turn(text=f"remembered {tag}")], scope)
                    with lock:
                        done["remembered"][episode.id] = episode.text
                elif n % 10 < 8:
                    texts = [f"ingested {tag} part {i}" for i in range(INGEST_TURNS)]
                    lines = [
                        json.dumps({"text": t, "thread": tag, "speaker": "Ann"}) for t in texts
                    ]
                    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
                    memory.ingest(source, USER, fmt="jsonl")
                    with lock:
                        done["ingested"].extend(texts)
                else:
                    increment()
        except Exception as exc:  # reported to the parent, which fails the test
            with lock:
                failures.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    memory.close()
    conn.send_bytes(json.dumps({**done, "failures": failures}).encode())


def test_concurrent_writes_of_four_processes_lose_nothing(tmp_path: Path) -> None:
    data_dir = tmp_path / "mem"
    scope = Scope(USER)
    with workers.open_memory(data_dir) as memory:
        fact = memory.add_fact("the shared count 0", scope, supersede=False)
    ctx = workers.context()
    pipes = [ctx.Pipe(duplex=False) for _ in range(PROCESSES)]
    procs = [
        ctx.Process(target=writer, args=(str(data_dir), p, fact.id, w))
        for p, (_, w) in enumerate(pipes)
    ]
    follower = workers.open_memory(data_dir)  # follows the change feed while they write
    manager = IndexManager(follower.store, follower.embedder)
    manager.index(USER)
    catch_ups = 0
    summaries: list[dict[str, Any]] = []
    try:
        for proc in procs:
            proc.start()
        for (reader, writer_end), proc in zip(pipes, procs, strict=True):
            writer_end.close()
            deadline = time.monotonic() + 300
            while not reader.poll(0.05):
                assert time.monotonic() < deadline, "a writing process stalled"
                assert proc.is_alive() or reader.poll(), f"a writer died: {proc.exitcode}"
                manager.index(USER)  # catch up mid-run, writers going
                catch_ups += 1
            summaries.append(json.loads(reader.recv_bytes()))
            proc.join(60)
            assert proc.exitcode == 0
    finally:
        for proc in procs:
            proc.kill()
            proc.join(10)
    failures = [f for s in summaries for f in s["failures"]]
    assert not failures, failures[:5]

    remembered: dict[str, str] = {}
    for s in summaries:
        assert not remembered.keys() & s["remembered"].keys(), "an id was given twice"
        remembered.update(s["remembered"])
    ingested = [t for s in summaries for t in s["ingested"]]
    increments = sum(s["cas"] for s in summaries)
    assert len(remembered) == PROCESSES * WRITES * 6 // 10
    assert len(ingested) == PROCESSES * WRITES * 2 // 10 * INGEST_TURNS
    assert increments == PROCESSES * WRITES * 2 // 10

    store = follower.store
    episodes = list(store.iter_episodes(scope))
    ids = [e.id for e in episodes]
    assert len(ids) == len(set(ids)), "duplicate episode ids in the store"
    texts = {e.id: e.text for e in episodes}
    assert all(texts.get(i) == t for i, t in remembered.items()), "a remembered turn is lost"
    assert set(ingested) <= set(texts.values()), "an ingested turn is lost"
    manual = 1  # the episode the hand-added fact cites
    assert len(episodes) == len(remembered) + len(ingested) + manual  # nothing extra either
    final = store.get_fact(scope, fact.id)
    assert _COUNT.search(final.text).group(1) == str(increments)  # type: ignore[union-attr]
    assert final.version == fact.version + increments

    changes = store.changes_since(USER, 0)  # under the page size: all of them
    assert len(changes) < 10_000
    seqs = [c.seq for c in changes]
    assert seqs == sorted(set(seqs)), "the change feed is out of order or repeats a seq"
    assert store.generation(USER) == seqs[-1]
    upserted = [c.item_id for c in changes if c.op == ChangeOp.UPSERT]
    episode_changes = [i for i in upserted if i.startswith("ep_")]
    assert sorted(episode_changes) == sorted(ids), "the feed must name each episode once"
    assert upserted.count(fact.id) == 1 + increments
    assert not [c for c in changes if c.op == ChangeOp.DELETE]

    followed = manager.index(USER)
    assert set(followed.catalog.slots) == {*ids, fact.id}, "the followed index differs"
    fresh = IndexManager(store, follower.embedder).index(USER)
    assert set(fresh.catalog.slots) == set(followed.catalog.slots)
    follower.close()
    report(
        "write_processes",
        processes=PROCESSES,
        writes=PROCESSES * WRITES,
        episodes=len(episodes),
        cas_increments=increments,
        conflicts_retried=sum(s["conflicts"] for s in summaries),
        feed_catch_ups=catch_ups,
    )
