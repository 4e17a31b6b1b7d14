"""Curation runs: one active run per (layer, key), cancellable, observable.

A second start for a (layer, key) that has an active run raises :class:`BusyError`. A run
reports progress as events into a bounded ring buffer; a reader replays them from a cursor
(the sequence number of the last event it saw) and learns when events it asked for have already
been overwritten. Cancellation is cooperative: the run checks :meth:`Run.cancelled` between
steps and stops. A run started while another runs in the same thread is that run's child: its
events replay with its parent's, and cancelling the parent cancels it. Each run says what
started it (:data:`TRIGGERS`): a caller's ``request``, or ``auto`` (the debounce queue curating
a quiet thread); a child has its parent's trigger.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Final, Literal

from memstrata.errors import BusyError, InvalidInputError, NotFoundError
from memstrata.ids import new_id
from memstrata.model import JsonValue, Scope
from memstrata.ports import Clock, SystemClock

#: what started a run: a caller asking for it, or the automatic curation of a quiet thread
Trigger = Literal["request", "auto"]
TRIGGERS: Final[tuple[Trigger, ...]] = ("request", "auto")


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

    def __init__(
        self,
        registry: RunRegistry,
        layer: str,
        key: str,
        *,
        scope: Scope | None = None,
        parent: Run | None = None,
        trigger: Trigger = "request",
    ) -> None:
        self.id = new_id("run")
        self.layer = layer
        self.key = key
        self.scope: Scope | None = scope if scope is not None or parent is None else parent.scope
        self.parent = parent
        self.trigger: Trigger = trigger if parent is None else parent.trigger
        self.state = RunState.RUNNING
        self.started_at = registry.now()
        self.finished_at: datetime | None = None
        #: what the run produced, set by the code doing the work
        self.result: dict[str, JsonValue] | None = None
        #: why a failed run failed: the exception's class and message
        self.error: str | None = None
        self._registry = registry
        self._cancel = threading.Event()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set() or (self.parent is not None and self.parent.cancelled)

    @property
    def root_id(self) -> str:
        """The id of the outermost run this one belongs to (its own when it has no parent)."""
        return self.id if self.parent is None else self.parent.root_id

    def cancel(self) -> None:
        self._cancel.set()

    def emit(self, kind: str, **data: JsonValue) -> Event:
        return self._registry.emit(self, kind, dict(data))


class RunRegistry:
    """Active runs, recent finished ones and the event buffer, for one process."""

    def __init__(self, *, capacity: int = 1000, clock: Clock | None = None) -> None:
        if capacity < 1:
            raise InvalidInputError("the event buffer needs room for at least one event")
        self._clock = clock or SystemClock()
        self._capacity = capacity
        self._lock = threading.Lock()
        self._active: dict[tuple[str, str], Run] = {}
        self._runs: dict[str, Run] = {}
        self._roots: dict[str, str] = {}  # run id -> its outermost run's id
        self._events: deque[Event] = deque(maxlen=capacity)
        self._seq = 0
        self._listeners: list[Callable[[Event], object]] = []
        self._current = threading.local()

    def now(self) -> datetime:
        return self._clock.now()

    def subscribe(self, listener: Callable[[Event], object]) -> None:
        """Call ``listener`` with every event as it is emitted (errors in it are ignored)."""
        with self._lock:
            self._listeners.append(listener)

    def open(
        self, layer: str, key: str, *, scope: Scope | None = None, trigger: Trigger = "request"
    ) -> Run:
        """Register the one active run for (layer, key), to be carried by :meth:`running`
        (in this thread or another); ``BusyError`` if one is active. A run opened while
        another runs in this thread is its child (and has its trigger)."""
        if trigger not in TRIGGERS:
            raise InvalidInputError(f"unknown trigger {trigger!r}; expected request or auto")
        parent: Run | None = getattr(self._current, "run", None)
        with self._lock:
            busy = self._active.get((layer, key))
            if busy is not None:
                raise BusyError(f"a {layer} run for {key!r} is already running ({busy.id})")
            run = Run(self, layer, key, scope=scope, parent=parent, trigger=trigger)
            self._active[(layer, key)] = run
            self._runs[run.id] = run
            self._roots[run.id] = run.root_id
            self._forget_old()
        run.emit("started", layer=layer, key=key, trigger=run.trigger)
        return run

    @contextmanager
    def running(self, run: Run) -> Iterator[Run]:
        """Carry an opened run: the body is its work; its end (done, cancelled, or failed
        with the exception, which is raised again) is recorded and its key released."""
        outer = getattr(self._current, "run", None)
        self._current.run = run
        try:
            yield run
        except Exception as exc:
            run.error = f"{type(exc).__name__}: {exc}"
            self._finish(run, RunState.FAILED, error=type(exc).__name__, message=str(exc))
            raise
        else:
            self._finish(run, RunState.CANCELLED if run.cancelled else RunState.DONE)
        finally:
            self._current.run = outer

    @contextmanager
    def start(
        self, layer: str, key: str, *, scope: Scope | None = None, trigger: Trigger = "request"
    ) -> Iterator[Run]:
        """Run the body as the one active run for (layer, key); ``BusyError`` if one is."""
        run = self.open(layer, key, scope=scope, trigger=trigger)
        with self.running(run):
            yield run

    def _finish(self, run: Run, state: RunState, **data: JsonValue) -> None:
        """Record the run's end: its state and key first (whoever sees the last event can
        start the next run), then the last event, then ``finished_at`` (whoever sees it set
        finds every event of the run in the buffer)."""
        run.state = state
        with self._lock:
            self._active.pop((run.layer, run.key), None)
        run.emit(state.value, **data)
        run.finished_at = self._clock.now()

    def _forget_old(self) -> None:
        """Keep at most ``capacity`` runs: the oldest finished ones go first (under the lock)."""
        excess = len(self._runs) - self._capacity
        if excess <= 0:
            return
        for run_id in [i for i, r in self._runs.items() if r.state != RunState.RUNNING][:excess]:
            del self._runs[run_id]
            self._roots.pop(run_id, None)

    def get(self, run_id: str) -> Run:
        with self._lock:
            run = self._runs.get(run_id)
        if run is None:
            raise NotFoundError(f"no run {run_id}")
        return run

    def cancel(self, run_id: str) -> Run:
        run = self.get(run_id)
        run.cancel()
        return run

    def active(self) -> list[Run]:
        with self._lock:
            return list(self._active.values())

    def runs(self, layer: str | None = None) -> list[Run]:
        """The runs this registry remembers (active and recent), oldest first."""
        with self._lock:
            found = [r for r in self._runs.values() if layer is None or r.layer == layer]
        return sorted(found, key=lambda r: r.id)

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
        """Events with ``seq > cursor`` (optionally of one run and the runs inside it),
        oldest first."""
        with self._lock:
            events = list(self._events)
            head = self._seq
            roots = dict(self._roots)
        oldest = events[0].seq if events else head + 1
        missed = max(0, oldest - cursor - 1)
        chosen = tuple(
            e
            for e in events
            if e.seq > cursor
            and (run_id is None or e.run_id == run_id or roots.get(e.run_id) == run_id)
        )
        return Replay(chosen, head, missed)
