"""Which facts a curated document speaks for.

Consolidation files every new current fact in its topic's document (:func:`topic_key`) and
chooses, within a token budget, the facts the essentials document states; it records in the
scope's ``state/consolidation`` document the last fact id it has read and which facts the
essentials bullets it wrote stand for (``essentials``: bullet id -> a digest of its text and
its fact ids, and ``withheld``: the facts of bullets a person edited or deleted), and likewise
for the profile's slots (``profile``: ``slots``, ``withheld`` and ``refused``, the values a
person took out of a slot). From then on the document, as
a person may have edited it, is what memory says about those facts: a bullet edited or deleted
by hand must not come back from the facts it was made from. A state written before that
record existed means the older rule: every profile and preference fact and every fact of
importance :data:`ESSENTIAL_IMPORTANCE` or more was offered to the essentials. Serving
(``wake_up``, ``recall``, ``context``) and consolidation share these rules from here.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from memstrata.document.format import Bullet
from memstrata.document.format import Document as CuratedDocument
from memstrata.document.service import (
    ESSENTIALS_KEY,
    IDENTITY_KEY,
    document_from_json,
    topic_slug,
)
from memstrata.errors import InvalidInputError
from memstrata.model import Category, Document, DocumentKind, Fact, Scope
from memstrata.ports import RecordStore

log = logging.getLogger(__name__)

ESSENTIAL_IMPORTANCE: Final = 0.8
#: the key of the state document in which consolidation records the last fact id it read
CONSOLIDATION_STATE_KEY: Final = "consolidation"
#: the document of a fact with no topic (or a reserved one): one per category
DEFAULT_TOPICS: Final = {
    Category.PROFILE: "profile",
    Category.PREFERENCE: "preferences",
    Category.PERSONAL: "personal",
    Category.EXPERTISE: "work",
    Category.DECISION: "decisions",
    Category.PLAN: "plans",
    Category.EVENT: "events",
    Category.RELATIONSHIP: "people",
    Category.HEALTH: "health",
    Category.OTHER: "notes",
}


def topic_key(fact: Fact) -> str:
    """The topic document consolidation files a fact in: its topic as a slug, or one per
    category when it has none (or its topic names the essentials or the identity)."""
    if fact.topic:
        slug = topic_slug(fact.topic)
        if slug and slug not in (ESSENTIALS_KEY, IDENTITY_KEY):
            return slug
    return DEFAULT_TOPICS[fact.category]


@dataclass(frozen=True, slots=True)
class Coverage:
    """What consolidation has read (``through``, a fact id) and, when it recorded them, the
    facts the essentials document speaks for (``essentials``; None: the older rule)."""

    through: str | None = None
    essentials: frozenset[str] | None = None
    record: Mapping[str, Any] = field(default_factory=dict)
    profile: frozenset[str] = frozenset()  # facts behind the profile's slots, or withheld by it

    def read(self, fact: Fact) -> bool:
        """Whether consolidation has read ``fact`` (it was filed before the last run)."""
        return self.through is not None and fact.id <= self.through

    def in_essentials(self, fact: Fact) -> bool:
        """Whether the essentials document, as it stands now, speaks for ``fact``."""
        if self.through is None or fact.id > self.through:
            return False
        if self.essentials is None:
            return belongs_in_essentials(fact)
        return fact.id in self.essentials

    def in_profile(self, fact: Fact) -> bool:
        """Whether the profile, as it stands now, speaks for ``fact`` (a slot consolidation
        wrote from it, or one a person deleted or edited): wake_up does not serve it again."""
        return self.through is not None and fact.id <= self.through and fact.id in self.profile


def coverage(store: RecordStore, scope: Scope) -> Coverage:
    """The scope's :class:`Coverage`, from its consolidation state."""
    state = store.get_document(scope, DocumentKind.STATE, CONSOLIDATION_STATE_KEY)
    if state is None:
        return Coverage()
    last = state.content.get("last_fact_id")
    record = state.content.get("essentials")
    kept = state.content.get("profile")
    profile = frozenset(_facts_of(kept) if isinstance(kept, Mapping) else ())
    if not isinstance(record, Mapping):
        return Coverage(str(last) if last else None, profile=profile)
    return Coverage(str(last) if last else None, frozenset(_facts_of(record)), record, profile)


def _facts_of(record: Mapping[str, Any]) -> set[str]:
    """The facts a record of L1 items stands for: its items' (``bullets`` or ``slots``) and
    the ``withheld`` ones."""
    items = record.get("bullets", record.get("slots", {}))
    facts = {str(f) for entry in items.values() for f in entry.get("facts", ())}
    return facts | {str(f) for f in record.get("withheld", ())}


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


def filed_in_topic(fact: Fact, key: str, through: str | None) -> bool:
    """Whether consolidation, having read up to fact id ``through``, has filed ``fact`` in
    the topic document ``key`` (the one :func:`topic_key` names)."""
    return through is not None and fact.id <= through and topic_key(fact) == key


def spoken_for(
    store: RecordStore, scope: Scope, facts: Sequence[Fact]
) -> dict[str, list[tuple[str, Bullet]]]:
    """For each of ``facts`` a curated document of ``scope`` speaks for (the essentials it
    was offered to, the topic document it was filed in): ``(document key, bullet)`` for the
    bullets of those documents, as they stand now, that cite one of the fact's sources; an
    empty list when a person deleted them. Facts no document speaks for are absent."""
    covered = coverage(store, scope)
    through = covered.through
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
        keys = [ESSENTIALS_KEY] if covered.in_essentials(fact) else []
        if filed_in_topic(fact, topic_key(fact), through):
            keys.append(topic_key(fact))
        sources = set(fact.sources)
        for key in keys:
            kept = bullets(key)
            if kept is None:
                continue  # no such document (never written, or deleted): the fact stands
            found = out.setdefault(fact.id, [])
            found += [(key, b) for b in kept if any(c.episode_id in sources for c in b.citations)]
    return out
