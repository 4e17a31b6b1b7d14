"""A per-thread debounce queue: curate a conversation once it has gone quiet.

Each capture ``touch``es its scope (user + thread). A scope becomes due when nothing has touched
it for ``delay_s`` seconds (default 30): many turns in a burst cost one curation run. Due scopes
are handed to the action one at a time. An action that finds the scope busy (``BusyError``:
another run holds it) is tried again once ``delay_s`` has passed, so no quiet scope is lost; an
action that fails is logged, counted and run again the next time the scope becomes due (a
new turn). Nothing is ever raised into the capture path.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from memstrata.errors import BusyError, InvalidInputError
from memstrata.model import Scope
from memstrata.ports import Clock, SystemClock

log = logging.getLogger(__name__)


class DebounceQueue:
    def __init__(
        self,
        action: Callable[[Scope], object],
        *,
        delay_s: float = 30.0,
        clock: Clock | None = None,
    ) -> None:
        if delay_s < 0:
            raise InvalidInputError("the debounce delay cannot be negative")
        self.action = action
        self.delay_s = delay_s
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._last: dict[Scope, datetime] = {}
        self._stop = threading.Event()
        self._halted = threading.Event()
        self._thread: threading.Thread | None = None
        self.failures = 0
        self.busy = 0  # scopes found busy and put back for later

    def touch(self, scope: Scope) -> None:
        with self._lock:
            self._last[scope] = self._clock.now()

    def pending(self) -> list[Scope]:
        with self._lock:
            return list(self._last)

    def due(self) -> list[Scope]:
        """Scopes quiet for at least the delay; they leave the queue."""
        now = self._clock.now()
        with self._lock:
            ready = [s for s, t in self._last.items() if (now - t).total_seconds() >= self.delay_s]
            for scope in ready:
                del self._last[scope]
        return ready

    def run_due(self) -> list[Scope]:
        """Run the action for every due scope (until the queue is halted); returns those it
        ran for. A busy scope goes back in the queue, due again after the delay."""
        ran = []
        for scope in self.due():
            if self._halted.is_set():  # what is left waits for no one
                break
            try:
                self.action(scope)
                ran.append(scope)
            except BusyError as exc:
                self.busy += 1
                self.touch(scope)
                log.info(
                    "curation of %s is busy (%s); tried again in %gs", scope, exc, self.delay_s
                )
            except Exception:  # a failed curation must not stop the others
                self.failures += 1
                log.warning(
                    "curation of %s failed; it will run again when due", scope, exc_info=True
                )
        return ran

    def start(self, interval_s: float = 1.0) -> None:
        """Check for due scopes every ``interval_s`` seconds in a daemon thread."""
        if self._thread is not None:
            return
        self._stop.clear()

        def loop() -> None:
            while not self._stop.wait(interval_s):
                self.run_due()

        self._thread = threading.Thread(target=loop, name="memstrata-curation", daemon=True)
        self._thread.start()

    def halt(self) -> None:
        """Run nothing more, by hand or in the background (the scope being curated
        finishes): for closing the memory."""
        self._halted.set()
        self._stop.set()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
