"""What the indexes know about each slot: id, kind and the fields searches filter on.

String fields are stored as integer codes in numpy arrays so that a filter is one vectorised
comparison over every slot. Reads change nothing; writes (``put``, ``remove``) need the catalog
to themselves, which its owner ensures (``UserIndex`` holds a read-write lock).

A catalog turns into arrays and strings (:meth:`Catalog.to_arrays`) and back
(:meth:`Catalog.from_arrays`) for :mod:`memstrata.index.snapshot`. A catalog made from arrays
builds each slot's :class:`SlotInfo` when it is first asked for (building 100,000 of them
would take most of a second), from the same columns a filter reads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from memstrata.errors import SnapshotError

KIND_EPISODE = 0
KIND_FACT = 1
KIND_BULLET = 2
_MISSING = -1


class _Codes:
    """Interns strings as small integers."""

    def __init__(self, values: Sequence[str] = ()) -> None:
        self.values = list(values)
        self._codes: dict[str, int] = {v: i for i, v in enumerate(self.values)}

    def code(self, value: str | None) -> int:
        if value is None:
            return _MISSING
        code = self._codes.get(value)
        if code is None:
            code = self._codes[value] = len(self.values)
            self.values.append(value)
        return code

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


_LAZY: Final = object()  # a slot whose info is built from the columns when first asked for


class SlotInfos:
    """The :class:`SlotInfo` of each slot (None: a free slot), as a list is used: indexed,
    assigned, appended. Slots loaded from arrays get theirs built on first access."""

    def __init__(
        self,
        catalog: Catalog,
        items: list[object],
        ids: Sequence[str] = (),
        texts: Sequence[str] = (),
    ) -> None:
        self._catalog = catalog
        self._items = items
        self._ids = ids
        self._texts = texts

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, slot: int) -> SlotInfo | None:
        item = self._items[slot]
        if item is _LAZY:
            item = self._items[slot] = self._catalog._built(
                slot, self._ids[slot], self._texts[slot]
            )
        assert item is None or isinstance(item, SlotInfo)
        return item

    def __setitem__(self, slot: int, info: SlotInfo | None) -> None:
        self._items[slot] = info

    def __iter__(self) -> Iterator[SlotInfo | None]:
        return (self[slot] for slot in range(len(self._items)))

    def append(self, info: SlotInfo | None) -> None:
        self._items.append(info)

    def id_and_text(self, slot: int) -> tuple[str, str] | None:
        """A slot's id and text without building its info (None: a free slot)."""
        item = self._items[slot]
        if item is _LAZY:
            return self._ids[slot], self._texts[slot]
        if item is None:
            return None
        assert isinstance(item, SlotInfo)
        return item.id, item.text


class Catalog:
    COLUMNS = (
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
        self.info = SlotInfos(self, [])
        self._free: list[int] = []
        self._codes = {name: _Codes() for name in self.COLUMNS}
        self._arrays: dict[str, NDArray[np.int32]] = {
            name: np.full(capacity, _MISSING, dtype=np.int32) for name in self.COLUMNS
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

        for name in self.COLUMNS:
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
        for name in self.COLUMNS:
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
        """Every distinct value stored in ``column`` (since it was last made from arrays)."""
        return list(self._codes[column].values)

    def columns(self) -> list[NDArray[np.int32]]:
        return list(self._arrays.values())

    def session_codes(self) -> NDArray[np.int32]:
        return self._arrays["session_key"][: self.capacity]

    # persistence --------------------------------------------------------------------
    def _built(self, slot: int, item_id: str, text: str) -> SlotInfo:
        """The info of a slot loaded from arrays, from its columns."""

        def value(name: str) -> str | None:
            code = int(self._arrays[name][slot])
            return None if code == _MISSING else self._codes[name].values[code]

        layer = value("layer")
        return SlotInfo(
            id=item_id,
            kind=int(self.kind[slot]),
            thread=value("thread"),
            agent=value("agent"),
            session_key=value("session_key"),
            session_id=value("session_id"),
            speaker=value("speaker"),
            surface=value("surface"),
            time=float(self.time[slot]),
            category=value("category"),
            topic=value("topic"),
            archived=bool(self.archived[slot]),
            current=bool(self.current[slot]),
            text=text,
            layer="L3" if layer is None else layer,
        )

    def to_arrays(self) -> tuple[dict[str, NDArray[Any]], dict[str, list[str]]]:
        """The catalog as numpy arrays (one entry per slot up to :attr:`capacity`) and lists
        of strings: each string column's values (only those a slot still has, so nothing of
        a removed item stays), and each slot's id and text (empty for a free slot)."""
        n = self.capacity
        arrays: dict[str, NDArray[Any]] = {
            "kind": self.kind[:n].copy(),
            "time": self.time[:n].copy(),
            "month": self.month[:n].copy(),
            "archived": self.archived[:n].copy(),
            "current": self.current[:n].copy(),
            "alive": self.alive[:n].copy(),
            "free": np.asarray(self._free, dtype=np.int64),
        }
        strings: dict[str, list[str]] = {}
        alive = self.alive[:n]
        for name in self.COLUMNS:
            codes = np.where(alive, self._arrays[name][:n], _MISSING)
            used = np.unique(codes[codes != _MISSING])
            remapped = np.full(n, _MISSING, dtype=np.int32)
            present = codes != _MISSING
            remapped[present] = np.searchsorted(used, codes[present])  # order kept
            arrays[f"column.{name}"] = remapped
            values = self._codes[name].values
            strings[f"values.{name}"] = [values[int(c)] for c in used]
        ids, texts = [], []
        for slot in range(n):
            pair = self.info.id_and_text(slot)
            ids.append("" if pair is None else pair[0])
            texts.append("" if pair is None else pair[1])
        strings["ids"] = ids
        strings["texts"] = texts
        return arrays, strings

    @classmethod
    def from_arrays(
        cls,
        arrays: Mapping[str, NDArray[Any]],
        values: Mapping[str, Sequence[str]],
        ids: Sequence[str],
        texts: Sequence[str],
    ) -> Catalog:
        """A catalog from :meth:`to_arrays`' output (each slot's id and text)."""
        n = len(arrays["alive"])
        if len(ids) != n or len(texts) != n:
            raise SnapshotError(f"{len(ids)} ids and {len(texts)} texts for {n} slots")
        catalog = cls(capacity=max(n, 1))
        for name in cls.COLUMNS:
            catalog._codes[name] = _Codes(values[f"values.{name}"])
            catalog._arrays[name][:n] = arrays[f"column.{name}"]
            if n and int(catalog._arrays[name][:n].max(initial=_MISSING)) >= len(
                catalog._codes[name].values
            ):
                raise SnapshotError(f"column {name} names a value it does not have")
        for name in ("kind", "time", "month", "archived", "current", "alive"):
            getattr(catalog, name)[:n] = arrays[name]
        alive = catalog.alive[:n]
        live = np.flatnonzero(alive).tolist()
        catalog.slots = {ids[s]: s for s in live}
        if len(catalog.slots) != len(live):
            raise SnapshotError("two slots hold one id")
        items: list[object] = [None] * n
        for s in live:
            items[s] = _LAZY
        catalog.info = SlotInfos(catalog, items, ids, texts)
        catalog._free = [int(s) for s in arrays["free"]]
        if any(s >= n or alive[s] for s in catalog._free):
            raise SnapshotError("a free slot is in use")
        return catalog
