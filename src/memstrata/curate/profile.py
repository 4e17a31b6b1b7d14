"""Promotion of style preferences into the L1 profile: only what at least two sessions support.

A style preference (verbosity, tone, code style) is filled from current preference facts that
speak of it, only when facts citing episodes from at least ``min_sessions`` distinct sessions
support it, so one passing remark does not become how the user wants to be answered. The slot
keeps the citations of every supporting fact. (The profile's fields, the slots the facts
state, come from :mod:`memstrata.curate.essentials`.)
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memstrata.model import Category, Episode, Fact, Profile, Slot

_PREFERENCE_KEYS: Final = (
    (
        "verbosity",
        re.compile(
            r"\b(?:short|brief|concise|detailed|long|verbose)\b|简短|简洁|详细|"
            r"太长|长篇",
            re.IGNORECASE,
        ),
    ),
    (
        "code_style",
        re.compile(
            r"\b(?:code|snake_case|camelcase|typing|lint|ruff|mypy|tabs|"
            r"spaces)\b|代码|命名",
            re.IGNORECASE,
        ),
    ),
    (
        "tone",
        re.compile(
            r"\b(?:tone|formal|casual|friendly|polite|humou?r)\b|语气|正式|随意", re.IGNORECASE
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class Promotion:
    section: str  # "fields" or "preferences"
    key: str
    value: str
    sources: tuple[str, ...]
    sessions: int
    facts: tuple[str, ...] = ()  # the supporting facts' ids


def _key_value(fact: Fact) -> tuple[str, str, str] | None:
    if fact.category == Category.PREFERENCE:
        for key, pattern in _PREFERENCE_KEYS:
            if pattern.search(fact.text):
                return "preferences", key, fact.text
    return None


def promotions(
    facts: Sequence[Fact], episodes: Sequence[Episode], *, min_sessions: int = 2
) -> list[Promotion]:
    """Slot values supported by at least ``min_sessions`` distinct sessions."""
    session_of = {e.id: (e.scope.thread, e.session_id) for e in episodes}
    support: dict[tuple[str, str, str], list[Fact]] = defaultdict(list)
    for fact in facts:
        if fact.valid_to is not None:
            continue
        found = _key_value(fact)
        if found is not None:
            section, key, value = found
            wording = value if section == "fields" else ""  # a preference slot: any wording
            support[(section, key, wording)].append(fact)
    out = []
    for (section, key, _), backing in sorted(support.items()):
        sessions = {session_of[s] for f in backing for s in f.sources if s in session_of}
        if len(sessions) < min_sessions:
            continue
        latest = max(backing, key=lambda f: (f.valid_from, f.id))
        chosen = _key_value(latest)
        sources = tuple(dict.fromkeys(s for f in backing for s in f.sources))
        text = chosen[2] if chosen is not None and section == "fields" else latest.text
        out.append(
            Promotion(section, key, text, sources, len(sessions), tuple(f.id for f in backing))
        )
    return out


def apply_promotions(profile: Profile, found: Sequence[Promotion]) -> Profile:
    fields = dict(profile.fields)
    preferences = dict(profile.preferences)
    for p in found:
        target = fields if p.section == "fields" else preferences
        target[p.key] = Slot(p.value, p.sources, 1.0)
    return Profile(fields, preferences, profile.version)
