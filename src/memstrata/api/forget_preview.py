"""What a deletion would remove or rewrite, said before it is made (a dry run).

The preview is not a second account of the cascade: the erasure is planned by the same
:class:`~memstrata.api.erasure_plan.ErasurePlanner` and applied by the same
:meth:`RecordStore.erase` transaction as a real deletion, then rolled back
(``dry_run=True``). Its ids and counts are what the store reported for that transaction;
this module only reads, while nothing has changed yet, the texts that go with those ids
(episodes, facts, bullets, profile slots) and counts the raw trace lines the erasure would
redact, so a person can see them before confirming.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from memstrata.api.common import DeleteReport
from memstrata.api.erasure_plan import CURATED
from memstrata.codec import format_time
from memstrata.errors import InvalidInputError
from memstrata.model import (
    Document,
    DocumentKind,
    Erasure,
    ErasureRecord,
    HistoryOp,
    JsonValue,
    Scope,
)
from memstrata.ports import RecordStore, TraceSink

#: at most this many entries of each list; the counts are always whole
MAX_LISTED: Final = 500
_PROFILE_SECTIONS: Final = ("fields", "preferences")


@dataclass(frozen=True, slots=True)
class ForgetPreview(DeleteReport):
    """A deletion not made: the ids and counts the store's transaction reported before it
    was rolled back (``deleted``, ``cascaded``, ``counts``, as the real deletion reports
    them), and what they hold. Lists keep to :data:`MAX_LISTED` entries each."""

    #: the turns that go: id, session, speaker, time, text
    episodes: tuple[Mapping[str, JsonValue], ...] = ()
    #: the facts that go (``how``: ``deleted`` as asked, ``cascaded`` as derived), and
    #: those that only lose a citation (``rewritten``; a deletion, not a forget)
    facts: tuple[Mapping[str, JsonValue], ...] = ()
    #: documents deleted whole: id, kind, key
    documents: tuple[Mapping[str, JsonValue], ...] = ()
    #: bullets of curated documents: document key, bullet id, text, ``how`` (``deleted``,
    #: ``rewritten``: it loses a citation, or ``document-deleted``)
    bullets: tuple[Mapping[str, JsonValue], ...] = ()
    #: profile slots: section, slot, value, ``how`` (``deleted``, ``rewritten``)
    profile_slots: tuple[Mapping[str, JsonValue], ...] = ()
    #: search index entries (turns, facts, bullets) that go with the records
    index_entries: int = 0
    #: texts whose cached vectors and saved index entries are erased
    embedded_texts: int = 0
    #: True when an earlier deletion of the same target is pending: the call finishes it
    pending: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            **DeleteReport.to_json(self),
            "dry_run": True,
            "episodes": [dict(e) for e in self.episodes],
            "facts": [dict(f) for f in self.facts],
            "documents": [dict(d) for d in self.documents],
            "bullets": [dict(b) for b in self.bullets],
            "profile_slots": [dict(s) for s in self.profile_slots],
            "index_entries": self.index_entries,
            "embedded_texts": self.embedded_texts,
            "pending": self.pending,
            "notes": list(self.notes),
        }


def pending_preview(record: ErasureRecord, trace_lines: int) -> ForgetPreview:
    """The preview of an erasure already made in the store whose copies outside it are
    still to be erased: the call finishes it, and reports what the journal recorded."""
    return ForgetPreview(
        record.deleted,
        record.cascaded,
        {**record.counts, "trace_lines": trace_lines},
        pending=True,
        notes=("an earlier deletion of this target is pending; this call finishes it",),
    )


def describe(
    store: RecordStore,
    trace: TraceSink | None,
    scope: Scope,
    erasure: Erasure,
    record: ErasureRecord,
    documents: Mapping[str, Document],
) -> ForgetPreview:
    """The preview of ``erasure``, given the ``record`` its rolled-back transaction
    reported and the ``documents`` its plan read (by id)."""
    user = Scope(scope.user)
    gone = {*record.deleted, *record.cascaded}
    episode_ids = list(record.episode_ids)
    episodes = [
        {
            "id": e.id,
            "session_id": e.session_id,
            "speaker": e.speaker,
            "time": format_time(e.time),
            "text": e.text,
        }
        for e in store.get_episodes(scope, episode_ids[:MAX_LISTED])
    ]
    fact_ids = [i for i in (*record.deleted, *record.cascaded) if i.startswith("fa_")]
    asked = set(record.deleted)
    facts: list[dict[str, JsonValue]] = [
        {
            "id": f.id,
            "text": f.text,
            "category": f.category.value,
            "how": "deleted" if f.id in asked else "cascaded",
        }
        for f in store.get_facts(user, fact_ids[:MAX_LISTED])
    ]
    if not erasure.derived and episode_ids:  # citing facts that keep other sources
        for fact in store.facts_citing(user, episode_ids):
            if fact.id not in gone and len(facts) < MAX_LISTED:
                facts.append(
                    {
                        "id": fact.id,
                        "text": fact.text,
                        "category": fact.category.value,
                        "how": "rewritten",
                    }
                )
    deleted_docs = [documents[i] for i in record.deleted if i in documents]
    bullets: list[dict[str, JsonValue]] = []
    slots: list[dict[str, JsonValue]] = []
    for write in erasure.documents:
        doc = documents.get(write.document_id)
        if doc is None:
            continue
        if doc.kind in CURATED:
            texts = _bullet_texts(doc.content)
            for event in write.item_events:
                how = "deleted" if event.op == HistoryOp.DELETE else "rewritten"
                bullets.append(_bullet(doc, event.item_id, texts.get(event.item_id), how))
        elif doc.kind == DocumentKind.PROFILE:
            slots.extend(_slot_changes(doc, write.content))
    for doc in deleted_docs:
        if doc.kind in CURATED:
            for bullet_id, text in _bullet_texts(doc.content).items():
                bullets.append(_bullet(doc, bullet_id, text, "document-deleted"))
        elif doc.kind == DocumentKind.PROFILE:
            slots.extend(_slot_changes(doc, {}))
    trace_lines = 0
    if trace is not None and record.episode_ids:
        trace_lines = len(trace.residue(record.episode_ids, record.texts))
    searchable = sum(i.startswith(("ep_", "fa_", "m_")) for i in gone) + sum(
        1 for b in bullets if b["how"] == "document-deleted"
    )
    return ForgetPreview(
        record.deleted,
        record.cascaded,
        {**record.counts, "trace_lines": trace_lines},
        episodes=tuple(episodes),
        facts=tuple(facts),
        documents=tuple(
            {"id": d.id, "kind": d.kind.value, "key": d.key} for d in deleted_docs[:MAX_LISTED]
        ),
        bullets=tuple(bullets[:MAX_LISTED]),
        profile_slots=tuple(slots[:MAX_LISTED]),
        index_entries=searchable,
        embedded_texts=len(record.texts),
    )


def _bullet(doc: Document, bullet_id: str, text: str | None, how: str) -> dict[str, JsonValue]:
    return {
        "document": doc.key,
        "document_id": doc.id,
        "bullet_id": bullet_id,
        "text": text,
        "how": how,
    }


def _bullet_texts(content: Mapping[str, Any]) -> dict[str, str]:
    """A curated document's bullets by id (none for a malformed one)."""
    from memstrata.document.service import document_from_json

    try:
        parsed = document_from_json(content)
    except InvalidInputError:
        return {}
    return {b.id: b.text for s in parsed.sections for b in s.bullets}


def _slot_changes(doc: Document, after: Mapping[str, Any]) -> list[dict[str, JsonValue]]:
    """The profile slots ``after`` drops or changes, from the document as stored."""
    changes: list[dict[str, JsonValue]] = []
    for section in _PROFILE_SECTIONS:
        before = doc.content.get(section)
        now = after.get(section)
        if not isinstance(before, Mapping):
            continue
        kept: Mapping[str, Any] = now if isinstance(now, Mapping) else {}
        for slot, value in before.items():
            if slot in kept and kept[slot] == value:
                continue
            changes.append(
                {
                    "document_id": doc.id,
                    "section": section,
                    "slot": str(slot),
                    "value": _slot_value(value),
                    "how": "rewritten" if slot in kept else "deleted",
                }
            )
    return changes


def _slot_value(slot: object) -> str:
    if isinstance(slot, Mapping):
        return str(slot.get("value", ""))
    return str(slot)
