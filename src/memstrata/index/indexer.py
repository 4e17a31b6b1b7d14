"""Embedding in the background: new turns are searchable lexically at once, densely soon after.

:class:`BackgroundIndexer` is one daemon thread beside an :class:`IndexManager`. It is told
which users have new records (:meth:`notify`, by the facade's writes in this process) and also
watches the store's generation of every user (:meth:`poll`, every ``poll_s``), so writes made
by another process (a CLI ingest beside the server) are embedded too. For each such user it
brings the index up to date (lexical entries at once, vectors the cache already holds at
once, the rest pending) and embeds what is pending, a batch at a time, while searches go on.

Several processes on one data directory (``serve --workers``) each run one, but only the one
holding the model lock (:class:`memstrata.index.leader.ModelLock`) runs the model; the others
put in the vectors it caches (:meth:`UserIndex.fill_from_cache`), so no turn is embedded
twice. If the leader exits, the operating system releases its lock and the next one to ask
takes over.

Nothing it holds is needed to recover: pending work is what the index has no vector for, and
the index is derived from the store, so after a restart (or a kill) the same turns are found
pending again and embedded (their vectors already computed come back from the cache).
A failing model is retried with a growing pause; the thread never dies of it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Final

from memstrata.index.leader import ModelLock
from memstrata.index.manager import IndexManager

log = logging.getLogger(__name__)

_RETRY_FIRST_S: Final = 1.0
_RETRY_MAX_S: Final = 60.0


class BackgroundIndexer:
    def __init__(
        self,
        manager: IndexManager,
        *,
        batch: int = 64,
        poll_s: float = 2.0,
        model_lock: ModelLock | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.manager = manager
        #: elects the one process that runs the model (no file: this one)
        self._model_lock = model_lock or ModelLock(None)
        self.batch = batch
        self.poll_s = poll_s
        self._clock = clock
        self._wanted: dict[str, None] = {}  # users to bring up to date, oldest first
        self._seen: dict[str, int] = {}  # user -> store generation last handled
        self._busy: str | None = None
        self._failures = 0
        self._retry_at = 0.0
        self._changed = threading.Condition()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        #: entries embedded since start, and the last error (None once a batch succeeds)
        self.embedded = 0
        self.last_error: str | None = None

    # control -----------------------------------------------------------------------
    def start(self) -> BackgroundIndexer:
        """Start the thread, with every user of the store to look at (work left pending by
        an earlier process is found and resumed)."""
        if self._thread is None:
            self.poll()
            self._thread = threading.Thread(target=self._run, name="memstrata-indexer", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop after the batch in hand (its vectors are kept); what is pending stays so."""
        self._stopping.set()
        with self._changed:
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self._model_lock.release()  # another process may lead

    @property
    def leading(self) -> bool:
        """Whether this process runs the model (it holds the lock, or there is none); asks
        for the lock when it does not hold it yet."""
        return self._model_lock.acquire()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def notify(self, user: str) -> None:
        """The user has new records: index them soon."""
        with self._changed:
            self._wanted[user] = None
            self._changed.notify_all()

    def poll(self) -> None:
        """Queue every user whose store generation moved since it was last handled."""
        store = self.manager.store
        moved = [u for u in store.users() if self._seen.get(u) != store.generation(u)]
        if moved:
            with self._changed:
                for user in moved:
                    self._wanted[user] = None
                self._changed.notify_all()

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until nothing is queued, being embedded or pending in a built index; whether
        that happened within ``timeout`` seconds."""
        deadline = None if timeout is None else self._clock() + timeout
        with self._changed:
            while self._wanted or self._busy is not None or self._pending_total():
                left = None if deadline is None else deadline - self._clock()
                if left is not None and left <= 0:
                    return False
                if not self.running:
                    return False
                self._changed.wait(0.1 if left is None else min(left, 0.1))
        return True

    def status(self) -> dict[str, int | str | bool | None]:
        """What the indexer is doing: pending entries in built indexes, users queued."""
        with self._changed:
            queued = len(self._wanted)
            busy = self._busy
        return {
            "running": self.running,
            "pending": self._pending_total(),
            "users_queued": queued,
            "indexing": busy,
            "embedded": self.embedded,
            "last_error": self.last_error,
        }

    def _pending_total(self) -> int:
        return sum(self.manager.pending(u) for u in self.manager.built())

    # the thread --------------------------------------------------------------------
    def _run(self) -> None:
        next_poll = self._clock() + self.poll_s
        while not self._stopping.is_set():
            user = self._next(next_poll)
            if self._clock() >= next_poll:
                try:
                    self.poll()
                except Exception as exc:  # a store hiccup must not end the thread
                    log.warning("the background indexer could not read the store: %s", exc)
                next_poll = self._clock() + self.poll_s
            if user is not None:
                self._index(user)

    def _next(self, next_poll: float) -> str | None:
        """The next user to index (None: time to poll, or stopping)."""
        with self._changed:
            while not self._stopping.is_set():
                now = self._clock()
                if self._wanted and now >= self._retry_at:
                    user = next(iter(self._wanted))
                    del self._wanted[user]
                    self._busy = user
                    return user
                wake = next_poll if not self._wanted else min(next_poll, self._retry_at)
                if now >= next_poll:
                    return None
                self._changed.wait(max(0.0, wake - now))
            return None

    def _index(self, user: str) -> None:
        try:
            head = self.manager.store.generation(user)
            if self.leading:
                done = self.manager.embed_pending(
                    user, batch=self.batch, stop=self._stopping.is_set, progress=self._progress
                )
            else:
                done = self.manager.fill_from_cache(user)
                if self.manager.pending(user):  # the leader has not got to them yet
                    with self._changed:
                        self._retry_at = self._clock() + self.poll_s
                        self._wanted.setdefault(user, None)
            self._seen[user] = head
            self.embedded += done
            self._failures = 0
            self.last_error = None
            if done:
                log.info("indexed %d entries of user %s in the background", done, user)
        except Exception as exc:  # the model or the store failed: try again later
            self._failures += 1
            pause = min(_RETRY_MAX_S, _RETRY_FIRST_S * 2 ** (self._failures - 1))
            self.last_error = f"{type(exc).__name__}: {exc}"
            log.warning(
                "background indexing of user %s failed (%s); retrying in %.0f s", user, exc, pause
            )
            with self._changed:
                self._retry_at = self._clock() + pause
                self._wanted.setdefault(user, None)
        finally:
            with self._changed:
                self._busy = None
                self._changed.notify_all()

    def _progress(self, done: int, left: int) -> None:
        """After each batch: wake whoever waits for the indexer to be idle."""
        with self._changed:
            self._changed.notify_all()
