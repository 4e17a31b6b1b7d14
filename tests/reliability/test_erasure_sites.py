"""A forget reaches the copies in every data directory sharing the store (many machines on one
database): the raw trace lines, saved search indexes and cached vectors another data directory
made of a turn go when that directory next opens or sweeps, proven by a scan of its every byte;
the journal keeps the erased texts until then, and no longer than the wait for one not seen.

Data directory B captures and searches the turns, so it holds every copy; data directory A,
which never built an index, forgets them. Each case runs on a SQLite store file outside both
data directories, and on PostgreSQL and MySQL/MariaDB when their test servers are given.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.model import Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.contract.backends import BACKENDS, fresh_url
from tests.reliability.scan import scan
from tests.reliability.test_erasure import EN, ZH, _cached, _reach_everything


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path, env: dict[str, str]) -> Iterator[str]:
    (tmp_path / "db").mkdir()
    with fresh_url(request.param, tmp_path / "db") as url:
        yield url


def _open(data_dir: Path, store_url: str, clock: FixedClock | None = None) -> Memory:
    return Memory.open(settings=load_settings(data_dir=data_dir), store_url=store_url, clock=clock)


def _copies(data_dir: Path) -> set[str]:
    """The files of ``data_dir`` holding a form of either turn."""
    return {str(f.path.relative_to(data_dir)) for f in scan(data_dir, [EN, ZH])}


def _reached_by_b(
    tmp_path: Path, store_url: str, clock: FixedClock | None = None
) -> tuple[Path, dict[str, str], list[str]]:
    """B's data directory after B captured, curated and searched the turns, then closed (its
    index saved); the turns' ids by text, and the texts embedded from them."""
    b_dir = tmp_path / "b"
    with _open(b_dir, store_url, clock) as b:
        ids, embedded = _reach_everything(b)
        b.indexes.maybe_save("u")
        b.indexes.wait()
    copies = _copies(b_dir)
    assert any(c.startswith("trace/") for c in copies), copies
    assert any(c.startswith("index/") for c in copies), copies
    assert _cached(b_dir, embedded) > 0
    return b_dir, ids, embedded


def _assert_no_copy(data_dir: Path, embedded: list[str]) -> None:
    assert _copies(data_dir) == set()
    if (data_dir / "embeddings.db").exists():
        assert _cached(data_dir, embedded) == 0


def _assert_store_free(tmp_path: Path, store_url: str) -> None:
    """The SQLite store file (with its log) holds no byte of either turn; a server's files
    are not ours to read."""
    if store_url.startswith("sqlite"):
        assert scan(tmp_path / "db", [EN, ZH]) == []


def test_a_forget_in_one_data_directory_erases_the_copies_of_another_on_its_next_open(
    tmp_path: Path, store_url: str
) -> None:
    b_dir, ids, embedded = _reached_by_b(tmp_path, store_url)
    with _open(tmp_path / "a", store_url) as a:
        reports = [a.forget(i, "u") for i in ids.values()]
        assert all(r.counts["sites_waiting"] == 1 for r in reports)  # B has still to erase
        pending = a.store.pending_erasures()
        assert len(pending) == 2 and all(EN in r.texts or ZH in r.texts for r in pending)
        assert _copies(b_dir)  # B has not opened since: its copies are there
        with _open(b_dir, store_url) as b:  # opening applies what B missed
            _assert_no_copy(b_dir, embedded)
            hits = b.search("Zanskarvale 景德镇", "u", k=10)
            assert not any("Zanskarvale" in h.text or "景德镇" in h.text for h in hits)
        assert a.store.pending_erasures() == []  # every data directory applied it: done
        for episode_id in ids.values():
            record = a.store.find_erasure(Scope("u"), episode_id)
            assert record is not None and record.done and record.texts == ()
    _assert_no_copy(tmp_path / "a", embedded)
    _assert_no_copy(b_dir, embedded)
    _assert_store_free(tmp_path, store_url)


def test_a_running_data_directory_erases_its_copies_at_its_next_sweep(
    tmp_path: Path, store_url: str
) -> None:
    b_dir, ids, embedded = _reached_by_b(tmp_path, store_url)
    with _open(b_dir, store_url) as b, _open(tmp_path / "a", store_url) as a:
        b.search("Zanskarvale", "u", k=3)  # B serves from its index meanwhile
        b.start_erasure_sweep(0.05)
        for episode_id in ids.values():
            a.forget(episode_id, "u")
        deadline = time.monotonic() + 60
        while a.store.pending_erasures() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert a.store.pending_erasures() == []
        _assert_no_copy(b_dir, embedded)
        hits = b.search("Zanskarvale 景德镇", "u", k=10)
        assert not any("Zanskarvale" in h.text or "景德镇" in h.text for h in hits)
        # a retry through A, then through B, says the turn is already forgotten
        for memory in (a, b):
            with pytest.raises(Exception, match="already forgotten"):
                memory.forget(ids[EN], "u")
    _assert_store_free(tmp_path, store_url)


def test_a_data_directory_away_longer_than_the_wait_erases_by_id_on_its_return(
    tmp_path: Path, store_url: str
) -> None:
    clock = FixedClock()
    b_dir, ids, embedded = _reached_by_b(tmp_path, store_url, clock)
    clock.advance(hours=25)  # B is not seen for longer than the wait (24 h)
    with _open(tmp_path / "a", store_url, clock) as a:
        report = a.forget(ids[EN], "u")
        assert "sites_waiting" not in report.counts  # not waited for: done, texts dropped
        assert a.store.pending_erasures() == []
    assert _copies(b_dir)
    with _open(b_dir, store_url, clock):  # back: the erasure's texts are gone, its ids are not
        assert scan(b_dir, [EN]) == []
        assert _cached(b_dir, embedded) == 0  # the whole cache was dropped
        trace = "".join(p.read_text("utf-8") for p in (b_dir / "trace").rglob("*.jsonl"))
        assert ids[EN] in trace and "redacted" in trace and ZH in trace  # ZH was not forgotten
