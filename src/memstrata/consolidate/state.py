"""The consolidation state of a scope (its ``state/consolidation`` document) and the small
reads every mode shares: digests of bullet texts and of the current facts (never a text: a
forgotten text must not survive in the state), the recorded lists and maps read defensively,
the curated documents of a scope."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Final

from memstrata.consolidate.parts import Parts
from memstrata.document.coverage import CONSOLIDATION_STATE_KEY
from memstrata.model import (
    DocumentKind,
    Fact,
    FactFilter,
    JsonValue,
    Scope,
)
from memstrata.ports import RecordStore

STATE_KEY: Final = CONSOLIDATION_STATE_KEY


def digest(text: str) -> str:
    """What the state records of a bullet's text: enough to see a hand edit, not the text (a
    forgotten text must not survive in the state)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def facts_digest(facts: Sequence[Fact]) -> str:
    """A digest of which facts are current and at which version."""
    joined = "\n".join(sorted(f"{f.id}:{f.version}" for f in facts))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


def as_list(value: JsonValue | None) -> list[JsonValue]:
    return list(value) if isinstance(value, list) else []


def pairs(value: JsonValue | None) -> list[tuple[str, str]]:
    """Recorded merges: [[folded, kept], ...]."""
    return [(str(p[0]), str(p[1])) for p in as_list(value) if isinstance(p, list) and len(p) == 2]


def aliases_of(value: JsonValue | None) -> dict[str, str]:
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}


def slots_of(value: JsonValue | None) -> dict[str, JsonValue]:
    return dict(value) if isinstance(value, dict) else {}


def all_facts(
    store: RecordStore, scope: Scope, filters: FactFilter | None = None, after: str | None = None
) -> list[Fact]:
    return list(store.iter_facts(scope, filters, after=after))


def put_state(parts: Parts, scope: Scope, content: dict[str, JsonValue], version: int) -> int:
    """Write the consolidation state (compare-and-swap on ``version``); its new version."""
    return parts.store.put_document(
        scope, DocumentKind.STATE, STATE_KEY, content, expected_version=version
    ).version


def curated_keys(parts: Parts, scope: Scope) -> list[str]:
    return sorted(
        d.key
        for d in parts.store.list_documents(scope)
        if d.scope == scope and d.kind in (DocumentKind.TOPIC, DocumentKind.ESSENTIALS)
    )
