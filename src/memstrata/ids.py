"""Sortable, kind-prefixed identifiers.

An id is ``<prefix>_<ulid>``: a 26-character ULID (48-bit millisecond time, 80 random bits,
Crockford base32) behind a short prefix naming the kind of record, e.g. ``ep_01JD3...``.
Ids sort by creation time; within one millisecond a process increments the random part so
ids it makes are strictly increasing.
"""

from __future__ import annotations

import os
import re
import threading
import time
from typing import Final

from memstrata.errors import InvalidInputError
from memstrata.textio import shown

_ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_RANDOM_BITS: Final = 80
_RANDOM_MAX: Final = (1 << _RANDOM_BITS) - 1

#: Known prefixes and the kind of record each names.
PREFIXES: Final[dict[str, str]] = {
    "ep": "episode",
    "fa": "fact",
    "doc": "document",
    "m": "item",
    "run": "run",
    "er": "erasure",
    "key": "api key",
    "site": "data directory",
}

_PREFIX: Final = "[a-z]{1,8}"
_ULID: Final = "[0-9A-HJKMNP-TV-Z]{26}"
#: an id, as a pattern for schemas
ID_PATTERN: Final = f"^{_PREFIX}_{_ULID}$"
_ID_RE: Final = re.compile(f"^(?P<prefix>{_PREFIX})_(?P<ulid>{_ULID})$")


class _UlidGenerator:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last_ms = -1
        self._last_random = 0

    def next(self, now_ms: int | None = None) -> str:
        with self._lock:
            ms = int(time.time() * 1000) if now_ms is None else now_ms
            if ms <= self._last_ms:
                ms = self._last_ms
                rnd = self._last_random + 1
                if rnd > _RANDOM_MAX:  # astronomically rare: move to the next millisecond
                    ms += 1
                    rnd = int.from_bytes(os.urandom(10), "big")
            else:
                rnd = int.from_bytes(os.urandom(10), "big")
            self._last_ms, self._last_random = ms, rnd
        return _encode((ms << _RANDOM_BITS) | rnd)


def _encode(value: int) -> str:
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


_GENERATOR = _UlidGenerator()


def new_id(prefix: str, *, now_ms: int | None = None) -> str:
    """Return a new id of the kind ``prefix`` (one of :data:`PREFIXES`)."""
    if prefix not in PREFIXES:
        raise InvalidInputError(f"unknown id prefix {prefix!r}; expected one of {sorted(PREFIXES)}")
    return f"{prefix}_{_GENERATOR.next(now_ms)}"


def kind_of(item_id: str) -> str:
    """Return the record kind an id names, or raise :class:`InvalidInputError`."""
    match = _ID_RE.match(item_id) if isinstance(item_id, str) else None
    if match is None or match.group("prefix") not in PREFIXES:
        raise InvalidInputError(
            f"{shown(item_id)} is not a memstrata id (expected e.g. ep_01J..., fa_01J..., "
            "doc_01J...)"
        )
    return PREFIXES[match.group("prefix")]


def timestamp_ms(item_id: str) -> int:
    """Return the creation time (Unix milliseconds) encoded in an id."""
    kind_of(item_id)
    value = 0
    for ch in item_id.split("_", 1)[1][:10]:
        value = value * 32 + _ALPHABET.index(ch)
    return value
