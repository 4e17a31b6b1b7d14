"""A bound on how long one statement waits for the database server's answer.

Neither driver bounds a wait for an answer: a server that stopped answering (hung, paused,
or behind a network that drops packets while the client's side still looks open) leaves the
calling thread blocked for hours, until the operating system's keepalive gives up. Every
statement of a server store, and every commit, is watched: when one has waited
``timeout_s`` the watchdog shuts the connection's socket down, which wakes the driver with a
lost connection; the caller turns that into a :class:`memstrata.errors.StoreError` saying the
server did not answer. One thread per store watches every connection.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Final

#: how long a statement or a commit may wait for the server before its connection is cut
STATEMENT_TIMEOUT_S: Final = 60.0


class Watch:
    """One watched wait; ``fired`` once the watchdog cut its connection."""

    __slots__ = ("deadline", "fired", "sever")

    def __init__(self, deadline: float, sever: Callable[[], None]) -> None:
        self.deadline = deadline
        self.sever = sever
        self.fired = False


def shut_down(fd: int) -> None:
    """Shut the socket ``fd`` down both ways: a thread blocked reading it wakes up."""
    with suppress(OSError):
        sock = socket.socket(fileno=os.dup(fd))
        try:
            sock.shutdown(socket.SHUT_RDWR)
        finally:
            sock.close()


class Watchdog:
    def __init__(self, timeout_s: float = STATEMENT_TIMEOUT_S) -> None:
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be positive, got {timeout_s}")
        self.timeout_s = timeout_s
        self._cond = threading.Condition()
        #: the waits watched, in the order of their deadlines (each is now + timeout_s)
        self._watches: dict[int, Watch] = {}
        self._thread: threading.Thread | None = None
        self._closed = False

    @contextmanager
    def watch(self, sever: Callable[[], None]) -> Iterator[Watch]:
        """Watch the block: ``sever()`` is called (from the watchdog's thread) once it has run
        ``timeout_s``; the watch says whether it was."""
        watch = Watch(time.monotonic() + self.timeout_s, sever)
        with self._cond:
            self._watches[id(watch)] = watch
            if self._thread is None and not self._closed:
                self._thread = threading.Thread(
                    target=self._run, name="memstrata-store-watchdog", daemon=True
                )
                self._thread.start()
            elif len(self._watches) == 1:
                self._cond.notify()
        try:
            yield watch
        finally:
            with self._cond:
                self._watches.pop(id(watch), None)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._watches and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
                key, watch = next(iter(self._watches.items()))
                delay = watch.deadline - time.monotonic()
                if delay > 0:
                    self._cond.wait(delay)
                    continue
                del self._watches[key]
                watch.fired = True
            watch.sever()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
