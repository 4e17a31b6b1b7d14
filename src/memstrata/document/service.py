"""Curated documents in the store: read as markdown, preview a batch of edits, apply it.

A document is kept as JSON (its sections and bullets) in the record store under the scope,
kind (``essentials`` or ``topic``) and key; markdown is rendered on demand. Applying a batch is
one compare-and-swap write that also adds each operation to its bullet's history.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from memstrata import telemetry
from memstrata.citations import missing_episodes
from memstrata.document.format import (
    Bullet,
    Citation,
    Document,
    DocumentFormatError,
    Section,
    parse,
    serialize,
)
from memstrata.document.ops import Operation, OpKind, apply_operations, diff_documents
from memstrata.errors import ConflictError, InvalidInputError
from memstrata.model import DocumentKind, HistoryOp, ItemEvent, JsonValue, Scope
from memstrata.ports import RecordStore
from memstrata.textio import shown

ESSENTIALS_KEY: Final = "essentials"
#: the key of the L0 identity, which is not a curated document (and so no topic's key)
IDENTITY_KEY: Final = "identity"
#: a document key: a word character, then up to 99 word characters, dots or dashes
KEY_PATTERN: Final = r"^[\w][\w.-]{0,99}$"
_KEY_RE: Final = re.compile(KEY_PATTERN)
_HISTORY_OPS: Final = {
    OpKind.ADD: HistoryOp.CREATE,
    OpKind.EDIT: HistoryOp.UPDATE,
    OpKind.DELETE: HistoryOp.DELETE,
    OpKind.MOVE: HistoryOp.MOVE,
}

#: turns a bullet written without a citation into an episode id it can cite
Capture = Callable[[str, Scope], str]
#: removes private data from text before it is persisted in a curated document
Scrub = Callable[[str, Scope], str]


def document_to_json(doc: Document) -> dict[str, JsonValue]:
    return {
        "title": doc.title,
        "sections": [
            {
                "heading": s.heading,
                "bullets": [
                    {
                        "id": b.id,
                        "text": b.text,
                        "citations": [f"{c.surface}:{c.episode_id}" for c in b.citations],
                    }
                    for b in s.bullets
                ],
            }
            for s in doc.sections
        ],
    }


def document_from_json(data: Mapping[str, Any]) -> Document:
    """A curated document from its stored JSON; :class:`DocumentFormatError` if malformed."""
    try:
        return _document_from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DocumentFormatError(
            f"the stored document content is malformed ({exc!r}); replace it with "
            "update(..., content=...) or delete it"
        ) from exc


def _document_from_json(data: Mapping[str, Any]) -> Document:
    return Document(
        str(data["title"]),
        tuple(
            Section(
                str(s["heading"]),
                tuple(
                    Bullet(
                        str(b["id"]),
                        str(b["text"]),
                        tuple(Citation(*c.split(":", 1)) for c in b["citations"]),
                    )
                    for b in s["bullets"]
                ),
            )
            for s in data["sections"]
        ),
    )


def topic_slug(text: str) -> str:
    """A document key for a topic name: lowercase, runs of other characters as ``-``."""
    return re.sub(r"[^\w.-]+", "-", text.strip().lower()).strip("-.")[:100]


def kind_for(key: str) -> DocumentKind:
    if not _KEY_RE.match(key):
        raise InvalidInputError(
            f"document key {shown(key)} must be 1-100 letters, digits, '_', '-' or '.'"
        )
    if key == IDENTITY_KEY:
        raise InvalidInputError(
            "the L0 identity is a plain text, not a curated document: use identity and "
            "set_identity (memstrata identity show/edit, GET/PUT /v1/identity)"
        )
    return DocumentKind.ESSENTIALS if key == ESSENTIALS_KEY else DocumentKind.TOPIC


@dataclass(frozen=True, slots=True)
class DocPreview:
    """What a batch would do, computed without writing."""

    key: str
    base_version: int
    operations: tuple[Operation, ...]
    before: str
    after: str

    @property
    def diff(self) -> str:
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile=f"{self.key}@v{self.base_version}",
                tofile=f"{self.key} (proposed)",
            )
        )


class DocumentService:
    def __init__(self, store: RecordStore, capture: Capture, scrub: Scrub | None = None) -> None:
        self.store = store
        self.capture = capture
        self.scrub = scrub

    def get(self, scope: Scope, key: str) -> tuple[Document, int]:
        """The document and its version (an empty one at version 0 when none exists)."""
        stored = self.store.get_document(scope, kind_for(key), key)
        if stored is None:
            title = "Essentials" if key == ESSENTIALS_KEY else key
            return Document(title, ()), 0
        return document_from_json(stored.content), stored.version

    def markdown(self, scope: Scope, key: str) -> tuple[str, int]:
        doc, version = self.get(scope, key)
        return serialize(doc), version

    def plan(
        self,
        scope: Scope,
        key: str,
        change: str | Sequence[Operation],
        *,
        expected_version: int | None = None,
    ) -> DocPreview:
        """Preview a batch given as operations or as the whole edited markdown."""
        doc, version = self.get(scope, key)
        if expected_version is not None and expected_version != version:
            telemetry.record(telemetry.CONFLICT)
            raise ConflictError(key, expected_version, version)
        ops = diff_documents(doc, parse(change)) if isinstance(change, str) else list(change)
        after, touched = apply_operations(doc, ops)
        # an added bullet keeps the id the preview shows when the batch is applied
        ops = [
            replace(op, id=item_id) if op.kind == OpKind.ADD and not op.id else op
            for op, item_id in zip(ops, touched, strict=True)
        ]
        return DocPreview(key, version, tuple(ops), serialize(doc), serialize(after))

    def apply(
        self, scope: Scope, key: str, ops: Sequence[Operation], *, expected_version: int
    ) -> tuple[Document, int]:
        """Apply a batch atomically against ``expected_version``; returns the new document
        and its version. A batch that changes nothing (no operations, an edit to the same
        text) writes nothing and returns the version it was checked against."""
        doc, version = self.get(scope, key)
        if version != expected_version:  # before anything is captured for uncited bullets
            telemetry.record(telemetry.CONFLICT)
            raise ConflictError(key, expected_version, version)
        ops = [self._cited(op, scope) for op in ops]
        after, touched = apply_operations(doc, ops)
        if after == doc:
            return doc, version
        self._check_citations(scope, doc, after)
        events = [
            ItemEvent(
                item_id,
                _HISTORY_OPS[op.kind],
                op.reason.value if op.reason else None,
                _event_data(after, item_id, op),
            )
            for op, item_id in zip(ops, touched, strict=True)
        ]
        stored = self.store.put_document(
            scope,
            kind_for(key),
            key,
            document_to_json(after),
            expected_version=expected_version,
            item_events=events,
        )
        return after, stored.version

    def _cited(self, op: Operation, scope: Scope) -> Operation:
        """Text is scrubbed before it is persisted; a bullet added without citations cites an
        episode made of its own text."""
        if self.scrub is not None and op.text is not None:
            op = replace(op, text=self.scrub(op.text, scope))
        if op.kind == OpKind.ADD and not op.citations and op.text and op.text.strip():
            episode_id = self.capture(op.text, scope)
            return Operation(
                op.kind,
                op.id,
                op.section,
                op.text,
                (Citation("manual", episode_id),),
                op.reason,
                op.position,
            )
        return op

    def _check_citations(self, scope: Scope, before: Document, after: Document) -> None:
        """The citations the batch adds name episodes of the scope. Episodes the document
        cited already are not checked again (a bullet may keep or take over such a citation),
        so one stale citation never blocks other edits."""
        had = {c.episode_id for s in before.sections for b in s.bullets for c in b.citations}
        cited = (
            c.episode_id
            for s in after.sections
            for b in s.bullets
            for c in b.citations
            if c.episode_id not in had
        )
        missing = missing_episodes(self.store, scope, cited)
        if missing:
            raise InvalidInputError(
                f"citations name episodes that do not exist in scope {scope}: " + ", ".join(missing)
            )


def _event_data(doc: Document, item_id: str, op: Operation) -> dict[str, JsonValue]:
    for section in doc.sections:
        for bullet in section.bullets:
            if bullet.id == item_id:
                return {
                    "op": op.kind.value,
                    "section": section.heading,
                    "text": bullet.text,
                    "citations": [f"{c.surface}:{c.episode_id}" for c in bullet.citations],
                }
    return {"op": op.kind.value}
