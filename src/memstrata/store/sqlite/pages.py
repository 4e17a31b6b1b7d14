"""Where a byte of an SQLite database file lies, read from the file itself (the documented file
format, https://sqlite.org/fileformat2.html): which page, whether the page is on the freelist or
in a B-tree (and whose), and whether the byte is in a live cell or in the page's free space.

A B-tree page is a header, an array of cell pointers growing down from it, cells packed up from
the end of the page, and between them free space: the unallocated gap between the pointer array
and the first cell, freeblocks (a chain of freed cells), and fragments of at most three bytes.
``secure_delete`` zeroes a cell when it is deleted and a page when it is freed, but when SQLite
rebalances a B-tree it rebuilds a page by copying its cells to the end of the page and does not
clear the part it leaves: copies of cells that lived there (moved to a sibling page, or deleted
a moment later) stay in the gap. :mod:`memstrata.store.sqlite.overwrite` overwrites them.

Read only, and only meaningful while nothing else writes the file: the caller holds the write
lock with an empty write-ahead log, so the file is the whole database.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Final

INTERIOR_INDEX: Final = 2
INTERIOR_TABLE: Final = 5
LEAF_INDEX: Final = 10
LEAF_TABLE: Final = 13
_KINDS: Final = (INTERIOR_INDEX, INTERIOR_TABLE, LEAF_INDEX, LEAF_TABLE)
UTF8: Final = 1


class FormatError(Exception):
    """The bytes read are not what the file format says they should be (the file changed, or
    a page is not what it was taken for): nothing is concluded from them."""


@dataclass(frozen=True)
class Header:
    page_size: int
    usable: int  # page size less the bytes reserved at the end of every page
    page_count: int
    freelist_trunk: int
    encoding: int


def varint(data: bytes, at: int) -> tuple[int, int]:
    """The variable-length integer at ``at`` and the offset just past it."""
    value = 0
    for i in range(8):
        byte = data[at + i]
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    return (value << 8) | data[at + 8], at + 9


def varint_len(value: int) -> int:
    """How many bytes :func:`varint` reads for ``value`` (a 64-bit two's complement)."""
    value &= (1 << 64) - 1
    if value >> 56:
        return 9
    n = 1
    while value >= 0x80:
        value >>= 7
        n += 1
    return n


@dataclass(frozen=True)
class Cell:
    """A table leaf cell: its place on the page and its row's record as far as the page
    holds it (a payload larger than the page allows continues on overflow pages)."""

    offset: int
    size: int
    rowid: int
    payload: int
    overflows: bool
    serial_types: tuple[int, ...]  # one per column stored in the record


@dataclass(frozen=True)
class Page:
    number: int
    data: bytes
    usable: int

    @property
    def hdr(self) -> int:
        return 100 if self.number == 1 else 0

    @property
    def kind(self) -> int:
        return self.data[self.hdr]

    @property
    def is_btree(self) -> bool:
        return self.kind in _KINDS

    @property
    def interior(self) -> bool:
        return self.kind in (INTERIOR_INDEX, INTERIOR_TABLE)

    @property
    def cell_count(self) -> int:
        return _u16(self.data, self.hdr + 3)

    @property
    def top(self) -> int:
        """Where the cell content area starts (the end of the unallocated gap)."""
        return _u16(self.data, self.hdr + 5) or 65536

    @property
    def fragments(self) -> int:
        return self.data[self.hdr + 7]

    @property
    def pointer_end(self) -> int:
        """Where the cell pointer array ends (the start of the unallocated gap)."""
        return self.hdr + (12 if self.interior else 8) + 2 * self.cell_count

    def pointers(self) -> list[int]:
        start = self.hdr + (12 if self.interior else 8)
        return [_u16(self.data, start + 2 * i) for i in range(self.cell_count)]

    def freeblocks(self) -> list[tuple[int, int]]:
        """The freeblocks, (offset, size), in the order of the page (the chain is sorted)."""
        blocks: list[tuple[int, int]] = []
        at = _u16(self.data, self.hdr + 1)
        while at:
            if at < self.top or at + 4 > self.usable or (blocks and at <= blocks[-1][0]):
                raise FormatError(f"page {self.number}: a freeblock chain out of order")
            size = _u16(self.data, at + 2)
            if size < 4 or at + size > self.usable:
                raise FormatError(f"page {self.number}: a freeblock past the page")
            blocks.append((at, size))
            at = _u16(self.data, at)
        return blocks

    def free_space(self) -> int:
        """SQLite's count of the page's free bytes: gap, freeblocks and fragments."""
        return self.top - self.pointer_end + sum(s for _, s in self.freeblocks()) + self.fragments

    def children(self) -> list[int]:
        """The pages an interior page points to."""
        if not self.interior:
            return []
        return [_u32(self.data, p) for p in self.pointers()] + [_u32(self.data, self.hdr + 8)]

    def in_free_space(self, start: int, end: int) -> bool:
        """Whether any of the bytes ``start:end`` (offsets in the page) is in the unallocated
        gap or in a freeblock."""
        if start < self.top and end > self.pointer_end:
            return True
        return any(start < at + size and end > at for at, size in self.freeblocks())

    def check(self) -> None:
        """Raise :class:`FormatError` unless the page reads as a B-tree page."""
        if not self.is_btree:
            raise FormatError(f"page {self.number} is not a B-tree page")
        if not self.pointer_end <= self.top <= self.usable:
            raise FormatError(f"page {self.number}: cell pointers past the cell content")
        if any(not self.top <= p < self.usable for p in self.pointers()):
            raise FormatError(f"page {self.number}: a cell outside the cell content area")
        self.freeblocks()

    def table_cells(self) -> list[Cell]:
        """The cells of a table leaf page."""
        if self.kind != LEAF_TABLE:
            raise FormatError(f"page {self.number} is not a table leaf")
        return [self._table_cell(p) for p in self.pointers()]

    def _table_cell(self, at: int) -> Cell:
        data = self.data
        payload, i = varint(data, at)
        rowid, i = varint(data, i)
        if rowid >= 1 << 63:
            rowid -= 1 << 64
        local = local_payload(payload, self.usable)
        size = max(4, i - at + local + (4 if local < payload else 0))  # 4 at the least
        if at + size > self.usable:
            raise FormatError(f"page {self.number}: a cell past the page")
        header, j = varint(data, i)
        types: list[int] = []
        while j < i + min(header, local):
            serial, j = varint(data, j)
            types.append(serial)
        if j != i + header:
            raise FormatError(f"page {self.number}: a record header past the page")
        return Cell(at, size, rowid, payload, local < payload, tuple(types))


def local_payload(payload: int, usable: int) -> int:
    """How much of a table leaf cell's payload of ``payload`` bytes is kept on its page."""
    most = usable - 35
    if payload <= most:
        return payload
    least = (usable - 12) * 32 // 255 - 23
    local = least + (payload - least) % (usable - 4)
    return local if local <= most else least


def content_size(serial: int) -> int:
    """The bytes of a record's value of serial type ``serial``."""
    if serial >= 12:
        return (serial - 12) // 2
    return (0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0)[serial]


class DbFile:
    """An SQLite database file opened for reading its pages."""

    def __init__(self, fh: BinaryIO) -> None:
        self._fh = fh
        fh.seek(0)
        first = fh.read(100)
        if len(first) < 100 or not first.startswith(b"SQLite format 3\x00"):
            raise FormatError("not an SQLite database file")
        size = _u16(first, 16)
        page_size = 65536 if size == 1 else size
        fh.seek(0, 2)
        count = fh.tell() // page_size
        if _u32(first, 92) == _u32(first, 24):  # the stored count is valid
            count = min(count, _u32(first, 28)) or count
        self.header = Header(
            page_size, page_size - first[20], count, _u32(first, 32), _u32(first, 56)
        )

    @classmethod
    def open(cls, path: Path) -> DbFile:
        return cls(path.open("rb"))

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> DbFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def page(self, number: int) -> Page:
        if not 1 <= number <= self.header.page_count:
            raise FormatError(f"page {number} is past the end of the database")
        size = self.header.page_size
        self._fh.seek((number - 1) * size)
        data = self._fh.read(size)
        if len(data) != size:
            raise FormatError(f"page {number} is cut short")
        return Page(number, data, self.header.usable)

    def page_of(self, offset: int) -> tuple[int, int]:
        """The page holding the file's byte ``offset``, and the byte's offset in that page."""
        return offset // self.header.page_size + 1, offset % self.header.page_size

    def freelist(self) -> set[int]:
        """Every page on the freelist (trunks and leaves)."""
        pages: set[int] = set()
        trunk = self.header.freelist_trunk
        while trunk:
            if trunk in pages:
                raise FormatError("the freelist loops")
            pages.add(trunk)
            data = self.page(trunk).data
            count = _u32(data, 4)
            if count > (self.header.usable - 8) // 4:
                raise FormatError(f"freelist trunk {trunk} lists too many pages")
            pages.update(_u32(data, 8 + 4 * i) for i in range(count))
            trunk = _u32(data, 0)
        return pages

    def owners(self, roots: Iterable[tuple[int, str]], wanted: set[int]) -> dict[int, str]:
        """Which B-tree (named by ``roots``: root page, name) each of the ``wanted`` pages
        belongs to, found by walking the interior pages of every tree from its root; a page
        in no tree (an overflow or freelist page) is left out."""
        found: dict[int, str] = {}
        for root, name in roots:
            for number in self._tree(root):
                if number in wanted:
                    found[number] = name
                    if len(found) == len(wanted):
                        return found
        return found

    def _tree(self, root: int) -> Iterator[int]:
        """The pages of the B-tree at ``root``, level by level. Every leaf of a B-tree is at
        the same depth, so only the interior pages (and one leaf) are read."""
        level, seen = [root], {root}
        while level:
            yield from level
            if not self.page(level[0]).interior:
                return
            below: list[int] = []
            for number in level:
                page = self.page(number)
                if not page.interior:
                    raise FormatError(f"page {number}: leaves at two depths")
                below.extend(page.children())
            if seen.intersection(below) or len(set(below)) != len(below):
                raise FormatError(f"a page is twice in the B-tree at page {root}")
            seen.update(below)
            level = below


def _u16(data: bytes, at: int) -> int:
    return int(struct.unpack_from(">H", data, at)[0])


def _u32(data: bytes, at: int) -> int:
    return int(struct.unpack_from(">I", data, at)[0])
