"""Retrying a write that lost a compare-and-swap race: jittered exponential backoff up to a
deadline.

``Memory.update`` without an explicit version re-reads and writes again each time another writer
got in first; under heavy contention (many threads and processes on one item) a fixed number of
retries is not enough, while retrying at once only repeats the collision. Each wait is drawn
between half and all of a delay that doubles up to a ceiling, until the deadline has passed.
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
    sleep = sleep or wait
    clock = clock or now
    start = clock()
    delay = _FIRST_DELAY_S
    while True:
        try:
            return attempt()
        except ConflictError:
            remaining = limit - (clock() - start)
            if remaining <= 0:
                telemetry.record(telemetry.CONFLICT_RETRY, outcome="gave_up")
                raise
            telemetry.record(telemetry.CONFLICT_RETRY, outcome="retried")
            sleep(min(remaining, random.uniform(delay / 2, delay)))
            delay = min(2 * delay, _MAX_DELAY_S)
