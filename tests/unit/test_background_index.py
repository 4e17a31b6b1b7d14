"""Embedding in the background: pending records are found lexically, then densely; pending
work survives a restart; searches racing the indexer stay correct; a forget racing a batch
leaves no cached vector behind."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from memstrata.api import Memory
from memstrata.embed.cache import text_hash, with_cache
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import EmbeddingError
from memstrata.model import Turn
from memstrata.settings import load_settings
from tests.conftest import FixedClock

TURNS = [
    Turn(text="we booked the flight to Tokyo for the spring", speaker="Ann"),
    Turn(text="周末我们去爬山，山顶的风景很好", speaker="Bo"),
    Turn(text="my daughter's piano lesson moved to Friday", speaker="Ann"),
    Turn(text="the database migration is due next week", speaker="Bo"),
]


class GatedEmbedder:
    """Hashing vectors, given out only while the gate is open; counts what it embedded."""

    def __init__(self, dim: int = 64) -> None:
        self.inner = HashingEmbedder(dim=dim)
        self.open = threading.Event()
        self.entered = threading.Event()
        self.fail = False
        self.embedded: list[str] = []

    @property
    def name(self) -> str:
        return "gated-hashing"

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.entered.set()
        if not self.open.wait(30):
            raise EmbeddingError("the gate stayed closed")
        if self.fail:
            raise EmbeddingError("the model is down")
        self.embedded.extend(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self.inner.embed_query(text)


def _open(data_dir: Path, clock: FixedClock, gate: GatedEmbedder, *, cache: bool) -> Memory:
    settings = load_settings(data_dir=data_dir)
    embedder = with_cache(gate, settings.embedding_cache_path) if cache else gate
    return Memory.open(settings=settings, clock=clock, embedder=embedder)


def _until(condition: Callable[[], bool], *, timeout: float) -> bool:
    """Whether the condition held within the timeout (polled; a loaded machine may be slow)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def _cached(db: Path, text: str) -> int:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT COUNT(*) FROM vectors WHERE hash = ?", [text_hash(text)])
        return int(row.fetchone()[0])


def test_pending_turns_are_found_lexically_then_densely(data_dir: Path, clock: FixedClock) -> None:
    gate = GatedEmbedder()
    with _open(data_dir, clock, gate, cache=False) as mem:
        mem.remember(TURNS, "u")
        hits = mem.search("piano lesson", "u", wait=False)
        assert hits.partial and hits.pending == len(TURNS)
        assert hits[0].text.endswith("piano lesson moved to Friday")
        assert all(h.components["dense"] == 0.0 for h in hits)
        assert mem.search("爬山", "u", wait=False)[0].speaker == "Bo"  # Chinese, lexically

        gate.open.set()
        assert mem.index("u") == {"u": len(TURNS)}
        hits = mem.search("piano lesson", "u", wait=False)
        assert not hits.partial and hits.pending == 0
        assert hits[0].text.endswith("piano lesson moved to Friday")
        assert hits[0].components["dense"] > 0


def test_a_search_waits_for_its_vectors_when_asked_or_when_no_indexer_runs(
    data_dir: Path, clock: FixedClock
) -> None:
    gate = GatedEmbedder()
    gate.open.set()
    with _open(data_dir, clock, gate, cache=False) as mem:
        mem.remember(TURNS, "u")
        assert not mem.search("flight", "u").partial  # nobody else would embed them
        mem.remember([Turn(text="the dentist is on Monday", speaker="Ann")], "u")
        assert mem.search("dentist", "u", wait=False).pending == 1
        assert not mem.search("dentist", "u", wait=True).partial
        with pytest.raises(Exception, match="wait must be true or false"):
            mem.search("dentist", "u", wait="yes")  # type: ignore[arg-type]


def test_the_background_indexer_embeds_new_turns_as_they_arrive(
    data_dir: Path, clock: FixedClock
) -> None:
    gate = GatedEmbedder()
    gate.open.set()
    with _open(data_dir, clock, gate, cache=False) as mem:
        indexer = mem.start_indexer(poll_s=0.05)
        mem.remember(TURNS, "u")
        assert indexer.wait_idle(timeout=20)
        hits = mem.search("database migration", "u")  # the indexer runs: no wait
        assert not hits.partial and hits[0].components["dense"] > 0
        assert indexer.status()["pending"] == 0 and indexer.embedded >= len(TURNS)
    assert not indexer.running


def test_the_indexer_sees_writes_of_another_process(data_dir: Path, clock: FixedClock) -> None:
    gate = GatedEmbedder()
    gate.open.set()
    with _open(data_dir, clock, gate, cache=False) as server:
        indexer = server.start_indexer(poll_s=0.05)
        server.remember(TURNS[:1], "u")
        assert indexer.wait_idle(timeout=20)
        with _open(data_dir, clock, GatedEmbedder(), cache=False) as other:
            other.remember(TURNS[1:], "u")  # another memory on the same store writes
        indexer.poll()
        assert indexer.wait_idle(timeout=20)
        assert server.pending("u") == 0
        assert len(gate.embedded) >= len(TURNS)


def test_pending_work_survives_a_restart(data_dir: Path, clock: FixedClock) -> None:
    closed = GatedEmbedder()
    closed.open.set()
    closed.fail = True  # the model fails: nothing gets embedded before the process ends
    with _open(data_dir, clock, closed, cache=True) as mem:
        mem.remember(TURNS, "u")
        assert mem.search("flight", "u", wait=False).pending == len(TURNS)

    working = GatedEmbedder()
    working.open.set()
    with _open(data_dir, clock, working, cache=True) as mem:
        assert mem.pending("u") == len(TURNS)  # found again from the store
        indexer = mem.start_indexer(poll_s=0.05)
        assert indexer.wait_idle(timeout=20)
        assert mem.pending("u") == 0

    again = GatedEmbedder()  # gate closed: would block if asked to embed anything
    with _open(data_dir, clock, again, cache=True) as mem:
        hits = mem.search("flight", "u", wait=False)
        assert not hits.partial and hits[0].components["dense"] > 0  # from the cache
        assert again.embedded == [] and not again.entered.is_set()


def test_a_failing_model_leaves_records_pending_and_is_retried(
    data_dir: Path, clock: FixedClock
) -> None:
    gate = GatedEmbedder()
    gate.open.set()
    gate.fail = True
    with _open(data_dir, clock, gate, cache=False) as mem:
        indexer = mem.start_indexer(poll_s=0.05)
        mem.remember(TURNS, "u")
        failed = _until(lambda: indexer.status()["last_error"] is not None, timeout=20)
        assert failed and indexer.running and not indexer.wait_idle(timeout=0.2)
        assert "the model is down" in str(indexer.status()["last_error"])
        assert mem.search("flight", "u", wait=False).pending == len(TURNS)
        gate.fail = False
        assert indexer.wait_idle(timeout=20)  # retried after its pause
        assert indexer.status()["last_error"] is None


def test_searches_racing_the_indexer_return_correct_results(
    data_dir: Path, clock: FixedClock
) -> None:
    words = ["flight", "piano", "garden", "budget", "museum", "coffee", "marathon", "guitar"]
    turns = [Turn(text=f"{words[i % 8]} note {i} about {words[(i * 3) % 8]}") for i in range(240)]
    gate = GatedEmbedder()
    gate.open.set()
    with _open(data_dir, clock, gate, cache=False) as mem:
        stored = {e.id: e.text for e in mem.remember(turns, "u")}
        mem.indexes.index("u")  # built, everything pending
        errors: list[BaseException] = []
        seen_pending: list[list[int]] = []

        def searcher(query: str) -> None:
            mine: list[int] = []
            try:
                for _ in range(40):
                    hits = mem.search(query, "u", k=10, wait=False)
                    ids = [h.id for h in hits]
                    assert len(ids) == 10 == len(set(ids))
                    assert all(h.text.endswith(stored[h.id]) for h in hits)
                    assert all(np.isfinite(h.score) for h in hits)
                    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
                    mine.append(hits.pending)
            except BaseException as exc:
                errors.append(exc)
            seen_pending.append(mine)

        threads = [threading.Thread(target=searcher, args=(q,)) for q in words[:4]]
        for t in threads:
            t.start()
        embedded = mem.indexes.embed_pending("u", batch=8)
        for t in threads:
            t.join()
        assert not errors, errors
        assert embedded == len(turns)
        for series in seen_pending:  # pending only ever goes down
            assert series == sorted(series, reverse=True)
        final = [h.id for h in mem.search("piano garden", "u", k=20)]

    with Memory.open(
        settings=load_settings(data_dir=data_dir), clock=clock, embedder=HashingEmbedder(dim=64)
    ) as fresh:  # the same vectors, computed in one go
        assert [h.id for h in fresh.search("piano garden", "u", k=20)] == final


def test_a_forget_racing_a_batch_leaves_no_cached_vector(data_dir: Path, clock: FixedClock) -> None:
    gate = GatedEmbedder()
    with _open(data_dir, clock, gate, cache=True) as mem:
        secret = mem.remember([Turn(text="the locker code is 4417", speaker="Ann")], "u")[0]
        mem.indexes.index("u")
        worker = threading.Thread(target=mem.indexes.embed_pending, args=("u",))
        worker.start()
        assert gate.entered.wait(10)  # the batch with the secret is being embedded
        forgetting = threading.Thread(target=mem.forget, args=(secret.id, "u"))
        forgetting.start()
        forgetting.join(0.3)
        assert forgetting.is_alive()  # the forget waits for the batch in hand
        gate.open.set()
        forgetting.join(20)
        worker.join(20)
        assert not forgetting.is_alive() and not worker.is_alive()
        assert _cached(data_dir / "embeddings.db", "Ann: the locker code is 4417") == 0
        assert mem.pending("u") == 0 and mem.search("locker", "u", wait=False) == []


# the CLI: ingest embeds with progress, `memstrata index`, a partial search says so ---------
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    from memstrata.cli import main

    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_the_cli_indexes_with_progress_and_says_when_a_search_is_partial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    where = ["--data-dir", str(tmp_path / "mem")]
    code, out, _ = _cli(
        [
            "ingest",
            str(FIXTURE),
            "--format",
            "locomo",
            "--user",
            "u",
            "--no-index",
            "--json",
            *where,
        ],
        capsys,
    )
    summary = json.loads(out)
    assert code == 0 and summary["pending"] == summary["turns"] > 0 and "embedded" not in summary

    code, out, err = _cli(["search", "dinner", "--user", "u", "--json", *where], capsys)
    assert code == 0 and json.loads(out)  # answered at once, by words
    assert f"partial: {summary['turns']} record(s)" in err

    code, out, _ = _cli(["index", "--json", *where], capsys)
    events = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and events[0] == {
        "event": "start",
        "user": "u",
        "done": 0,
        "left": summary["turns"],
    }
    assert [e["event"] for e in events[1:-1]] == ["progress"] * (len(events) - 2)
    assert events[-2]["left"] == 0 and events[-1]["total"] == summary["turns"]

    code, out, err = _cli(["search", "dinner", "--user", "u", *where], capsys)
    assert code == 0 and out and "partial" not in err

    code, out, _ = _cli(
        ["ingest", str(FIXTURE), "--format", "locomo", "--user", "v", "--json", *where], capsys
    )
    again = json.loads(out)  # the same turns for another user: every vector from the cache
    assert again["embedded"] == 0 and again["pending"] == 0
    code, _, err = _cli(["index", "--user", "nobody", *where], capsys)
    assert code != 0 and "no records of user 'nobody'" in err


def test_the_http_search_says_partial_and_can_wait(data_dir: Path, clock: FixedClock) -> None:
    from tests.keyed import keyed_client

    gate = GatedEmbedder()
    with _open(data_dir, clock, gate, cache=False) as mem:
        indexer = mem.start_indexer(poll_s=0.05)
        mem.remember(TURNS, "u")
        assert gate.entered.wait(10)  # the indexer is held at its first batch
        client = keyed_client(mem)
        page = client.get("/v1/search", params={"q": "piano", "user": "u"}).json()
        assert page["partial"] is True and page["pending"] == len(TURNS)
        assert page["items"][0]["text"].endswith("piano lesson moved to Friday")
        gate.open.set()
        page = client.get("/v1/search", params={"q": "piano", "user": "u", "wait": "true"}).json()
        assert page["partial"] is False and page["pending"] == 0
        assert page["items"][0]["components"]["dense"] > 0
        assert indexer.wait_idle(timeout=20)
        bad = client.get("/v1/search", params={"q": "piano", "user": "u", "wait": "maybe"})
        assert bad.status_code == 422


_CHILD = """
import sys, time
from pathlib import Path
sys.path.insert(0, {root!r})
from memstrata.api import Memory
from memstrata.embed.cache import with_cache
from memstrata.model import Turn
from memstrata.settings import load_settings
from tests.unit.test_background_index import GatedEmbedder

class Slow(GatedEmbedder):
    def embed_documents(self, texts):
        time.sleep(0.2)
        return super().embed_documents(texts)

gate = Slow()
gate.open.set()
settings = load_settings(data_dir=Path({data!r}))
mem = Memory.open(settings=settings, embedder=with_cache(gate, settings.embedding_cache_path))
mem.remember([Turn(text=f"note {{i}} about the garden") for i in range(200)], "u")
def progress(user, done, left):
    print(done, left, flush=True)
mem.index("u", progress=progress)
"""


def test_a_kill_midway_through_indexing_loses_no_work(data_dir: Path, clock: FixedClock) -> None:
    import os
    import signal
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[2])
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD.format(root=root, data=str(data_dir))],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
    )
    assert child.stdout is not None
    lines = []
    for line in child.stdout:  # wait for two batches to be in, then kill -9
        lines.append(line.split())
        if len(lines) == 3:
            os.kill(child.pid, signal.SIGKILL)
            break
    child.wait(30)
    child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    done_before = int(lines[-1][0])
    assert 0 < done_before < 200

    gate = GatedEmbedder()
    gate.open.set()
    with _open(data_dir, clock, gate, cache=True) as mem:
        left = mem.pending("u")
        assert 0 < left <= 200 - done_before  # what the killed process embedded is kept
        assert mem.index("u") == {"u": left}
        assert len(set(gate.embedded)) == len(gate.embedded) <= 2 * left  # two views each
        assert mem.pending("u") == 0
        assert len(mem.search("garden", "u", k=200, wait=False)) == 200


def test_of_two_processes_on_one_directory_one_runs_the_model(
    data_dir: Path, clock: FixedClock
) -> None:
    first, second = GatedEmbedder(), GatedEmbedder()
    first.open.set()
    second.open.set()
    with (
        _open(data_dir, clock, first, cache=True) as one,
        _open(data_dir, clock, second, cache=True) as two,
    ):
        leader = one.start_indexer(poll_s=0.05)
        assert leader.leading
        follower = two.start_indexer(poll_s=0.05)
        assert not follower.leading  # the lock file is held
        two.remember(TURNS, "u")  # written through the follower
        assert leader.wait_idle(timeout=20) and follower.wait_idle(timeout=20)
        assert second.embedded == [] and len(first.embedded) > 0  # the model ran once
        assert not two.search("piano", "u").partial and not one.search("piano", "u").partial
    # the leader gone, the next indexer takes the lock
    with _open(data_dir, clock, second, cache=True) as three:
        assert three.start_indexer(poll_s=0.05).leading


def test_an_index_beside_a_leading_process_takes_its_vectors_and_embeds_nothing(
    data_dir: Path, clock: FixedClock
) -> None:
    server_model, cli_model = GatedEmbedder(), GatedEmbedder()
    server_model.open.set()
    cli_model.open.set()
    with (
        _open(data_dir, clock, server_model, cache=True) as server,
        _open(data_dir, clock, cli_model, cache=True) as cli,
    ):
        server.start_indexer(poll_s=0.05)
        assert server.model_lock.acquire()
        cli.remember(TURNS, "u")  # a CLI ingest beside a running server
        events: list[tuple[int, int]] = []
        done = cli.index("u", progress=lambda _, d, left: events.append((d, left)), poll_s=0.05)
        assert done == {"u": len(TURNS)} and cli.pending("u") == 0
        assert cli_model.embedded == [] and server_model.embedded  # embedded once, there
        assert events[0] == (0, len(TURNS)) and events[-1] == (len(TURNS), 0)
        assert not cli.model_lock.held  # it never led


def test_a_forget_in_another_process_racing_a_batch_leaves_no_cached_vector(
    data_dir: Path, clock: FixedClock
) -> None:
    """Two memories on one data directory stand for two processes: the forget purges the
    vector cache before the other's batch in hand writes its vectors; the batch then finds
    the turn gone from the store and forgets what it wrote."""
    gate = GatedEmbedder()
    with _open(data_dir, clock, gate, cache=True) as mem:
        secret, _kept = mem.remember(
            [
                Turn(text="the locker code is 4417", speaker="Ann"),
                Turn(text="柜子的密码我记在本子上了", speaker="Ann"),
            ],
            "u",
        )
        mem.indexes.index("u")
        worker = threading.Thread(target=mem.indexes.embed_pending, args=("u",))
        worker.start()
        assert gate.entered.wait(10)  # the batch with the secret is being embedded
        with _open(data_dir, clock, GatedEmbedder(), cache=True) as other:
            other.forget(secret.id, "u")  # does not wait: another process's index
        gate.open.set()
        worker.join(20)
        assert not worker.is_alive()
        db = data_dir / "embeddings.db"
        assert _cached(db, "Ann: the locker code is 4417") == 0
        assert _cached(db, "Ann: 柜子的密码我记在本子上了") == 1  # a turn still stored keeps it
        hits = mem.search("locker code", "u", wait=False)
        assert mem.pending("u") == 0 and secret.id not in [h.id for h in hits]
