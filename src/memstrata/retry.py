"""Retrying: a write that lost a compare-and-swap race, or that a database server refused for a
moment (jittered exponential backoff up to a deadline), and a call to a remote service that
answered "later" (:func:`retry_remote`).

``Memory.update`` without an explicit version re-reads and writes again each time another writer
got in first; under heavy contention (many threads and processes on one item) a fixed number of
retries is not enough, while retrying at once only repeats the collision. Each wait is drawn
between half and all of a delay that doubles up to a ceiling, until the deadline has passed.
A server record store retries a transaction the same way when the server reports a deadlock
or serialization failure, or a connection dropped before the commit (:func:`retry_transient`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Final, TypeVar

from memstrata import telemetry
from memstrata.errors import ConflictError

T = TypeVar("T")

#: how long an update without an explicit version keeps retrying conflicts, in seconds
UPDATE_DEADLINE_S: Final = 5.0
_FIRST_DELAY_S: Final = 0.002
_MAX_DELAY_S: Final = 0.25


#: how the backoff waits and tells the time (module attributes, so a test can replace them)
wait: Callable[[float], None] = time.sleep
now: Callable[[], float] = time.monotonic


def retry_conflicts(
    attempt: Callable[[], T],
    *,
    deadline_s: float | None = None,
    sleep: Callable[[float], None] | None = None,
    clock: Callable[[], float] | None = None,
) -> T:
    """``attempt()``, called again after each :class:`ConflictError` until it succeeds, raises
    another error, or ``deadline_s`` (default :data:`UPDATE_DEADLINE_S`) has passed, when the
    last conflict is raised. ``attempt`` must re-read what it writes. ``sleep`` and ``clock``
    default to :data:`wait` and :data:`now` as they are at the call."""
    limit = UPDATE_DEADLINE_S if deadline_s is None else deadline_s
    return _with_backoff(attempt, _is_conflict, limit, sleep or wait, clock or now, count=True)


#: how long a server record store keeps retrying a transaction refused for a moment, in seconds
TRANSIENT_DEADLINE_S: Final = 10.0


def retry_transient(
    attempt: Callable[[], T],
    transient: Callable[[BaseException], bool],
    *,
    deadline_s: float = TRANSIENT_DEADLINE_S,
) -> T:
    """``attempt()``, called again after each exception ``transient`` accepts until it
    succeeds, raises another exception, or ``deadline_s`` has passed, when the last one is
    raised. ``attempt`` must be one whole transaction, safe to run again after a rollback."""
    return _with_backoff(attempt, transient, deadline_s, wait, now, count=False)


def _is_conflict(exc: BaseException) -> bool:
    return isinstance(exc, ConflictError)


def _with_backoff(
    attempt: Callable[[], T],
    again: Callable[[BaseException], bool],
    limit: float,
    sleep: Callable[[float], None],
    clock: Callable[[], float],
    *,
    count: bool,
) -> T:
    start = clock()
    delay = _FIRST_DELAY_S
    while True:
        try:
            return attempt()
        except Exception as exc:
            if not again(exc):
                raise
            remaining = limit - (clock() - start)
            if remaining <= 0:
                if count:
                    telemetry.record(telemetry.CONFLICT_RETRY, outcome="gave_up")
                raise
            if count:
                telemetry.record(telemetry.CONFLICT_RETRY, outcome="retried")
            sleep(min(remaining, random.uniform(delay / 2, delay)))
            delay = min(2 * delay, _MAX_DELAY_S)


#: how many times a transient failure of a remote call is retried, and the backoff's bounds
TRANSIENT_RETRIES: Final = 3
TRANSIENT_FIRST_DELAY_S: Final = 1.0
TRANSIENT_MAX_DELAY_S: Final = 30.0
#: the longest ``Retry-After`` honoured; a server asking for more is not waited for
RETRY_AFTER_CAP_S: Final = 60.0

E = TypeVar("E", bound=Exception)

#: how the backoff of :func:`retry_remote` waits (a module attribute a test can replace)
transient_wait: Callable[[float], None] = time.sleep


def retry_remote(
    attempt: Callable[[], T],
    *,
    transient: type[E],
    hint: Callable[[E], float | None] = lambda _: None,
    retries: int = TRANSIENT_RETRIES,
    first_delay_s: float = TRANSIENT_FIRST_DELAY_S,
    max_delay_s: float = TRANSIENT_MAX_DELAY_S,
    sleep: Callable[[float], None] | None = None,
) -> T:
    """``attempt()``, called again up to ``retries`` times after a ``transient`` error. Each
    wait is what ``hint`` says the server asked for (its ``Retry-After``), else a jittered
    delay that doubles from ``first_delay_s`` up to ``max_delay_s``. A server asking to wait
    longer than :data:`RETRY_AFTER_CAP_S` is not waited for: its error is raised at once, as
    is the last one when the retries are spent, and any other error."""
    sleep = sleep or transient_wait
    delay = first_delay_s
    tried = 0
    while True:
        try:
            return attempt()
        except transient as exc:
            asked = hint(exc)
            if tried >= retries or (asked is not None and asked > RETRY_AFTER_CAP_S):
                raise
            sleep(asked if asked is not None else random.uniform(delay / 2, delay))
            delay = min(2 * delay, max_delay_s)
            tried += 1
