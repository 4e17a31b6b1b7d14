"""Named occurrences for whoever counts them: the server's Prometheus metrics, a test.

A leaf module. Code in any layer calls :func:`record` where something worth counting happens
(a compare-and-swap refused, a retry, tokens served to a model) without knowing who counts;
:mod:`memstrata.server.metrics` subscribes and turns each occurrence into a metric, so no
lower layer imports a metrics library. With no listener a record costs one tuple read.
A listener that fails is ignored: counting must never break what is counted.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Final

#: a compare-and-swap write was refused because the version moved (a ``ConflictError``)
CONFLICT: Final = "conflict"
#: a write that lost a compare-and-swap race was re-read and tried again (label ``outcome``:
#: ``retried``, or ``gave_up`` when the retry deadline passed and the conflict was raised)
CONFLICT_RETRY: Final = "conflict_retry"
#: tokens handed to a model in a ``<memory>`` block (label ``call``: wake_up, recall, context)
TOKENS_SERVED: Final = "tokens_served"

Listener = Callable[[str, float, Mapping[str, str]], object]

_lock = threading.Lock()
_listeners: tuple[Listener, ...] = ()


def record(name: str, value: float = 1.0, **labels: str) -> None:
    """Tell every listener that ``name`` happened (``value`` times, or with that amount)."""
    for listener in _listeners:
        try:
            listener(name, value, labels)
        except Exception:  # counting must never break what is counted
            continue


def subscribe(listener: Listener) -> Callable[[], None]:
    """Call ``listener(name, value, labels)`` on every record; returns the unsubscribe."""
    global _listeners
    with _lock:
        _listeners = (*_listeners, listener)

    def unsubscribe() -> None:
        global _listeners
        with _lock:
            _listeners = tuple(fn for fn in _listeners if fn is not listener)

    return unsubscribe
