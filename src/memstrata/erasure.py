"""Proof of deletion on request: the byte forms a text takes in stored files, and a search of
bytes for many of them at once.

A text is stored as UTF-8 (SQLite columns, the trace) and inside JSON, escaped: with
``ensure_ascii=False`` only quotes, backslashes and control characters are escaped; with
``ensure_ascii=True`` every non-ASCII character becomes ``\\uXXXX``. A deletion that leaves any
of these forms in a file has left a copy.

Forgetting a whole thread or user looks for thousands of texts in files of hundreds of
megabytes, so :class:`Needles` does not search for them one by one: it hashes the eight bytes
at every offset (numpy), keeps the offsets whose hash some needle's first eight bytes have, and
looks there for the needles with those first bytes, one set look-up per length: the work stays
linear in the data however many needles share a prefix.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

import numpy as np

_CHUNK: Final = 1 << 22
_KEY: Final = 8  # bytes of a needle's key
_FEW: Final = 8  # up to this many needles, plain substring search is faster
_TABLE_BITS: Final = 20  # 1M flags: few false candidates, and it stays in the CPU cache
_MULTIPLIER: Final = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing


def text_forms(texts: Iterable[str]) -> list[bytes]:
    """Every byte form of each of ``texts`` (UTF-8, JSON-escaped both ways), no empty ones."""
    forms: dict[bytes, None] = {}
    for text in texts:
        for form in (
            text.encode("utf-8", "surrogatepass"),
            json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass"),
            json.dumps(text)[1:-1].encode("ascii"),
        ):
            if form:
                forms[form] = None
    return list(forms)


class Needles:
    """Byte strings to find in data, many at once."""

    def __init__(self, needles: Iterable[bytes]) -> None:
        self.all = list(dict.fromkeys(n for n in needles if n))
        self.longest = max((len(n) for n in self.all), default=0)
        self._short = [n for n in self.all if len(n) < _KEY]
        #: needles of one key (8 to 15 bytes) and of two keys (16 bytes or more), by their
        #: length: a candidate offset costs one set look-up per length, however many needles
        #: share their first bytes (the turns of a dialogue all start with a speaker's name)
        self._one: dict[int, dict[int, set[bytes]]] = {}
        self._two: dict[tuple[int, int], dict[int, set[bytes]]] = {}
        for n in self.all:
            first = int.from_bytes(n[:_KEY], "little")
            if len(n) >= 2 * _KEY:
                second = int.from_bytes(n[_KEY : 2 * _KEY], "little")
                self._two.setdefault((first, second), {}).setdefault(len(n), set()).add(n)
            elif len(n) >= _KEY:
                self._one.setdefault(first, {}).setdefault(len(n), set()).add(n)
        self._one_table = _table(list(self._one))
        self._two_first = _table([k for k, _ in self._two])
        self._two_both = _table([_mix(a, b) for a, b in self._two])

    def find(self, data: bytes) -> Iterator[tuple[int, bytes]]:
        """Every occurrence in ``data``: its offset and the needle, in no set order."""
        if len(self.all) <= _FEW:
            yield from _find_each(data, self.all)
            return
        yield from _find_each(data, self._short)
        for offset in range(_KEY):
            count = (len(data) - offset) // _KEY
            if count <= 0:
                continue
            keys = np.frombuffer(data, dtype="<u8", offset=offset, count=count)
            candidates: list[tuple[int, Mapping[int, set[bytes]]]] = []
            if self._one:
                for one in np.flatnonzero(self._one_table[_slots(keys)]).tolist():
                    candidates.append((one, self._one.get(int(keys[one]), {})))
            if self._two:
                hits = np.flatnonzero(self._two_first[_slots(keys[:-1])])
                both = _slots(_mix_array(keys[hits], keys[hits + 1]))
                for two in hits[self._two_both[both]].tolist():
                    pair = (int(keys[two]), int(keys[two + 1]))
                    candidates.append((two, self._two.get(pair, {})))
            for index, by_length in candidates:
                start = offset + _KEY * index
                for length, needles in by_length.items():
                    piece = data[start : start + length]
                    if piece in needles:
                        yield start, piece

    def found_in(self, data: bytes) -> bool:
        return next(self.find(data), None) is not None

    def in_file(self, path: Path) -> list[bytes]:
        """The needles found anywhere in the file; none for a missing file."""
        return list(dict.fromkeys(needle for _, needle in self.find_in_file(path)))

    def find_in_file(self, path: Path) -> Iterator[tuple[int, bytes]]:
        """Every occurrence in the file: its offset and the needle, each once (the file is
        read in overlapping chunks, so a large database is never held whole); none for a
        missing file."""
        if not self.all:
            return
        try:
            with path.open("rb") as fh:
                tail = b""
                start = 0  # the file offset of the window's first byte
                while chunk := fh.read(_CHUNK):
                    window = tail + chunk
                    for at, needle in self.find(window):
                        if at + len(needle) > len(tail):  # not wholly in the last window
                            yield start + at, needle
                    keep = min(len(window), self.longest - 1)
                    tail = window[len(window) - keep :]
                    start += len(window) - keep
        except FileNotFoundError:
            return


_Keys = np.ndarray[tuple[int], np.dtype[np.uint64]]


def _table(keys: list[int]) -> np.ndarray[tuple[int], np.dtype[np.bool_]]:
    """Flags at the places of ``keys``: a key whose place is not flagged is none of them."""
    table = np.zeros(1 << _TABLE_BITS if keys else 1, dtype=np.bool_)
    if keys:
        table[_slots(np.array(keys, dtype=np.uint64))] = True
    return table


def _slots(keys: _Keys) -> _Keys:
    """Each key's place in a table (the top bits of a multiplicative hash)."""
    with np.errstate(over="ignore"):
        return (keys * _MULTIPLIER) >> np.uint64(64 - _TABLE_BITS)


def _mix(first: int, second: int) -> int:
    return int(_mix_array(np.array([first], np.uint64), np.array([second], np.uint64))[0])


def _mix_array(first: _Keys, second: _Keys) -> _Keys:
    """One key for two (the first eight bytes of a needle and the next eight)."""
    with np.errstate(over="ignore"):
        return first ^ (second * _MULTIPLIER + np.uint64(1))


def _find_each(data: bytes, needles: Sequence[bytes]) -> Iterator[tuple[int, bytes]]:
    for needle in needles:
        at = data.find(needle)
        while at >= 0:
            yield at, needle
            at = data.find(needle, at + 1)
