"""Proof that a deletion on request left no copy in the database's files.

Every connection overwrites deleted content (``secure_delete``, set in ``base``), but in WAL
mode the pages as they were before the delete stay in the write-ahead log, and in the database
file until a checkpoint writes the new pages over them. :meth:`WalErasure.residue` checkpoints
the log into the file and truncates it, then scans both files' bytes for the deleted text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import Final

from memstrata.erasure import Needles, text_forms
from memstrata.errors import StoreError
from memstrata.store.sqlite.base import SqliteBase

#: shorter forms could match by chance in page headers or numbers: they are not scanned
_MIN_FORM: Final = 4


class WalErasure(SqliteBase):
    def residue(self, texts: Collection[str]) -> list[str]:
        """Checkpoint the write-ahead log (TRUNCATE), then name each of the database's files
        that still holds a form of ``texts`` (UTF-8 or JSON-escaped) that no stored row holds:
        a copy a deletion left behind. Text that another record still holds is not a copy."""
        forms = Needles(f for f in text_forms(texts) if len(f) >= _MIN_FORM)
        with self._lock:
            try:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error as exc:
                raise self._failure(exc, "checkpoint") from exc
            left = []
            for path in (self.path, Path(f"{self.path}-wal")):
                try:
                    found = forms.in_file(path)
                except OSError as exc:
                    raise StoreError(f"cannot read {path} back: {exc}") from exc
                stray = [f for f in found if not self._in_a_row(f)]
                if stray:
                    left.append(f"{path}: {len(stray)} form(s) of the deleted text")
            return left

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
