"""Repeats merge into one fact whose support raises its importance.

A fact extraction proposes that says again what a current fact of the scope already says (the
same words once case, punctuation and a few filler words are set aside, or nearly the same
words: term-set Jaccard at least :data:`REPEAT_THRESHOLD`) is not stored a second time: the
current fact gains its citations instead. Each session that newly supports a fact halves the
distance between its importance and 1 (0.5 -> 0.75 -> 0.875), so what a person says across
sessions ranks above a passing remark, in L1 and in every ranking by importance.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from memstrata.model import Fact
from memstrata.util.scripts import HAN

REPEAT_THRESHOLD: Final = 0.8
_TERM: Final = re.compile(rf"[a-z0-9]+(?:'[a-z]+)?|[{HAN}]")
_FILLER: Final = frozenset(
    "really just so very also still actually totally the a an 'cause 了 的 很 也 都".split()  # noqa: SIM905
)


def terms(text: str) -> frozenset[str]:
    """The content terms of a fact's text (lowercased words; Chinese characters one by one)."""
    return frozenset(t for t in _TERM.findall(text.casefold()) if t not in _FILLER)


def raised(importance: float, new_sessions: int) -> float:
    """``importance`` after ``new_sessions`` more sessions support the fact."""
    for _ in range(max(0, new_sessions)):
        importance += (1.0 - importance) / 2
    return round(min(1.0, importance), 4)


class RepeatIndex:
    """The current facts of a scope by their terms, to find what a new fact repeats."""

    def __init__(self, facts: Iterable[Fact]) -> None:
        self._facts: dict[str, Fact] = {}
        self._terms: dict[str, frozenset[str]] = {}
        self._by_term: dict[str, set[str]] = {}
        for fact in facts:
            self.put(fact)

    def put(self, fact: Fact) -> None:
        self._facts[fact.id] = fact
        found = terms(fact.text)
        self._terms[fact.id] = found
        for term in found:
            self._by_term.setdefault(term, set()).add(fact.id)

    def current(self, fact_id: str) -> bool:
        """Whether a fact is held as current (not dropped as superseded meanwhile)."""
        return fact_id in self._facts

    def drop(self, fact_id: str) -> None:
        """Forget a fact that is no longer current (superseded meanwhile)."""
        self._facts.pop(fact_id, None)
        for term in self._terms.pop(fact_id, frozenset()):
            held = self._by_term.get(term)
            if held is not None:
                held.discard(fact_id)

    def repeated(self, text: str, *, category: str | None = None) -> Fact | None:
        """The oldest current fact ``text`` repeats, if any (of the same category when given)."""
        wanted = terms(text)
        shared: dict[str, int] = {}
        for term in wanted:
            for fact_id in self._by_term.get(term, ()):
                shared[fact_id] = shared.get(fact_id, 0) + 1
        for fact_id in sorted(shared):
            fact = self._facts[fact_id]
            if category is not None and fact.category != category:
                continue
            both = shared[fact_id]
            if both / (len(wanted) + len(self._terms[fact_id]) - both) >= REPEAT_THRESHOLD:
                return fact
        return None
