"""Curation runs: one active run per (layer, key), cancellable, observable.

A second start for a (layer, key) that has an active run raises :class:`BusyError`. A run
reports progress as events into a bounded ring buffer; a reader replays them from a cursor
(the sequence number of the last event it saw) and learns when events it asked for have already
been overwritten. Cancellation is cooperative: the run checks :meth:`Run.cancelled` between
steps and stops.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from memstrata.errors import BusyError, InvalidInputError, NotFoundError
from memstrata.ids import new_id
from memstrata.model import JsonValue
from memstrata.ports import Clock, SystemClock


class RunState(StrEnum):
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class Event:
    seq: int
    run_id: str
    at: datetime
    kind: str
    data: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Replay:
    """Events after a cursor; ``missed`` counts those already overwritten in the buffer."""

    events: tuple[Event, ...]
    cursor: int
    missed: int


class Run:
    """One run; handed to the code doing the work."""

    def __init__(self, registry: RunRegistry, layer: str, key: str) -> None:
        self.id = new_id("run")
        self.layer = layer
        self.key = key
        self.state = RunState.RUNNING
        self._registry = registry
        self._cancel = threading.Event()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    def cancel(self) -> None:
        self._cancel.set()

    def emit(self, kind: str, **data: JsonValue) -> Event:
        return self._registry.emit(self, kind, dict(data))


class RunRegistry:
    """Active runs and the event buffer, for one process."""

    def __init__(self, *, capacity: int = 1000, clock: Clock | None = None) -> None:
        if capacity < 1:
            raise InvalidInputError("the event buffer needs room for at least one event")
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self._active: dict[tuple[str, str], Run] = {}
        self._runs: dict[str, Run] = {}
        self._events: deque[Event] = deque(maxlen=capacity)
        self._seq = 0
        self._listeners: list[Callable[[Event], object]] = []

    def subscribe(self, listener: Callable[[Event], object]) -> None:
        """Call ``listener`` with every event as it is emitted (errors in it are ignored)."""
        with self._lock:
            self._listeners.append(listener)

    @contextmanager
    def start(self, layer: str, key: str) -> Iterator[Run]:
        """Run the body as the one active run for (layer, key); ``BusyError`` if one is."""
        with self._lock:
            busy = self._active.get((layer, key))
            if busy is not None:
                raise BusyError(f"a {layer} run for {key!r} is already running ({busy.id})")
            run = Run(self, layer, key)
            self._active[(layer, key)] = run
            self._runs[run.id] = run
        run.emit("started", layer=layer, key=key)
        try:
            yield run
        except Exception as exc:
            run.state = RunState.FAILED
            run.emit("failed", error=type(exc).__name__, message=str(exc))
            raise
        else:
            run.state = RunState.CANCELLED if run.cancelled else RunState.DONE
            run.emit(run.state.value)
        finally:
            with self._lock:
                self._active.pop((layer, key), None)

    def cancel(self, run_id: str) -> Run:
        with self._lock:
            run = self._runs.get(run_id)
        if run is None:
            raise NotFoundError(f"no run {run_id}")
        run.cancel()
        return run

    def active(self) -> list[Run]:
        with self._lock:
            return list(self._active.values())

    def emit(self, run: Run, kind: str, data: dict[str, JsonValue]) -> Event:
        with self._lock:
            self._seq += 1
            event = Event(self._seq, run.id, self._clock.now(), kind, data)
            self._events.append(event)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # a follower must never break the run it follows
                continue
        return event

    def replay(self, cursor: int = 0, *, run_id: str | None = None) -> Replay:
        """Events with ``seq > cursor`` (optionally of one run), oldest first."""
        with self._lock:
            events = list(self._events)
            head = self._seq
        oldest = events[0].seq if events else head + 1
        missed = max(0, oldest - cursor - 1)
        chosen = tuple(
            e for e in events if e.seq > cursor and (run_id is None or e.run_id == run_id)
        )
        return Replay(chosen, head, missed)
