"""Contradictions supersede, never delete.

A fact that fills a single-valued slot of a subject (where they live, their job, their name,
their age, their favourite X) contradicts an older current fact filling the same slot with
another value. The older fact then gets ``valid_to`` (when the newer one became valid) and
``superseded_by``; it stays stored and queryable by time ("where did Alice live in March?"),
and the change is in its history as a ``supersede``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from memstrata.model import Fact, FactFilter, HistoryOp, Scope
from memstrata.ports import RecordStore

_SUBJECT: Final = r"(?P<s>[^,，。.;；]{1,40}?)"
_SLOTS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    (
        "residence",
        re.compile(
            rf"^{_SUBJECT}\s+(?:now\s+)?(?:lives|is living|resides|moved|relocated)\s+(?:in|to)\s+"
            r"(?P<o>.+)$",
            re.IGNORECASE,
        ),
    ),
    (
        "job",
        re.compile(
            rf"^{_SUBJECT}\s+(?:now\s+)?(?:works|is working)\s+(?:as|at|for)\s+(?P<o>.+)$",
            re.IGNORECASE,
        ),
    ),
    ("name", re.compile(rf"^{_SUBJECT}'s name is (?P<o>.+)$", re.IGNORECASE)),
    ("age", re.compile(rf"^{_SUBJECT} is (?P<o>\d{{1,3}}) years old", re.IGNORECASE)),
    (
        "favorite",
        re.compile(
            rf"^{_SUBJECT}'s fav(?:o|ou)rite (?P<k>[\w -]{{1,30}}?) is (?P<o>.+)$", re.IGNORECASE
        ),
    ),
    ("residence", re.compile(rf"^{_SUBJECT}(?:现在)?(?:住在|搬到了?|定居在?)(?P<o>.+)$")),
    ("job", re.compile(rf"^{_SUBJECT}(?:现在)?在(?P<o>.+?)(?:工作|上班)")),
    ("name", re.compile(rf"^{_SUBJECT}(?:的名字)?叫(?P<o>.+)$")),
    ("age", re.compile(rf"^{_SUBJECT}(?:今年)?(?P<o>\d{{1,3}})岁")),
    ("favorite", re.compile(rf"^{_SUBJECT}最喜欢的(?P<k>\S{{1,10}}?)是(?P<o>.+)$")),
)


@dataclass(frozen=True, slots=True)
class Slot:
    subject: str
    key: str
    value: str


def _norm(text: str) -> str:
    return re.sub(r"[\s.,，。!！]+", " ", text).strip().lower()


def slot_of(text: str) -> Slot | None:
    """The single-valued slot a fact's sentence fills, if it is one the rules know."""
    for key, pattern in _SLOTS:
        match = pattern.match(text.strip())
        if match:
            extra = match.groupdict().get("k")
            name = f"{key}:{_norm(extra)}" if extra else key
            return Slot(_norm(match["s"]), name, _norm(match["o"]))
    return None


def supersede_older(store: RecordStore, scope: Scope, fact: Fact, *, now: datetime) -> list[Fact]:
    """Close the current facts of ``fact``'s scope that the new fact contradicts."""
    slot = slot_of(fact.text)
    if slot is None:
        return []
    closed = []
    for old in list(store.iter_facts(scope, FactFilter(current_only=True))):
        if old.id == fact.id or old.scope != fact.scope:
            continue
        other = slot_of(old.text)
        if other is None or (other.subject, other.key) != (slot.subject, slot.key):
            continue
        if other.value == slot.value:
            continue
        ended = max(fact.valid_from, old.valid_from)
        closed.append(
            store.update_fact(
                scope,
                old.evolve(valid_to=ended, superseded_by=fact.id, updated_at=now),
                expected_version=old.version,
                op=HistoryOp.SUPERSEDE.value,
            )
        )
    return closed
