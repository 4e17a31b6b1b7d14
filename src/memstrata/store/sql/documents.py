"""Curated documents: versioned by compare-and-swap."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from memstrata import telemetry
from memstrata.codec import format_time, parse_time
from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.ids import new_id
from memstrata.model import ChangeOp, Document, DocumentKind, HistoryOp, ItemEvent, JsonValue, Scope
from memstrata.store.sql.common import (
    DOC_COLUMNS,
    Row,
    Tx,
    placeholders,
    row_scope,
    scope_row,
    scope_where,
)
from memstrata.store.sql.facts import FactTables


class DocumentTables(FactTables):
    """Documents: read, put by compare-and-swap (with bullet history), list, delete."""

    @staticmethod
    def _document(row: Row) -> Document:
        return Document(
            id=row["id"],
            scope=row_scope(row),
            kind=DocumentKind(row["kind"]),
            key=row["key"],
            content=json.loads(row["content"]),
            version=row["version"],
            created_at=parse_time(row["created_at"]),
            updated_at=parse_time(row["updated_at"]),
        )

    def get_document(self, scope: Scope, kind: DocumentKind, key: str) -> Document | None:
        rows = self._read(
            f'SELECT {DOC_COLUMNS} FROM documents WHERE "user" = ? AND thread = ? '
            'AND agent = ? AND kind = ? AND "key" = ?',
            [*scope_row(scope), kind.value, key],
        )
        return self._document(rows[0]) if rows else None

    def get_document_by_id(self, scope: Scope, document_id: str) -> Document:
        where, params = scope_where(scope)
        rows = self._read(
            f"SELECT {DOC_COLUMNS} FROM documents WHERE {where} AND id = ?", [*params, document_id]
        )
        if not rows:
            raise NotFoundError(f"no document {document_id} in scope {scope}")
        return self._document(rows[0])

    def put_document(
        self,
        scope: Scope,
        kind: DocumentKind,
        key: str,
        content: Mapping[str, JsonValue],
        *,
        expected_version: int,
        item_events: Sequence[ItemEvent] = (),
    ) -> Document:
        if not key or len(key) > 200:
            raise InvalidInputError("a document key must be 1-200 characters")
        try:
            body = json.dumps(dict(content), ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"document content is not JSON: {exc}") from exc
        now = self._clock.now()
        try:
            with self._write() as tx:
                row = tx.execute(
                    f'SELECT {DOC_COLUMNS} FROM documents WHERE "user" = ? AND thread = ? '
                    'AND agent = ? AND kind = ? AND "key" = ?' + self.dialect.for_update,
                    [*scope_row(scope), kind.value, key],
                ).fetchone()
                stored = None if row is None else int(row["version"])
                if (stored or 0) != expected_version:
                    name = row["id"] if row is not None else f"{kind.value}/{key}"
                    telemetry.record(telemetry.CONFLICT)
                    raise ConflictError(name, expected_version, stored)
                if row is None:
                    doc = Document(new_id("doc"), scope, kind, key, dict(content), 1, now, now)
                    tx.execute(
                        f"INSERT INTO documents ({DOC_COLUMNS}) VALUES ({placeholders(10)})",
                        (
                            doc.id,
                            *scope_row(scope),
                            kind.value,
                            key,
                            body,
                            1,
                            format_time(now),
                            format_time(now),
                        ),
                    )
                    op = HistoryOp.CREATE
                else:
                    old = self._document(row)
                    doc = Document(
                        old.id,
                        scope,
                        kind,
                        key,
                        dict(content),
                        old.version + 1,
                        old.created_at,
                        now,
                    )
                    tx.execute(
                        "UPDATE documents SET content = ?, version = ?, updated_at = ? "
                        "WHERE id = ? AND version = ?",
                        (body, doc.version, format_time(now), doc.id, old.version),
                    )
                    op = HistoryOp.UPDATE
                self._add_history(
                    tx,
                    scope,
                    doc.id,
                    doc.version,
                    op,
                    None,
                    {"doc_kind": kind.value, "key": key, "content": dict(content)},
                )
                self._add_item_events(tx, scope, doc.id, item_events)
                self._log(tx, scope.user, [doc.id], ChangeOp.UPSERT)
        except self.dialect.unique_errors as exc:
            # another process created it first (a server store: the insert waited for it)
            telemetry.record(telemetry.CONFLICT)
            raise ConflictError(f"{kind.value}/{key}", expected_version, 1) from exc
        return doc

    def _add_item_events(
        self, tx: Tx, scope: Scope, doc_id: str, events: Sequence[ItemEvent]
    ) -> None:
        """Each bullet's history entry, numbered and erased within the document's scope."""
        for event in events:
            if event.op == HistoryOp.DELETE and event.reason == "user-request":
                # deletion on request erases the item's earlier text, as for facts
                self._erase_history(tx, scope, event.item_id)
            self._add_history(
                tx,
                scope,
                event.item_id,
                self._next_history_version(tx, scope, event.item_id),
                event.op,
                event.reason,
                {"document": doc_id, **dict(event.data)},
            )

    def list_documents(self, scope: Scope, kind: DocumentKind | None = None) -> list[Document]:
        where, params = scope_where(scope)
        if kind is not None:
            where += " AND kind = ?"
            params.append(kind.value)
        rows = self._read(
            f'SELECT {DOC_COLUMNS} FROM documents WHERE {where} ORDER BY kind, "key"', params
        )
        return [self._document(r) for r in rows]

    def delete_document(self, scope: Scope, document_id: str, *, reason: str) -> None:
        doc = self.get_document_by_id(scope, document_id)
        with self._write() as tx:
            tx.execute("DELETE FROM documents WHERE id = ?", (doc.id,))
            self._forget_history(tx, doc.scope, doc.id, doc.version + 1, reason)
            self._log(tx, scope.user, [doc.id], ChangeOp.DELETE)
