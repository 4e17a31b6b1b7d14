"""A read-write lock: many readers at once, or one writer.

A search reads an index while the change feed's catch-up (another request, the auto-curation
thread) writes to it. Searches share the lock; a writer waits for the readers inside to leave
and holds new ones back while it waits, so a stream of searches cannot starve it. Both sides
are reentrant for the thread holding them, and the writer may also read what it holds.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ReadWriteLock:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer: int | None = None  # the ident of the thread writing
        self._depth = 0  # how many times the writer holds the lock
        self._waiting = 0  # writers waiting for the readers to leave
        self._local = threading.local()  # this thread's read depth

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Hold the lock shared with other readers (waits while a writer holds or wants it)."""
        me = threading.get_ident()
        depth: int = getattr(self._local, "depth", 0)
        if depth or self._writer == me:  # already inside: re-enter without waiting
            self._local.depth = depth + 1
            try:
                yield
            finally:
                self._local.depth = depth
            return
        with self._cond:
            while self._writer is not None or self._waiting:
                self._cond.wait()
            self._readers += 1
        self._local.depth = 1
        try:
            yield
        finally:
            self._local.depth = 0
            with self._cond:
                self._readers -= 1
                if not self._readers:
                    self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the lock alone (waits for the readers inside to leave)."""
        me = threading.get_ident()
        with self._cond:
            if self._writer == me:
                self._depth += 1
            else:
                assert not getattr(self._local, "depth", 0), "a reader cannot become a writer"
                self._waiting += 1
                try:
                    while self._writer is not None or self._readers:
                        self._cond.wait()
                finally:
                    self._waiting -= 1
                self._writer, self._depth = me, 1
        try:
            yield
        finally:
            with self._cond:
                self._depth -= 1
                if not self._depth:
                    self._writer = None
                    self._cond.notify_all()
