"""Overwriting, through SQLite, the free space of the pages where deleted text was found.

``secure_delete`` zeroes a cell when its row is deleted and a page when it is freed, but a
B-tree rebalance rebuilds pages without clearing the space their moved cells leave, so a copy
of a row can outlive the row in the unallocated gap of a live page (see
:mod:`memstrata.store.sqlite.pages`). Nothing in SQL writes a page's free space directly; what
does is SQLite's defragmentation of a page: when a cell must go on a page whose free space
can hold it, but neither its unallocated gap nor any freeblock can, SQLite moves every cell of
the page to its end and zeroes everything between them and the cell pointers. So for each such
page one of its rows (the vehicle) is rewritten twice in one write transaction: first with one
of its text columns replaced by filler sized so that the row's new cell needs just that, then
as it was. The row ends as it began, the page's cells are packed, and its free space is zeros
(but the 4-byte header SQLite writes where it frees a cell: the filler's size). Only that page
is written, and the vehicle's overflow pages if it has any (freed zeroed, written anew): a row
without them is chosen when the page has one.

A page with one cell cannot be defragmented: the filler then covers as much of the gap as one
cell can (all but about 20 bytes after the cell pointers). A copy in an index page is removed
by rebuilding that table's indexes (``REINDEX``: their pages are freed, so zeroed). Whatever
else holds a copy (a freelist or overflow page left by a build without ``secure_delete``, a
page no row can be moved over) is left to the caller, which rebuilds the whole file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final

from memstrata.store.sqlite.pages import (
    INTERIOR_INDEX,
    LEAF_INDEX,
    LEAF_TABLE,
    UTF8,
    Cell,
    DbFile,
    FormatError,
    Page,
    content_size,
    varint_len,
)

#: how an UPDATE puts a column's value back as it was, by its type (text from its bytes)
_RESTORE: Final = {"text": "CAST(? AS TEXT)", "blob": "?", "integer": "?", "real": "?"}


@dataclass(frozen=True)
class Table:
    """A rowid table as far as a rewrite of one of its rows needs: its columns in record order
    and those that filler may replace (text or untyped, in no index, no foreign key, on a
    table with no trigger or CHECK constraint, so that changing and restoring one changes
    nothing else)."""

    name: str
    columns: tuple[str, ...]
    affinities: tuple[str, ...]
    fillable: frozenset[int]


@dataclass(frozen=True)
class Rewrite:
    table: str
    column: str
    rowid: int
    filler: int  # bytes of filler text


@dataclass
class Plan:
    """What overwrites the pages holding copies; ``left`` names those that nothing but a
    rebuilt file clears."""

    rewrites: dict[int, Rewrite] = field(default_factory=dict)  # by page
    reindex: set[str] = field(default_factory=set)  # tables whose indexes hold a copy
    left: set[int] = field(default_factory=set)


def plan(conn: sqlite3.Connection, db: DbFile, places: Iterable[tuple[int, int]]) -> Plan:
    """How to overwrite the bytes at ``places`` (file offset, length) of ``db``, the file of
    ``conn``'s main database, which the caller keeps from changing (write lock, empty log)."""
    result = Plan()
    by_page: dict[int, list[tuple[int, int]]] = {}
    for offset, length in places:
        number, start = db.page_of(offset)
        by_page.setdefault(number, []).append((start, start + length))
        if start + length > db.header.page_size:  # runs into the next page too
            by_page.setdefault(number + 1, []).append((0, start + length - db.header.page_size))
    if db.header.encoding != UTF8:
        result.left.update(by_page)
        return result
    free = db.freelist()
    schema = _schema(conn)
    wanted = {n for n in by_page if n not in free and n != 1}
    owners = db.owners(((root, name) for name, (root, _) in schema.items()), wanted)
    tables = _tables(conn)
    for number, spans in sorted(by_page.items()):
        owner = owners.get(number)
        if owner is None:  # on the freelist, an overflow page, the schema's own page
            result.left.add(number)
            continue
        page = db.page(number)
        page.check()
        if not any(page.in_free_space(a, b) for a, b in spans):
            result.left.add(number)  # inside a cell: not free space a row can cover
        elif page.kind in (INTERIOR_INDEX, LEAF_INDEX) and schema[owner][1] != owner:
            result.reindex.add(schema[owner][1])
        elif page.kind == LEAF_TABLE and owner in tables:
            rewrite = _vehicle(conn, page, tables[owner], spans)
            if rewrite is None:
                result.left.add(number)
            else:
                result.rewrites[number] = rewrite
        else:  # a table's interior page, a WITHOUT ROWID table, a table no row can cover
            result.left.add(number)
    return result


def apply(conn: sqlite3.Connection, todo: Plan) -> None:
    """Carry out ``todo`` in the caller's write transaction."""
    for r in todo.rewrites.values():
        table, column = _quote(r.table), _quote(r.column)
        kind, number, raw = conn.execute(
            f"SELECT typeof({column}), CASE WHEN typeof({column}) IN ('integer', 'real') "
            f"THEN {column} END, CAST({column} AS BLOB) FROM {table} WHERE rowid = ?",
            [r.rowid],
        ).fetchone()
        conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", [" " * r.filler, r.rowid])
        if kind == "null":
            conn.execute(f"UPDATE {table} SET {column} = NULL WHERE rowid = ?", [r.rowid])
        else:
            value = number if kind in ("integer", "real") else raw
            sql = f"UPDATE {table} SET {column} = {_RESTORE[kind]} WHERE rowid = ?"
            conn.execute(sql, [value, r.rowid])
    for table in sorted(todo.reindex):
        conn.execute(f"REINDEX {_quote(table)}")


def _vehicle(
    conn: sqlite3.Connection, page: Page, table: Table, spans: list[tuple[int, int]]
) -> Rewrite | None:
    """The row of ``page`` to rewrite, and with how much filler, so that the page's free
    space is overwritten where ``spans`` lie; None if no row can.

    A rewrite that defragments the page clears all of its free space; failing that, a filler
    that fills the gap from its end covers the spans if they lie in that part of the gap."""
    cells = [c for c in page.table_cells() if len(c.serial_types) <= len(table.columns)]
    # a cell that does not border the gap leaves a freeblock when it goes: room to defragment;
    # a row with overflow pages would have them written anew
    cells.sort(key=lambda c: (c.overflows, c.offset == page.top, -c.size))
    fallback: Rewrite | None = None
    for cell in cells:
        types = _record_types(conn, table, cell)
        if types is None:
            continue
        for column in sorted(table.fillable, key=lambda i: -content_size(types[i])):
            found = _filler(page, cell, types, column, spans)
            if found is None:
                continue
            length, defragments = found
            rewrite = Rewrite(table.name, table.columns[column], cell.rowid, length)
            if defragments:
                return rewrite
            fallback = fallback or rewrite
    return fallback


def _filler(
    page: Page, cell: Cell, types: list[int], column: int, spans: list[tuple[int, int]]
) -> tuple[int, bool] | None:
    """The filler length that makes ``cell``'s row, ``column`` replaced, overwrite the page's
    free space, and whether it does so by defragmenting the page."""
    top, blocks = _after_drop(page, cell)
    pointers = page.pointer_end - 2
    room = page.free_space() + cell.size  # the new cell and its pointer fit in what is free
    gap = top - pointers - 2  # what it may take from the unallocated gap alone
    biggest = max((size for _, size in blocks), default=0)
    # too big for the gap and for every freeblock, small enough for the page: defragmented
    defrag = _cell_sizes(types, column, cell.rowid, page.usable, max(gap, biggest), room)
    if defrag:
        return defrag[len(defrag) // 2][1], True  # the middle: far from both limits
    # else the new cell goes at the end of the gap, [top - size, top): as big as it can
    most = page.usable - 35  # the largest payload kept on the page
    largest = min(gap, varint_len(most) + varint_len(cell.rowid) + most)
    fill = _cell_sizes(types, column, cell.rowid, page.usable, max(biggest, largest - 16), gap)
    if not fill:
        return None
    size, length = fill[-1]
    covered = top - size
    for a, b in spans:
        if b > pointers + 2 and a < covered:  # left between the pointers and the new cell
            return None
        if any(a < at + s and b > at for at, s in blocks):
            return None
    return length, False


def _cell_sizes(
    types: list[int], column: int, rowid: int, usable: int, above: int, upto: int
) -> list[tuple[int, int]]:
    """(cell size, filler length) for the filler lengths that make a cell of more than
    ``above`` and at most ``upto`` bytes with its record wholly on the page, by size.

    A cell is its payload's length, its rowid and its payload (record header, then values);
    one more byte of filler adds one byte, and a varint's length now and then, so the
    lengths worth trying start a little before ``above`` less the size without filler."""
    most = usable - 35
    others_header = sum(varint_len(t) for i, t in enumerate(types) if i != column)
    others_body = sum(content_size(t) for i, t in enumerate(types) if i != column)
    rowid_len = varint_len(rowid)

    def size(length: int) -> tuple[int, int]:
        header = others_header + varint_len(2 * length + 13)
        total = header + 1
        while varint_len(total) + header != total:
            total = varint_len(total) + header
        payload = total + others_body + length
        return max(4, varint_len(payload) + rowid_len + payload), payload

    sizes: list[tuple[int, int]] = []
    length = max(0, above - size(0)[0] - 24)
    while True:
        cell, payload = size(length)
        if payload > most or cell > upto:
            return sizes
        if cell > above:
            sizes.append((cell, length))
        length += 1


def _after_drop(page: Page, cell: Cell) -> tuple[int, list[tuple[int, int]]]:
    """Where the cell content area starts and the freeblocks once ``cell`` is dropped, as
    SQLite merges a freed cell with a freeblock or the gap within three bytes of it."""
    if page.cell_count == 1:
        return page.usable, []  # an emptied page is reset
    blocks = page.freeblocks()
    start, end = cell.offset, cell.offset + cell.size
    after = next((i for i, (at, _) in enumerate(blocks) if at >= start), len(blocks))
    if after < len(blocks) and end + 3 >= blocks[after][0]:
        end = blocks[after][0] + blocks[after][1]
        del blocks[after]
    if after > 0 and sum(blocks[after - 1]) + 3 >= start:
        start = blocks[after - 1][0]
        del blocks[after - 1]
        after -= 1
    if start <= page.top:
        return end, blocks
    blocks.insert(after, (start, end - start))
    return page.top, blocks


def _record_types(conn: sqlite3.Connection, table: Table, cell: Cell) -> list[int] | None:
    """The serial types of the record an UPDATE writes for ``cell``'s row: those stored, then
    those of the columns added to the table after the row was written (their defaults)."""
    types = list(cell.serial_types)
    missing = table.columns[len(types) :]
    if not missing:
        return types
    select = ", ".join(f"typeof({_quote(c)}), {_quote(c)}" for c in missing)
    row = conn.execute(f"SELECT {select} FROM {_quote(table.name)} WHERE rowid = ?", [cell.rowid])
    values = row.fetchone()
    if values is None:
        return None
    stored = len(types)
    for i in range(len(missing)):
        serial = _serial_type(values[2 * i], values[2 * i + 1], table.affinities[stored + i])
        if serial is None:
            return None
        types.append(serial)
    return types


def _serial_type(kind: str, value: object, affinity: str) -> int | None:
    if kind == "null":
        return 0
    if kind == "real" and isinstance(value, float):
        if affinity != "REAL" or not value.is_integer():
            return 7
        kind, value = "integer", int(value)  # SQLite stores a whole REAL as an integer
    if kind == "integer" and isinstance(value, int):
        if value in (0, 1):
            return 8 + value
        for serial, size in ((1, 1), (2, 2), (3, 3), (4, 4), (5, 6)):
            if -(1 << (8 * size - 1)) <= value < 1 << (8 * size - 1):
                return serial
        return 6
    if kind == "text" and isinstance(value, str):
        return 2 * len(value.encode("utf-8", "surrogatepass")) + 13
    if kind == "blob" and isinstance(value, bytes):
        return 2 * len(value) + 12
    return None


def _schema(conn: sqlite3.Connection) -> dict[str, tuple[int, str]]:
    """Every B-tree of the main database: its name, root page and table."""
    rows = conn.execute(
        "SELECT name, rootpage, tbl_name FROM sqlite_master WHERE rootpage > 0"
    ).fetchall()
    return {str(r[0]): (int(r[1]), str(r[2])) for r in rows}


def _tables(conn: sqlite3.Connection) -> dict[str, Table]:
    """The ordinary rowid tables whose rows may carry a rewrite."""
    listed = [tuple(r)[:5] for r in conn.execute("PRAGMA main.table_list")]
    if not listed:  # an SQLite before 3.37: no table_list
        listed = [
            ("main", r[0], "table", 0, "WITHOUT ROWID" in " ".join(str(r[1]).upper().split()))
            for r in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
        ]
    triggers = {
        str(r[0]) for r in conn.execute("SELECT tbl_name FROM sqlite_master WHERE type='trigger'")
    }
    tables: dict[str, Table] = {}
    for _, name, kind, _, without_rowid in listed:
        if kind != "table" or without_rowid or name.startswith("sqlite_"):
            continue
        info = conn.execute(f"PRAGMA main.table_xinfo({_quote(name)})").fetchall()
        columns = tuple(str(r[1]) for r in info)
        affinities = tuple(_affinity(str(r[2])) for r in info)
        sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", [name]).fetchone()[0]
        if name in triggers or "CHECK" in str(sql).upper() or any(r[6] for r in info):
            tables[name] = Table(name, columns, affinities, frozenset())
            continue
        tied: set[str] = {
            str(r[3]) for r in conn.execute(f"PRAGMA foreign_key_list({_quote(name)})")
        }
        for index in conn.execute(f"PRAGMA index_list({_quote(name)})").fetchall():
            keys = conn.execute(f"PRAGMA index_xinfo({_quote(index[1])})").fetchall()
            if index[4] or any(k[1] == -2 for k in keys):  # partial, or on an expression
                tied.update(columns)
            tied.update(str(k[2]) for k in keys if k[2] is not None)
        fillable = frozenset(
            i
            for i, (c, a) in enumerate(zip(columns, affinities, strict=True))
            if c not in tied and a in ("TEXT", "BLOB")
        )
        tables[name] = Table(name, columns, affinities, fillable)
    return tables


def _affinity(declared: str) -> str:
    """A column's type affinity, by SQLite's rules for its declared type."""
    t = declared.upper()
    if "INT" in t:
        return "INTEGER"
    if "CHAR" in t or "CLOB" in t or "TEXT" in t:
        return "TEXT"
    if not t or "BLOB" in t:
        return "BLOB"
    if "REAL" in t or "FLOA" in t or "DOUB" in t:
        return "REAL"
    return "NUMERIC"


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


__all__ = ["FormatError", "Plan", "Rewrite", "apply", "plan"]
