"""Which process of a data directory runs the embedding model: the holder of a lock file.

Several processes may serve one data directory (``serve --workers``, a CLI ``ingest`` beside
a running server). Embedding the same turns in each would only divide the machine between
them, so one process at a time (the holder of an exclusive ``flock`` on ``indexer.lock``) runs
the model, and the others take the vectors it writes to the shared embedding cache. The
operating system releases the lock when its holder exits, however it exits, so the next
process to ask takes over.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from memstrata.util.durable import FileLock

log = logging.getLogger(__name__)


class ModelLock:
    """An exclusive, non-blocking lock on ``path`` (None: always held, no file)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock: FileLock | None = None
        self._guard = threading.Lock()

    @property
    def held(self) -> bool:
        return self.path is None or self._lock is not None

    def acquire(self) -> bool:
        """Take the lock if no other process holds it; whether this one holds it now. A lock
        file that cannot be opened (a read-only directory) counts as held: embedding here is
        better than embedding nowhere."""
        with self._guard:
            if self.held:
                return True
            assert self.path is not None
            try:
                lock = FileLock(self.path)
            except OSError as exc:
                log.warning("cannot open the indexer lock %s (%s); embedding here", self.path, exc)
                self.path = None
                return True
            try:
                taken = lock.acquire(wait=0)
            except OSError:
                taken = False
            if not taken:
                lock.close()
                return False
            self._lock = lock
            return True

    def release(self) -> None:
        with self._guard:
            if self._lock is not None:
                self._lock.close()  # closing the file releases the lock
                self._lock = None
