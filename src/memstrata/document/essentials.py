"""Which facts the L1 essentials document speaks for.

Consolidation offers the essentials document every current profile and preference fact and
every fact of importance :data:`ESSENTIAL_IMPORTANCE` or more, and records in the scope's
``state/consolidation`` document the last fact id it has read. From then on the essentials
document, as a person may have edited it, is what L1 says about those facts: a bullet edited
or deleted by hand must not come back from the fact it was made from. Serving (``wake_up``)
and consolidation share these rules from here.
"""

from __future__ import annotations

from typing import Final

from memstrata.model import Category, DocumentKind, Fact, Scope
from memstrata.ports import RecordStore

ESSENTIAL_IMPORTANCE: Final = 0.8
#: the key of the state document in which consolidation records the last fact id it read
CONSOLIDATION_STATE_KEY: Final = "consolidation"


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
