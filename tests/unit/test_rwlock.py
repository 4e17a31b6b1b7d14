"""The read-write lock that lets searches share an index while a catch-up writes to it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from memstrata.index.rwlock import ReadWriteLock


def test_readers_share_and_a_writer_excludes_them() -> None:
    lock = ReadWriteLock()
    inside = threading.Barrier(2, timeout=5)

    def reader() -> None:
        with lock.reading():
            inside.wait()  # both readers are inside at once

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert not any(t.is_alive() for t in threads)

    entered = threading.Event()

    def late_reader() -> None:
        with lock.reading():
            entered.set()

    with lock.writing():
        t = threading.Thread(target=late_reader)
        t.start()
        assert not entered.wait(0.2)  # held back while the writer is inside
    assert entered.wait(5)
    t.join(5)
    assert not t.is_alive()


def test_a_waiting_writer_holds_new_readers_back() -> None:
    lock = ReadWriteLock()
    order: list[str] = []
    first_in, writer_waiting = threading.Event(), threading.Event()

    def first_reader() -> None:
        with lock.reading():
            first_in.set()
            writer_waiting.wait(5)
            order.append("reader 1")

    def writer() -> None:
        with lock.writing():
            order.append("writer")

    def second_reader() -> None:
        with lock.reading():
            order.append("reader 2")

    r1 = threading.Thread(target=first_reader)
    r1.start()
    assert first_in.wait(5)
    w = threading.Thread(target=writer)
    w.start()
    deadline = time.monotonic() + 5
    while not lock._waiting:  # the writer is queued behind the first reader
        assert time.monotonic() < deadline, "the writer never queued behind the reader"
        time.sleep(0.001)
    r2 = threading.Thread(target=second_reader)
    r2.start()
    writer_waiting.set()
    for t in (r1, w, r2):
        t.join(5)
    assert not any(t.is_alive() for t in (r1, w, r2)), order
    assert order == ["reader 1", "writer", "reader 2"]


def _finishes(body: Callable[[], None], seconds: float = 5) -> None:
    """Run ``body`` on a thread of its own and fail if it has not returned in time (a lock
    that deadlocks fails the test instead of hanging it)."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            body()
        except BaseException as exc:  # reported below, on the test's thread
            errors.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), "deadlocked"
    assert not errors, errors


def test_reentrant_for_the_holder() -> None:
    lock = ReadWriteLock()
    depths: list[tuple[int, int]] = []

    def holder() -> None:
        with lock.writing(), lock.writing(), lock.reading():
            depths.append((lock._depth, lock._readers))
        with lock.reading(), lock.reading():
            depths.append((lock._depth, lock._readers))

    _finishes(holder)
    assert depths == [(2, 0), (0, 1)]  # the writer's read did not count as a reader
    assert lock._writer is None and lock._readers == 0 and lock._waiting == 0

    def other_writer() -> None:  # released fully above: another thread gets it at once
        with lock.writing():
            depths.append((lock._depth, lock._readers))

    _finishes(other_writer)
    assert depths[-1] == (1, 0)
