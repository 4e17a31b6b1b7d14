"""DeerFlow ``memory.json``: a user's context, history summaries and facts.

DeerFlow keeps one JSON document per user (and agent)::

    {"version": "1.0", "lastUpdated": "...",
     "user": {"workContext": {"summary", "updatedAt"}, "personalContext": ..., "topOfMind": ...},
     "history": {"recentMonths": ..., "earlierContext": ..., "longTermBackground": ...},
     "facts": [{"id", "content", "category", "confidence", "createdAt", "source"}]}

Each non-empty summary becomes a bullet of the topic document ``deerflow`` (section "Work
context", "Recent months", ...), keyed by its section and text, so an updated summary is a new
version of that bullet. Each fact becomes a memstrata fact keyed ``deerflow:fact:<id>``, its
category mapped by :data:`CATEGORIES` (an unknown one to ``other``; the original is recorded)
and its confidence kept. Nothing here is a verbatim turn, so the facade captures each record as
an import episode holding the original JSON, and the fact or bullet cites that episode.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Final

from memstrata.errors import ImportFormatError
from memstrata.importers.base import (
    ImportBatch,
    ImportedFact,
    ImportedNote,
    Skipped,
    digest,
    iso_time,
    read_json,
    require,
)
from memstrata.model import Category, JsonValue

#: DeerFlow's fact categories and the closest memstrata category
CATEGORIES: Final[dict[str, Category]] = {
    "preference": Category.PREFERENCE,
    "behavior": Category.PREFERENCE,
    "knowledge": Category.EXPERTISE,
    "context": Category.PROFILE,
    "goal": Category.PLAN,
    "correction": Category.OTHER,
}
DOC_KEY: Final = "deerflow"
DOC_TITLE: Final = "DeerFlow memory"
_SECTIONS: Final = (
    ("user", "workContext"),
    ("user", "personalContext"),
    ("user", "topOfMind"),
    ("history", "recentMonths"),
    ("history", "earlierContext"),
    ("history", "longTermBackground"),
)


def heading(name: str) -> str:
    """``topOfMind`` -> ``Top of mind``."""
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", name).lower()
    return words[:1].upper() + words[1:]


def _section_names(group: dict[str, Any]) -> list[str]:
    """The known sections first, in DeerFlow's order, then any others the file has."""
    return list(dict.fromkeys([*(n for _, n in _SECTIONS), *group]))


def _notes(data: dict[str, Any], source: str, skipped: list[Skipped]) -> list[ImportedNote]:
    notes: list[ImportedNote] = []
    for group_name in ("user", "history"):
        group = data.get(group_name, {})
        if not isinstance(group, dict):
            raise ImportFormatError(f"field {group_name!r} should be an object", source=source)
        for name in _section_names(group):
            if name not in group:
                continue
            where = f"{group_name}.{name}"
            section = group[name]
            summary = require(section, "summary", str, source=source, where=where)
            if not summary.strip():
                skipped.append(Skipped(where, "empty summary"))
                continue
            record: dict[str, JsonValue] = {"section": where, **section}
            notes.append(
                ImportedNote(
                    key=f"deerflow:{where}:{digest(summary)}",
                    doc=DOC_KEY,
                    title=DOC_TITLE,
                    section=heading(name),
                    text=summary.strip(),
                    time=iso_time(section.get("updatedAt"), source=source, where=where),
                    record=record,
                    bullet=f"deerflow:{where}",
                )
            )
    return notes


def _fact(raw: Any, index: int, source: str, skipped: list[Skipped]) -> ImportedFact | None:
    where = f"facts[{index}]"
    fact_id = require(raw, "id", str, source=source, where=where)
    where = f"fact {fact_id}"
    content = require(raw, "content", str, source=source, where=where)
    if not content.strip():
        skipped.append(Skipped(where, "empty fact"))
        return None
    category_name = raw.get("category", "")
    if not isinstance(category_name, str):
        raise ImportFormatError("field 'category' should be text", source=source, where=where)
    confidence = raw.get("confidence", 1.0)
    if isinstance(confidence, bool) or not isinstance(confidence, int | float):
        raise ImportFormatError("field 'confidence' should be a number", source=source, where=where)
    if not 0.0 <= confidence <= 1.0:
        raise ImportFormatError(
            f"confidence {confidence} is outside 0..1", source=source, where=where
        )
    category = CATEGORIES.get(category_name.lower(), Category.OTHER)
    record = json.loads(json.dumps(raw))
    return ImportedFact(
        key=f"deerflow:fact:{fact_id}",
        text=content.strip(),
        category=category,
        confidence=float(confidence),
        time=iso_time(raw.get("createdAt"), source=source, where=where),
        record=record,
        category_from=category_name if category_name != category.value else None,
    )


def load_deerflow(path: Path) -> ImportBatch:
    source = str(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise ImportFormatError("expected DeerFlow's memory.json object", source=source)
    if not {"user", "history", "facts"} & set(data):
        raise ImportFormatError(
            "expected DeerFlow's memory.json with 'user', 'history' or 'facts'", source=source
        )
    skipped: list[Skipped] = []
    notes = _notes(data, source, skipped)
    raw_facts = data.get("facts", [])
    if not isinstance(raw_facts, list):
        raise ImportFormatError("field 'facts' should be a list", source=source)
    facts = [f for i, r in enumerate(raw_facts) if (f := _fact(r, i, source, skipped))]
    return ImportBatch(
        source=source,
        format="deerflow",
        conversations=(),
        facts=tuple(facts),
        notes=tuple(notes),
        skipped=tuple(skipped),
        keyed=True,
    )
