"""Opening a memory for reads never waits for another process's write: a long forget (or
any writer) holding SQLite's write lock leaves `stats`, `search` and `list` answering, and the
data directory's enrolment is noted by the next opening instead."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import BusyError
from memstrata.settings import load_settings
from memstrata.store.sqlite import SqliteStore
from tests.conftest import FixedClock


@contextmanager
def write_lock_held(db: Path) -> Iterator[None]:
    """Another connection (as another process would) holds the database's write lock."""
    conn = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        conn.execute("COMMIT")
        conn.close()


def _open(data_dir: Path, clock: FixedClock) -> Memory:
    settings = load_settings(data_dir=data_dir)
    return Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64))


def test_reads_open_and_answer_while_another_writer_holds_the_lock(
    data_dir: Path, clock: FixedClock
) -> None:
    with _open(data_dir, clock) as mem:
        mem.remember(["I live in Cairo.", "我住在开罗"], "u")
        site = mem._site_of_dir()
        seen = {s.id: s.last_seen for s in mem.store.sites()}
    assert site is not None and site in seen

    clock.advance(seconds=60)
    db = load_settings(data_dir=data_dir).db_path
    # before: BusyError out of the opening, after the busy timeout
    with write_lock_held(db), _open(data_dir, clock) as mem:
        assert mem.stats("u").episodes == 2
        assert next(h.text for h in mem.search("Cairo", "u", wait=False)).endswith("Cairo.")
        assert len(mem.list("u", "episode")) == 2

    with _open(data_dir, clock) as mem:  # the lock gone: the next opening notes it was here
        assert {s.id: s.last_seen for s in mem.store.sites()}[site] > seen[site]


def test_a_write_without_waiting_refuses_at_once_and_others_still_wait(tmp_path: Path) -> None:
    db = tmp_path / "memstrata.db"
    store = SqliteStore(db, busy_timeout_ms=30_000)
    try:
        store.enrol_site("here", "a test directory")
        with write_lock_held(db), store.without_waiting(), pytest.raises(BusyError):
            store.enrol_site("here", "a test directory")
        store.enrol_site("here", "a test directory")  # the lock free: an ordinary write
        with write_lock_held(db):
            waited: list[bool] = []

            def write() -> None:  # an ordinary write waits for the lock, then goes on
                waited.append(not store.enrol_site("here", "a test directory"))

            writer = threading.Thread(target=write)
            writer.start()
            writer.join(0.3)
            assert writer.is_alive() and not waited  # waiting, not refused
        writer.join(30)
        assert waited == [True]
    finally:
        store.close()
