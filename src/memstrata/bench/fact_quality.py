"""Shares of flawed facts (``curate.quality`` detectors), with a few examples of each, for the
extracted facts and for the bullets ``wake_up`` serves after an offline extract + consolidate."""

from __future__ import annotations

import html
import random
from collections.abc import Sequence
from dataclasses import asdict, fields
from typing import Final

from memstrata.api import Memory
from memstrata.curate.quality import Flaws, assess
from memstrata.importers import Conversation
from memstrata.model import JsonValue, Scope
from memstrata.ports import Extractor

FLAWS: Final = tuple(f.name for f in fields(Flaws))
EXAMPLES: Final = 3


def quality_shares(
    facts: Sequence[tuple[str, str | None]], *, seed: int = 7
) -> dict[str, JsonValue]:
    """For ``(text, subject)`` pairs: how many, the share with each flaw and with any, and up to
    three examples of each (a seeded sample)."""
    hits: dict[str, list[str]] = {name: [] for name in (*FLAWS, "any")}
    for text, subject in facts:
        flaws = assess(text, subject)
        for name, flagged in asdict(flaws).items():
            if flagged:
                hits[name].append(text)
        if flaws.any:
            hits["any"].append(text)
    total = len(facts)
    rng = random.Random(seed)
    examples: dict[str, JsonValue] = {
        name: list(rng.sample(found, min(EXAMPLES, len(found)))) for name, found in hits.items()
    }
    examples.pop("any")
    shares: dict[str, JsonValue] = {
        name: round(len(found) / total, 4) if total else 0.0 for name, found in hits.items()
    }
    return {"count": total, "shares": shares, "examples": examples}


def served_bullets(text: str) -> list[str]:
    """The bullets of a ``<memory>`` block, unescaped."""
    return [html.unescape(line[2:]) for line in text.splitlines() if line.startswith("- ")]


def subject_of(text: str, speakers: set[str]) -> str | None:
    """The speaker a bullet names first: who it is most likely about."""
    found = [(text.find(name), name) for name in speakers if name in text]
    return min(found)[1] if found else None


def wake_up_quality(
    memory: Memory,
    extractor: Extractor,
    conversations: Sequence[Conversation],
    *,
    budget: int = 800,
) -> dict[str, JsonValue]:
    """Store each conversation in a scope of its own, extract, consolidate, and judge the
    bullets ``wake_up`` serves within ``budget`` tokens."""
    bullets: list[tuple[str, str | None]] = []
    for conv in conversations:
        scope = Scope(conv.key)
        memory.remember(conv.turns, scope, surface="import")
        memory.extract(scope, extractor=extractor)
        memory.consolidate(scope)
        served = memory.wake_up(scope, budget=budget)
        speakers = {t.speaker for t in conv.turns if t.speaker}
        bullets.extend((b, subject_of(b, speakers)) for b in served_bullets(served.text))
    return {"budget": budget, **quality_shares(bullets)}
