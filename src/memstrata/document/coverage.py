"""Which facts a curated document speaks for.

Consolidation files every new current fact in its topic's document and offers the essentials
document every profile and preference fact and every fact of importance
:data:`ESSENTIAL_IMPORTANCE` or more; it records in the scope's ``state/consolidation``
document the last fact id it has read. From then on the document, as a person may have edited
it, is what memory says about those facts: a bullet edited or deleted by hand must not come
back from the fact it was made from. Serving (``wake_up``, ``recall``, ``context``) and
consolidation share these rules from here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from memstrata.document.format import Bullet
from memstrata.document.format import Document as CuratedDocument
from memstrata.document.service import ESSENTIALS_KEY, document_from_json, topic_slug
from memstrata.errors import InvalidInputError
from memstrata.model import Category, Document, DocumentKind, Fact, Scope
from memstrata.ports import RecordStore

log = logging.getLogger(__name__)

ESSENTIAL_IMPORTANCE: Final = 0.8
#: the key of the state document in which consolidation records the last fact id it read
CONSOLIDATION_STATE_KEY: Final = "consolidation"


def readable(stored: Document) -> CuratedDocument | None:
    """A stored curated document, or None when an older version stored it malformed (it is
    left out of serving, never making the scope unreadable)."""
    try:
        return document_from_json(stored.content)
    except InvalidInputError:
        log.warning("document %s is malformed and is not served", stored.id)
        return None


def belongs_in_essentials(fact: Fact) -> bool:
    """Whether consolidation offers ``fact`` to the essentials document."""
    return (
        fact.category in (Category.PROFILE, Category.PREFERENCE)
        or fact.importance >= ESSENTIAL_IMPORTANCE
    )


def consolidated_through(store: RecordStore, scope: Scope) -> str | None:
    """The last fact id consolidation has read in ``scope`` (None: it never ran)."""
    state = store.get_document(scope, DocumentKind.STATE, CONSOLIDATION_STATE_KEY)
    last = state.content.get("last_fact_id") if state is not None else None
    return str(last) if last else None


def offered_to_essentials(fact: Fact, through: str | None) -> bool:
    """Whether consolidation, having read up to fact id ``through``, has offered ``fact`` to
    the essentials document (so the document as it stands now speaks for it)."""
    return through is not None and fact.id <= through and belongs_in_essentials(fact)


def filed_in_topic(fact_id: str, topic: str | None, key: str, through: str | None) -> bool:
    """Whether consolidation, having read up to fact id ``through``, has filed the fact
    ``fact_id`` (about ``topic``) in the topic document ``key`` (its topic's slug)."""
    return (
        through is not None
        and fact_id <= through
        and topic is not None
        and topic_slug(topic) == key
    )


def spoken_for(
    store: RecordStore, scope: Scope, facts: Sequence[Fact]
) -> dict[str, list[tuple[str, Bullet]]]:
    """For each of ``facts`` a curated document of ``scope`` speaks for (the essentials it
    was offered to, the topic document it was filed in): ``(document key, bullet)`` for the
    bullets of those documents, as they stand now, that cite one of the fact's sources; an
    empty list when a person deleted them. Facts no document speaks for are absent."""
    through = consolidated_through(store, scope)
    if through is None:
        return {}
    documents: dict[str, list[Bullet] | None] = {}

    def bullets(key: str) -> list[Bullet] | None:
        if key not in documents:
            kind = DocumentKind.ESSENTIALS if key == ESSENTIALS_KEY else DocumentKind.TOPIC
            stored = store.get_document(scope, kind, key)
            doc = None if stored is None else readable(stored)
            documents[key] = None if doc is None else [b for s in doc.sections for b in s.bullets]
        return documents[key]

    out: dict[str, list[tuple[str, Bullet]]] = {}
    for fact in facts:
        keys = [ESSENTIALS_KEY] if offered_to_essentials(fact, through) else []
        slug = topic_slug(fact.topic) if fact.topic is not None else ""
        if filed_in_topic(fact.id, fact.topic, slug, through):
            keys.append(slug)
        sources = set(fact.sources)
        for key in keys:
            kept = bullets(key)
            if kept is None:
                continue  # no such document (never written, or deleted): the fact stands
            found = out.setdefault(fact.id, [])
            found += [(key, b) for b in kept if any(c.episode_id in sources for c in b.citations)]
    return out
