"""What the indexes know about each slot: id, kind and the fields searches filter on.

String fields are stored as integer codes in numpy arrays so that a filter is one vectorised
comparison over every slot. Reads change nothing; writes (``put``, ``remove``) need the catalog
to themselves, which its owner ensures (``UserIndex`` holds a read-write lock).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

KIND_EPISODE = 0
KIND_FACT = 1
KIND_BULLET = 2
_MISSING = -1


class _Codes:
    """Interns strings as small integers."""

    def __init__(self) -> None:
        self._codes: dict[str, int] = {}

    def code(self, value: str | None) -> int:
        if value is None:
            return _MISSING
        return self._codes.setdefault(value, len(self._codes))

    def lookup(self, value: str) -> int | None:
        return self._codes.get(value)


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """The indexed view of one record."""

    id: str
    kind: int
    thread: str | None
    agent: str | None
    session_key: str | None
    session_id: str | None
    speaker: str | None
    surface: str | None
    time: float
    category: str | None
    topic: str | None
    archived: bool
    current: bool
    text: str
    layer: str = "L3"


class Catalog:
    _COLUMNS = (
        "thread",
        "agent",
        "session_key",
        "session_id",
        "speaker",
        "surface",
        "category",
        "topic",
        "layer",
    )

    def __init__(self, capacity: int = 1024) -> None:
        self.slots: dict[str, int] = {}
        self.info: list[SlotInfo | None] = []
        self._free: list[int] = []
        self._codes = {name: _Codes() for name in self._COLUMNS}
        self._arrays: dict[str, NDArray[np.int32]] = {
            name: np.full(capacity, _MISSING, dtype=np.int32) for name in self._COLUMNS
        }
        self.kind = np.full(capacity, _MISSING, dtype=np.int8)
        self.time = np.zeros(capacity, dtype=np.float64)
        self.month = np.zeros(capacity, dtype=np.int8)
        self.archived = np.zeros(capacity, dtype=bool)
        self.current = np.zeros(capacity, dtype=bool)
        self.alive = np.zeros(capacity, dtype=bool)

    @property
    def capacity(self) -> int:
        """One past the highest slot ever used (the length of score arrays)."""
        return len(self.info)

    def __len__(self) -> int:
        return len(self.slots)

    def _grow(self, needed: int) -> None:
        size = len(self.alive)
        if needed <= size:
            return
        new = max(needed, 2 * size)

        def grow(arr: Any, fill: object) -> Any:
            out = np.full(new, fill, dtype=arr.dtype)
            out[:size] = arr
            return out

        for name in self._COLUMNS:
            self._arrays[name] = grow(self._arrays[name], _MISSING)
        self.kind = grow(self.kind, _MISSING)
        self.time = grow(self.time, 0.0)
        self.month = grow(self.month, 0)
        self.archived = grow(self.archived, False)
        self.current = grow(self.current, False)
        self.alive = grow(self.alive, False)

    def put(self, info: SlotInfo) -> int:
        """Store ``info``; an id already present keeps its slot."""
        slot = self.slots.get(info.id)
        if slot is None:
            slot = self._free.pop() if self._free else len(self.info)
            if slot == len(self.info):
                self.info.append(None)
            self._grow(slot + 1)
            self.slots[info.id] = slot
        self.info[slot] = info
        for name in self._COLUMNS:
            self._arrays[name][slot] = self._codes[name].code(getattr(info, name))
        self.kind[slot] = info.kind
        self.time[slot] = info.time
        self.month[slot] = datetime.fromtimestamp(info.time, UTC).month
        self.archived[slot] = info.archived
        self.current[slot] = info.current
        self.alive[slot] = True
        return slot

    def lookup(self, item_id: str) -> tuple[int, SlotInfo] | None:
        """The slot and info of an indexed id, or None."""
        slot = self.slots.get(item_id)
        if slot is None:
            return None
        info = self.info[slot]
        assert info is not None
        return slot, info

    def remove(self, item_id: str) -> int | None:
        slot = self.slots.pop(item_id, None)
        if slot is None:
            return None
        self.info[slot] = None
        self.alive[slot] = False
        self._free.append(slot)
        return slot

    def equals(self, column: str, value: str | None) -> NDArray[np.bool_]:
        """A mask of the slots whose ``column`` equals ``value`` (None: the field is absent)."""
        n = self.capacity
        if value is None:
            return np.asarray(self._arrays[column][:n] == _MISSING, dtype=bool)
        code = self._codes[column].lookup(value)
        if code is None:
            return np.zeros(n, dtype=bool)
        return np.asarray(self._arrays[column][:n] == code, dtype=bool)

    def values(self, column: str) -> list[str]:
        """Every distinct value ever stored in ``column``."""
        return list(self._codes[column]._codes)

    def columns(self) -> list[NDArray[np.int32]]:
        return list(self._arrays.values())

    def session_codes(self) -> NDArray[np.int32]:
        return self._arrays["session_key"][: self.capacity]
