"""A small pool of driver connections (for drivers without one of their own: PyMySQL).

At most ``size`` connections are lent at once; a borrower waits up to ``timeout_s`` for one.
Idle connections are reused last-in first-out; one idle longer than ``check_after_s`` is
checked (``alive``) before it is lent. A connection whose use raised a disconnect is closed,
never lent again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, Final

from memstrata.errors import BusyError

CHECK_AFTER_S: Final = 30.0


class ConnectionPool:
    def __init__(
        self,
        connect: Callable[[], Any],
        *,
        size: int,
        timeout_s: float,
        alive: Callable[[Any], bool],
        broken: Callable[[BaseException], bool],
        close: Callable[[Any], None],
    ) -> None:
        self._connect = connect
        self._alive = alive
        self._broken = broken
        self._close = close
        self._timeout_s = timeout_s
        self._slots = threading.BoundedSemaphore(size)
        self._lock = threading.Lock()
        self._idle: list[tuple[Any, float]] = []
        self._closed = False

    def put_idle(self, conn: Any) -> None:
        with self._lock:
            self._idle.append((conn, time.monotonic()))

    @contextmanager
    def connection(self) -> Iterator[Any]:
        if not self._slots.acquire(timeout=self._timeout_s):
            raise BusyError(
                f"every database connection stayed busy for {self._timeout_s:g} s; retry later"
            )
        try:
            conn = self._take()
            try:
                yield conn
            except BaseException as exc:
                if self._broken(exc):
                    self._discard(conn)
                else:
                    self.put_idle(conn)
                raise
            self.put_idle(conn)
        finally:
            self._slots.release()

    def _take(self) -> Any:
        while True:
            with self._lock:
                if self._closed:
                    raise RuntimeError("the connection pool is closed")
                idle = self._idle.pop() if self._idle else None
            if idle is None:
                return self._connect()
            conn, since = idle
            if time.monotonic() - since < CHECK_AFTER_S or self._alive(conn):
                return conn
            self._discard(conn)

    def _discard(self, conn: Any) -> None:
        with suppress(Exception):  # a broken connection may fail to close; it is gone
            self._close(conn)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn, _ in idle:
            self._discard(conn)
