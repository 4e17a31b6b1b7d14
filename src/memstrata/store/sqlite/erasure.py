"""Proof that a deletion on request left no copy in the database's files.

Every connection overwrites deleted content (``secure_delete``, set in ``base``), but that is
not enough on its own:

* in WAL mode the pages as they were before the delete stay in the write-ahead log, and in the
  database file until a checkpoint writes the new pages over them;
* a B-tree rebalance rebuilds pages without clearing the space their moved cells leave, so a
  copy of a row made while it was live (by an insert, an update or a delete beside it, even in
  the deleting transaction) can outlive it in the free space of a live page, wherever the
  layout of the pages happens to put it.

:meth:`WalErasure.residue` checkpoints the log into the file and truncates it, then scans both
files' bytes for the deleted text. The pages where a copy is found have their free space
overwritten (:mod:`memstrata.store.sqlite.overwrite`: one row of each is rewritten twice, so
that SQLite defragments the page and zeroes its free space; a copy in an index has the table's
indexes rebuilt), and the files are checkpointed and scanned again. A copy that no row can be
moved over (on a freelist or overflow page left by a build that did not overwrite) has the
whole file rebuilt (``VACUUM``) before the last scan. What the last scan finds is reported.

Cost: one read of both files, as before, when nothing is found. When copies are found, the
interior pages of the B-trees are read to know whose pages hold them, each such page is
written once (two row updates, a few pages each), and the files are read once more; only a
copy that nothing else can reach rewrites the whole file.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import Final

from memstrata.erasure import Needles, text_forms
from memstrata.errors import BusyError, StoreError
from memstrata.store.sqlite import overwrite
from memstrata.store.sqlite.base import SqliteBase
from memstrata.store.sqlite.pages import DbFile, FormatError

log = logging.getLogger(__name__)

#: shorter forms could match by chance in page headers or numbers: they are not scanned
_MIN_FORM: Final = 4

#: rounds of overwriting before the file is rebuilt (a second one meets a page the first
#: could not size right, or a write made by another process in between)
_ATTEMPTS: Final = 2

#: each copy found (its offset and the form), by file
_Found = dict[Path, list[tuple[int, bytes]]]


class WalErasure(SqliteBase):
    def residue(self, texts: Collection[str]) -> list[str]:
        """Checkpoint the write-ahead log (TRUNCATE), overwrite what a deletion left in the
        pages' free space, then name each of the database's files that still holds a form of
        ``texts`` (UTF-8 or JSON-escaped) that no stored row holds: a copy a deletion left
        behind. Text that another record still holds is not a copy."""
        forms = Needles(f for f in text_forms(texts) if len(f) >= _MIN_FORM)
        with self._lock:
            found = self._scan(forms)
            try:
                for _ in range(_ATTEMPTS):
                    if not self._overwritable(found):
                        break
                    covered = self._overwrite(found[self.path])
                    if not covered:
                        self._rebuild()
                    found = self._scan(forms)
                    if not covered:
                        break
                else:
                    if self._overwritable(found):
                        self._rebuild()
                        found = self._scan(forms)
            except BusyError as exc:  # another writer holds the file: what is left is named
                log.warning("cannot overwrite deleted text in %s: %s", self.path, exc)
                found = self._scan(forms)
            return _report(found)

    def _scan(self, forms: Needles) -> _Found:
        """Checkpoint the log into the file, then find the copies in both files."""
        wal = Path(f"{self.path}-wal")
        try:
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.Error as exc:
            raise self._failure(exc, "checkpoint") from exc
        found: _Found = {}
        for path in (self.path, wal):
            try:
                places: dict[bytes, list[int]] = {}
                for offset, form in forms.find_in_file(path):
                    places.setdefault(form, []).append(offset)
            except OSError as exc:
                raise StoreError(f"cannot read {path} back: {exc}") from exc
            stray = [
                (offset, form)
                for form, offsets in places.items()
                if not self._in_a_row(form)
                for offset in offsets
            ]
            if stray:
                found[path] = stray
        return found

    def _overwritable(self, found: _Found) -> bool:
        """Whether the copies found are all in the database file, which this store can write:
        a copy in the log means the checkpoint could not finish (another process reading)."""
        return bool(found) and list(found) == [self.path] and not self.read_only and not self.damage

    def _overwrite(self, places: list[tuple[int, bytes]]) -> bool:
        """Overwrite the free space of the pages holding ``places``, in one write transaction
        taken while the log is empty (so that the file is the whole database and stays so).
        False when some copy is where no row can be moved over: then nothing is written, and
        only rebuilding the file removes it."""
        with self._write() as tx:
            if _size(Path(f"{self.path}-wal")):
                return True  # another process wrote since the checkpoint: scan again
            try:
                with DbFile.open(self.path) as db:
                    todo = overwrite.plan(tx, db, [(o, len(form)) for o, form in places])
            except (FormatError, OSError) as exc:
                log.warning("cannot read the pages of %s: %s", self.path, exc)
                return False
            if todo.left:
                log.info(
                    "deleted text in %d page(s) of %s that no row can cover",
                    len(todo.left),
                    self.path,
                )
                return False
            overwrite.apply(tx, todo)
        return True

    def _rebuild(self) -> None:
        """Rebuild the whole file from its live rows (``VACUUM``): every page written anew."""
        log.warning("rebuilding %s to erase deleted text left in its pages", self.path)
        try:
            self._conn.execute("VACUUM")
        except sqlite3.Error as exc:
            raise self._failure(exc, "rebuild") from exc

    def _in_a_row(self, form: bytes) -> bool:
        """Whether any row of any table (or the schema) holds ``form`` as text."""
        needle = form.decode("utf-8", "replace")
        conn = self._conn
        try:
            if conn.execute(
                "SELECT 1 FROM sqlite_master WHERE instr(sql, ?) > 0 LIMIT 1", [needle]
            ).fetchone():
                return True
            tables = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            for table in tables:
                columns = [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]
                test = " OR ".join(f'instr(CAST("{c}" AS TEXT), ?) > 0' for c in columns)
                if conn.execute(
                    f'SELECT 1 FROM "{table}" WHERE {test} LIMIT 1', [needle] * len(columns)
                ).fetchone():
                    return True
        except sqlite3.Error as exc:
            raise self._failure(exc, "check for deleted text") from exc
        return False


def _report(found: _Found) -> list[str]:
    return [
        f"{path}: {len({form for _, form in places})} form(s) of the deleted text"
        for path, places in found.items()
    ]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
