"""mem0 export: the memories ``Memory.get_all`` (or the platform's export) returns.

Accepted shapes: ``{"results": [...]}`` (mem0 1.x ``get_all``), ``{"memories": [...]}`` or a
bare list. Each memory has ``id`` and ``memory`` (its text), and may have ``user_id``,
``metadata``, ``categories``, ``created_at`` and ``updated_at`` (ISO 8601). Each becomes a fact
keyed ``mem0:<id>:<hash of its text>`` (an edited memory is a new fact that supersedes the
fact its earlier text became), its category the first
of ``categories`` with a counterpart in :data:`CATEGORIES` (else ``other``), its confidence
``metadata.confidence`` when given, else :data:`DEFAULT_CONFIDENCE`. The whole record,
metadata included, is kept in the import episode the fact cites.

An export mixing several ``user_id`` values is refused: it would put other people's memories
into one user.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from memstrata.errors import ImportFormatError
from memstrata.importers.base import (
    ImportBatch,
    ImportedFact,
    Skipped,
    digest,
    iso_time,
    read_json,
    require,
)
from memstrata.model import Category

#: mem0's category names (its platform's defaults and common custom ones) -> memstrata
CATEGORIES: Final[dict[str, Category]] = {
    "personal_details": Category.PERSONAL,
    "personal": Category.PERSONAL,
    "health": Category.HEALTH,
    "family": Category.RELATIONSHIP,
    "relationships": Category.RELATIONSHIP,
    "professional_details": Category.PROFILE,
    "work": Category.PROFILE,
    "technology": Category.EXPERTISE,
    "skills": Category.EXPERTISE,
    "user_preferences": Category.PREFERENCE,
    "preferences": Category.PREFERENCE,
    "food": Category.PREFERENCE,
    "music": Category.PREFERENCE,
    "sports": Category.PREFERENCE,
    "hobbies": Category.PREFERENCE,
    "entertainment": Category.PREFERENCE,
    "shopping": Category.PREFERENCE,
    "travel": Category.EVENT,
    "milestones": Category.EVENT,
    "goals": Category.PLAN,
    "decisions": Category.DECISION,
    "misc": Category.OTHER,
    "news": Category.OTHER,
}
#: the confidence of a memory whose metadata gives none (mem0 keeps no confidence)
DEFAULT_CONFIDENCE: Final = 0.9


def _category(raw: dict[str, Any], *, source: str, where: str) -> tuple[Category, str | None]:
    names = raw.get("categories") or []
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise ImportFormatError(
            "field 'categories' should be a list of names", source=source, where=where
        )
    # a stated preference says more than the subject it is about ("travel", "food")
    ranked = sorted(names, key=lambda n: n.lower() not in ("user_preferences", "preferences"))
    for name in ranked:
        if name.lower() in CATEGORIES:
            category = CATEGORIES[name.lower()]
            return category, None if name == category.value else ",".join(names)
    return Category.OTHER, ",".join(names) or None


def _fact(raw: Any, index: int, source: str, skipped: list[Skipped]) -> ImportedFact | None:
    where = f"memory {index}"
    memory_id = require(raw, "id", str, source=source, where=where)
    where = f"memory {memory_id}"
    text = require(raw, "memory", str, source=source, where=where)
    if not text.strip():
        skipped.append(Skipped(where, "empty memory"))
        return None
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise ImportFormatError("field 'metadata' should be an object", source=source, where=where)
    confidence = metadata.get("confidence", DEFAULT_CONFIDENCE)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise ImportFormatError(
            "metadata.confidence should be a number", source=source, where=where
        )
    if not 0.0 <= confidence <= 1.0:
        raise ImportFormatError(
            f"confidence {confidence} is outside 0..1", source=source, where=where
        )
    category, original = _category(raw, source=source, where=where)
    when = iso_time(raw.get("created_at"), source=source, where=where)
    iso_time(raw.get("updated_at"), source=source, where=where)  # checked, kept in the record
    return ImportedFact(
        key=f"mem0:{memory_id}:{digest(text)}",
        text=text.strip(),
        category=category,
        confidence=float(confidence),
        time=when,
        record=json.loads(json.dumps(raw)),
        category_from=original,
        lineage=f"mem0:{memory_id}",
    )


def load_mem0(path: Path) -> ImportBatch:
    source = str(path)
    data = read_json(path)
    if isinstance(data, dict):
        found = [k for k in ("results", "memories") if isinstance(data.get(k), list)]
        if not found:
            raise ImportFormatError(
                "expected a list of memories, or an object with 'results' or 'memories'",
                source=source,
            )
        data = data[found[0]]
    if not isinstance(data, list):
        raise ImportFormatError("expected a list of mem0 memories", source=source)
    users = sorted({str(r["user_id"]) for r in data if isinstance(r, dict) and r.get("user_id")})
    if len(users) > 1:
        raise ImportFormatError(
            f"the export holds memories of {len(users)} users ({', '.join(users[:5])}); "
            "export one user's memories (get_all(user_id=...)) and import them into that user",
            source=source,
        )
    skipped: list[Skipped] = []
    facts = [f for i, r in enumerate(data) if (f := _fact(r, i, source, skipped))]
    return ImportBatch(
        source=source,
        format="mem0",
        conversations=(),
        facts=tuple(facts),
        skipped=tuple(skipped),
        keyed=True,
    )
