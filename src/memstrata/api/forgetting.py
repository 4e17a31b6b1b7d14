"""Deletion: delete, forget (deletion on request) and forget a whole thread or user.

Each call is planned here, then made by the store in one transaction (:meth:`erase`) with a
journal entry; the copies outside the store (raw trace lines, see :meth:`_erase_copies`) are
erased after the commit, and the entry marked done. A failure there leaves the entry pending:
a retry of the same call, or the next :meth:`Memory.open`, finishes it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import TYPE_CHECKING, Any, Final

from memstrata.api.common import DeleteReport, ScopeLike, as_scope, reason_of
from memstrata.api.documents import DocumentsMixin
from memstrata.errors import ConflictError, InvalidInputError, NotFoundError, StoreError
from memstrata.ids import kind_of
from memstrata.model import (
    DeleteReason,
    Document,
    DocumentKind,
    DocumentWrite,
    EpisodeFilter,
    Erasure,
    ErasureRecord,
    HistoryOp,
    HistoryRewrite,
    ItemEvent,
    JsonValue,
    Scope,
)
from memstrata.ports import RecordStore

if TYPE_CHECKING:
    from memstrata.document.format import Bullet
    from memstrata.document.format import Document as CuratedDocument

log = logging.getLogger(__name__)

_ATTEMPTS: Final = 5  # plans made again when a document changed under one
_CURATED: Final = (DocumentKind.TOPIC, DocumentKind.ESSENTIALS)


def scope_target(scope: Scope) -> str:
    """The journal's name for a whole scope."""
    return f"scope {scope}"


class ForgettingMixin(DocumentsMixin):
    """delete, forget, forget_scope, and finishing erasures left pending."""

    def delete(
        self,
        item_id: str,
        scope: ScopeLike,
        *,
        reason: DeleteReason | str = DeleteReason.USER_REQUEST,
    ) -> DeleteReport:
        """Delete an item. Deleting an episode removes it from the facts and curated bullets
        that cite it (a fact or bullet left citing nothing is deleted, reason
        ``source-deleted``) and erases its raw trace line (a tombstone stays), all store
        changes in one transaction. A deleted fact is not extracted again from its turns.
        Search indexes and the embedding cache drop their copies when they next read the
        change feed."""
        scope = as_scope(scope)
        why = reason_of(reason)
        kind = kind_of(item_id)
        if kind not in ("episode", "fact", "document"):
            raise InvalidInputError(f"{item_id} names a {kind}, which cannot be deleted")
        return self._erase_item(item_id, scope, why, whole=False)

    def forget(self, item_id: str, scope: ScopeLike) -> DeleteReport:
        """Delete on request, with everything derived from it: every fact, curated bullet and
        profile value citing a forgotten episode (or carrying a forgotten fact's text), the
        forgotten text in every earlier version of every document, bullet and fact, and the
        raw trace line. A retry after a failure finishes what is left; a retry after success
        says the item is already forgotten (:class:`NotFoundError`)."""
        scope = as_scope(scope)
        kind = kind_of(item_id)
        if kind == "item":
            raise InvalidInputError(
                f"{item_id} is a bullet: delete it from its document with reason user-request "
                "(doc apply), which erases its history too"
            )
        if kind not in ("episode", "fact", "document"):
            raise InvalidInputError(f"{item_id} names a {kind}, which cannot be forgotten")
        return self._erase_item(item_id, scope, DeleteReason.USER_REQUEST, whole=True)

    def forget_scope(self, scope: ScopeLike) -> DeleteReport:
        """Forget everything a scope holds: a user (every thread and agent), or one thread
        (or agent) of a user. Every episode, fact and document (identity, profile,
        essentials, topics, state) of the scope and every history entry go; records of the
        user outside the scope lose only what derives from the scope's episodes (the facts,
        bullets and profile values citing them). ``counts`` says how many of
        each kind went, and how many raw trace lines were erased."""
        scope = as_scope(scope)
        target = scope_target(scope)
        pending = self.store.find_erasure(scope, target)
        if pending is not None and not pending.done:
            return self._finish(pending)
        episodes = [
            e.id for e in self.store.iter_episodes(scope, EpisodeFilter(include_archived=True))
        ]
        facts = [f.id for f in self.store.iter_facts(scope)]
        documents = [d.id for d in self.store.list_documents(scope)]
        if not (episodes or facts or documents):
            said = "" if pending is None else f" (already forgotten at {pending.at.isoformat()})"
            raise NotFoundError(f"scope {scope} holds nothing to forget{said}")
        return self._finish(
            self._plan_and_erase(
                scope,
                target,
                DeleteReason.USER_REQUEST,
                episodes=episodes,
                facts=facts,
                documents=documents,
                whole=True,
                whole_scope=True,
            )
        )

    def finish_erasures(self) -> int:
        """Finish every erasure left pending (by a failure, or a crash, after its store
        transaction); the number finished. :meth:`Memory.open` calls it."""
        finished = 0
        try:
            pending = self.store.pending_erasures()
        except StoreError as exc:  # a store that cannot be read says so on its next use
            log.warning("cannot read the erasure journal: %s", exc)
            return 0
        for record in pending:
            try:
                self._finish(record)
                finished += 1
            except StoreError as exc:
                log.warning("erasure %s is still pending: %s", record.id, exc)
        return finished

    # the steps ---------------------------------------------------------------------
    def _erase_item(
        self, item_id: str, scope: Scope, why: DeleteReason, *, whole: bool
    ) -> DeleteReport:
        record = self.store.find_erasure(scope, item_id)
        if record is not None and not record.done:
            return self._finish(record)
        kind = kind_of(item_id)
        episodes = [item_id] if kind == "episode" else []
        settled: list[str] = []
        if kind == "fact":
            settled = self._sources_of(item_id, scope)
            if whole:
                episodes = self._statements_of(item_id, scope)
        try:
            planned = self._plan_and_erase(
                scope,
                item_id,
                why,
                episodes=episodes,
                facts=[item_id] if kind == "fact" else [],
                documents=[item_id] if kind == "document" else [],
                whole=whole,
                settled=settled,
            )
        except NotFoundError:
            record = self.store.find_erasure(scope, item_id)  # another caller may have won
            if record is not None and not record.done:
                return self._finish(record)
            if record is not None:
                raise NotFoundError(
                    f"{item_id} was already {'forgotten' if whole else 'deleted'} at "
                    f"{record.at.isoformat()}: no copy of it is left in scope {scope}"
                ) from None
            raise
        return self._finish(planned)

    def _sources_of(self, fact_id: str, scope: Scope) -> list[str]:
        try:
            return list(self.store.get_fact(scope, fact_id).sources)
        except NotFoundError:
            return []  # the erasure says what is missing

    def _statements_of(self, fact_id: str, scope: Scope) -> list[str]:
        """The turns (surface ``manual``) made of a fact's own statement when it was added
        without sources: copies of the fact, forgotten with it."""
        try:
            fact = self.store.get_fact(scope, fact_id)
        except NotFoundError:
            return []  # the erasure says what is missing
        return [
            e.id
            for e in self.store.get_episodes(Scope(scope.user), fact.sources)
            if e.surface == "manual" and e.text.strip() == fact.text.strip()
        ]

    def _finish(self, record: ErasureRecord) -> DeleteReport:
        try:
            lines = self._erase_copies(record.episode_ids, record.texts, reason=record.reason)
        except OSError as exc:
            raise StoreError(
                f"{record.target} was deleted but its raw trace line could not be erased "
                f"({exc}); the erasure stays pending: a retry, or the next open, finishes it"
            ) from exc
        self.store.finish_erasure(record.id)
        counts = {**record.counts, "trace_lines": lines}
        return DeleteReport(record.deleted, record.cascaded, counts)

    def _erase_copies(
        self,
        episode_ids: Sequence[str],
        texts: Sequence[str],
        *,
        reason: str = DeleteReason.USER_REQUEST.value,
    ) -> int:
        """Erase the copies of erased records kept outside the record store: the raw trace
        lines of ``episode_ids`` (tombstones with ``reason`` stay). ``texts`` are every text
        the erasure removed from the store (episodes, facts, bullets, profile values), for
        copies derived from them. Raises :class:`OSError` when a copy cannot be erased;
        must be safe to run again. Returns the number of trace lines erased."""
        if self.trace is None or not episode_ids:
            return 0
        return self.trace.redact(episode_ids, reason)

    def _plan_and_erase(
        self,
        scope: Scope,
        target: str,
        why: DeleteReason,
        *,
        episodes: Sequence[str],
        facts: Sequence[str],
        documents: Sequence[str],
        whole: bool,
        whole_scope: bool = False,
        settled: Sequence[str] = (),
    ) -> ErasureRecord:
        for attempt in range(_ATTEMPTS):
            planner = _Planner(self.store, scope, set(episodes), whole=whole)
            planner.forget_facts(facts)
            planner.forget_documents(
                documents,
                # a whole scope's history goes whole, in the store
                erase_bullets=why == DeleteReason.USER_REQUEST and not whole_scope,
            )
            planner.rewrite_derived(excluded=set(documents), whole_scope=whole_scope)
            erasure = Erasure(
                target=target,
                reason=why.value,
                episode_ids=tuple(episodes),
                fact_ids=tuple(facts),
                document_ids=(*documents, *planner.unreadable),
                whole_scope=whole_scope,
                derived=whole,
                documents=tuple(planner.writes),
                history=tuple(planner.rewrites),
                texts=tuple(planner.texts),
                settled=tuple(settled),
            )
            try:
                return self.store.erase(scope, erasure)
            except ConflictError:
                if attempt + 1 == _ATTEMPTS:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover


class _Planner:
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
            if doc.kind not in _CURATED:
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
            if doc.id in excluded or (whole_scope and self.scope.contains(doc.scope)):
                continue
            if doc.kind in _CURATED:
                self._curated(doc)
            elif doc.kind == DocumentKind.PROFILE:
                self._profile(doc)

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
        for entry in self.store.history(doc.scope, doc.id):
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
        for entry in self.store.history(doc.scope, doc.id):
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
    def _versions(self, doc: Document) -> list[CuratedDocument]:
        from memstrata.document.service import document_from_json

        out = []
        for entry in self.store.history(doc.scope, doc.id):
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
