"""Planning an erasure: what deleting records does to the records derived from them.

:class:`ErasurePlanner` reads the user's documents (and, for deletion on request, their
history) and lists the rewrites an :class:`memstrata.model.Erasure` makes: documents without
the bullets or profile values resting on erased episodes or texts, history entries without
them, bullet histories erased. It writes nothing; the store applies the plan.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, Final

from memstrata.api.common import AUDIT_STATE_KEY
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.model import (
    DeleteReason,
    Document,
    DocumentKind,
    DocumentWrite,
    HistoryOp,
    HistoryRewrite,
    ItemEvent,
    ItemVersion,
    JsonValue,
    Scope,
)
from memstrata.ports import RecordStore

if TYPE_CHECKING:
    from memstrata.document.format import Bullet
    from memstrata.document.format import Document as CuratedDocument

CURATED: Final = (DocumentKind.TOPIC, DocumentKind.ESSENTIALS)


class ErasurePlanner:
    """The rewrites one erasure makes to what derives from the erased records."""

    def __init__(
        self, store: RecordStore, scope: Scope, episodes: Set[str], *, whole: bool
    ) -> None:
        self.store = store
        self.scope = scope
        self.episodes = set(episodes)
        self.whole = whole
        self.texts: list[str] = []
        self.erased_texts: set[str] = set()
        self.writes: list[DocumentWrite] = []
        self.rewrites: list[HistoryRewrite] = []
        #: malformed documents (stored unchecked by older versions) that mention what is
        #: forgotten: they cannot be rewritten, so they go whole
        self.unreadable: list[str] = []
        #: every document the plan read, by id (the erasure's copies are worked out from them)
        self.documents: dict[str, Document] = {}
        self._histories: dict[str, list[ItemVersion]] = {}

    def forget_facts(self, fact_ids: Sequence[str]) -> None:
        """A forgotten fact's text goes from the bullets that carry it."""
        for fact in self.store.get_facts(self.scope, fact_ids):
            self.erased_texts.add(fact.text)

    def forget_documents(self, document_ids: Sequence[str], *, erase_bullets: bool) -> None:
        """A deleted document's bullet texts are erased wherever copied; with
        ``erase_bullets`` (on request) its bullets' history entries are too."""
        from memstrata.document.service import document_from_json

        for document_id in document_ids:
            doc = self.store.get_document_by_id(self.scope, document_id)
            self.documents[doc.id] = doc
            if doc.kind not in CURATED:
                continue
            try:
                current = document_from_json(doc.content)
            except InvalidInputError:
                current = None
            if current is not None:
                self.texts.extend(b.text for s in current.sections for b in s.bullets)
            if not erase_bullets:
                continue
            ids = {b for version in self._versions(doc) for b in _bullet_ids(version)}
            for bullet_id in sorted(ids):
                self._erase_rows(doc.scope, bullet_id, lambda _: True)

    def rewrite_derived(self, *, excluded: Set[str], whole_scope: bool) -> None:
        """Every document of the user outside ``excluded`` (and outside the scope, for a
        whole scope) without what rests on the erased episodes and texts."""
        if not self.episodes and not self.erased_texts:
            return
        for doc in self.store.list_documents(Scope(self.scope.user)):
            self.documents.setdefault(doc.id, doc)
            if doc.id in excluded or (whole_scope and self.scope.contains(doc.scope)):
                continue
            if doc.kind in CURATED:
                self._curated(doc)
            elif doc.kind == DocumentKind.PROFILE:
                self._profile(doc)
        self._drop_kept_flags(excluded, whole_scope)

    def _drop_kept_flags(self, excluded: Set[str], whole_scope: bool) -> None:
        """A kept audit flag (a hash of its bullet's text) goes when its bullet is removed
        or rewritten: no trace of the bullet outlives it."""
        touched = {e.item_id for w in self.writes for e in w.item_events}
        if not touched:
            return
        for doc in list(self.documents.values()):
            if (
                doc.kind != DocumentKind.STATE
                or doc.key != AUDIT_STATE_KEY
                or doc.id in excluded
                or (whole_scope and self.scope.contains(doc.scope))
            ):
                continue
            kept = doc.content.get("kept")
            if not isinstance(kept, Mapping) or not touched & set(kept):
                continue
            left = {k: v for k, v in kept.items() if k not in touched}
            self.writes.append(DocumentWrite(doc.id, {**doc.content, "kept": left}, doc.version))
            if not self.whole:
                continue
            for entry in self.history(doc):
                content = entry.data.get("content")
                old = content.get("kept") if isinstance(content, Mapping) else None
                if isinstance(content, Mapping) and isinstance(old, Mapping) and touched & set(old):
                    kept_then = {k: v for k, v in old.items() if k not in touched}
                    data = {**entry.data, "content": {**content, "kept": kept_then}}
                    self.rewrites.append(HistoryRewrite(doc.id, doc.scope, entry.version, data))

    # documents -----------------------------------------------------------------------
    def _mentions(self, content: Mapping[str, Any]) -> bool:
        """Whether JSON content names an erased episode or holds an erased text."""
        body = json.dumps(content, ensure_ascii=False)
        return any(e in body for e in self.episodes) or any(t in body for t in self.erased_texts)

    def _curated(self, doc: Document) -> None:
        from memstrata.document.erasure import strip_sources
        from memstrata.document.service import document_from_json, document_to_json

        try:
            current = document_from_json(doc.content)
        except InvalidInputError:
            if self.whole and self._mentions(doc.content):
                self.unreadable.append(doc.id)
            return
        stripped = strip_sources(current, self.episodes, texts=self.erased_texts, whole=self.whole)
        reason = DeleteReason.USER_REQUEST if self.whole else DeleteReason.SOURCE_DELETED
        if stripped.touched:
            events = [
                ItemEvent(b.id, HistoryOp.DELETE, reason.value, {"op": "delete"})
                for b in stripped.removed
            ] + [
                ItemEvent(b.id, HistoryOp.UPDATE, DeleteReason.SOURCE_DELETED.value, _bullet(b))
                for b in stripped.changed
            ]
            self.writes.append(
                DocumentWrite(
                    doc.id, document_to_json(stripped.document), doc.version, tuple(events)
                )
            )
            self.texts.extend(b.text for b in stripped.removed)
        if not self.whole:
            return
        removed_now = {b.id for b in stripped.removed}
        dropped: set[str] = set()
        for entry in self.history(doc):
            content = entry.data.get("content")
            if not isinstance(content, Mapping):
                continue
            try:
                version = document_from_json(content)
            except InvalidInputError:
                if self._mentions(content):  # an unreadable version: erased whole
                    self.rewrites.append(HistoryRewrite(doc.id, doc.scope, entry.version, {}))
                continue
            old = strip_sources(version, self.episodes, texts=self.erased_texts, whole=True)
            if old.touched:
                self.texts.extend(b.text for b in old.removed)
                dropped.update(b.id for b in old.removed)
                data = {**entry.data, "content": document_to_json(old.document)}
                self.rewrites.append(HistoryRewrite(doc.id, doc.scope, entry.version, data))
        for bullet_id in sorted(dropped - removed_now):  # removed now: erased by its delete
            self._erase_rows(doc.scope, bullet_id, self._mentions_erased)

    def _profile(self, doc: Document) -> None:
        content, removed = self._strip_profile(doc.content)
        if removed:
            self.writes.append(DocumentWrite(doc.id, content, doc.version))
            self.texts.extend(removed)
        if not self.whole:
            return
        for entry in self.history(doc):
            old = entry.data.get("content")
            if not isinstance(old, Mapping):
                continue
            new, gone = self._strip_profile(old)
            if gone:
                self.texts.extend(gone)
                data = {**entry.data, "content": new}
                self.rewrites.append(HistoryRewrite(doc.id, doc.scope, entry.version, data))

    def _strip_profile(self, content: Mapping[str, Any]) -> tuple[dict[str, JsonValue], list[str]]:
        """Profile content without the slots (forget) or sources (delete) of erased
        episodes; a slot left citing nothing goes. Also the values removed."""
        out: dict[str, JsonValue] = dict(content)
        removed: list[str] = []
        for section in ("fields", "preferences"):
            slots = content.get(section)
            if not isinstance(slots, Mapping):
                continue
            kept: dict[str, JsonValue] = {}
            for key, slot in slots.items():
                if not isinstance(slot, Mapping) or not isinstance(slot.get("sources"), list):
                    kept[key] = slot  # malformed: kept unless it holds what is forgotten
                    if self.whole and self._mentions({key: slot}):
                        del kept[key]
                        removed.append(str(key))
                    continue
                sources = [str(s) for s in slot["sources"]]
                left = [s for s in sources if s not in self.episodes]
                value = str(slot.get("value", ""))
                if (left == sources and value not in self.erased_texts) or (
                    left and not self.whole
                ):
                    kept[key] = slot if left == sources else {**slot, "sources": left}
                    continue
                removed.append(value)
            out[section] = kept
        return out, removed

    # history -------------------------------------------------------------------------
    def history(self, doc: Document) -> list[ItemVersion]:
        """A document's history, read once for the whole plan."""
        if doc.id not in self._histories:
            self._histories[doc.id] = self.store.history(doc.scope, doc.id)
        return self._histories[doc.id]

    def _versions(self, doc: Document) -> list[CuratedDocument]:
        from memstrata.document.service import document_from_json

        out = []
        for entry in self.history(doc):
            content = entry.data.get("content")
            if isinstance(content, Mapping):
                try:
                    out.append(document_from_json(content))
                except InvalidInputError:
                    continue  # its history entries go with the document
        return out

    def _erase_rows(
        self, scope: Scope, item_id: str, erase: Callable[[Mapping[str, JsonValue]], bool]
    ) -> None:
        try:
            entries = self.store.history(scope, item_id)
        except NotFoundError:
            return
        for entry in entries:
            if entry.data and erase(entry.data):
                self.rewrites.append(HistoryRewrite(item_id, scope, entry.version, {}))

    def _mentions_erased(self, data: Mapping[str, JsonValue]) -> bool:
        cites = data.get("citations")
        cited = {str(c).split(":", 1)[-1] for c in cites} if isinstance(cites, list) else set()
        return bool(cited & self.episodes) or data.get("text") in self.erased_texts


def _bullet_ids(doc: CuratedDocument) -> Iterable[str]:
    return (b.id for s in doc.sections for b in s.bullets)


def _bullet(bullet: Bullet) -> dict[str, JsonValue]:
    return {
        "op": "edit",
        "text": bullet.text,
        "citations": [f"{c.surface}:{c.episode_id}" for c in bullet.citations],
    }
