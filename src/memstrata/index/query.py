"""What a query is made of: its text, its vector and, for a dialogue, its lines.

An agent often searches with the conversation so far (``Name: utterance`` lines) rather than a
question. Such a query is split into lines: lexically each term weighs the sum of the weights of
the lines it occurs in (assistant lines weigh less), and densely the whole dialogue and each
line are scored and the best line's scores blended in. A single line is a plain query.
The two kinds are embedded as kinds ``dialogue`` and ``question``: a blend of models weighs its
models per kind (:mod:`memstrata.embed.blend`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import embed_queries
from memstrata.index.config import RankingConfig
from memstrata.index.tokenize import tokenize
from memstrata.ports import Embedder

_LINE_RE: Final = re.compile(r"^\s*([^:：\n]{1,30})[:：]\s*(\S.*)$")
ASSISTANT_NAMES: Final = frozenset({"assistant", "ai", "bot", "助手", "助理"})


@dataclass(frozen=True, slots=True)
class QueryLine:
    speaker: str | None
    text: str
    weight: float


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    vector: NDArray[np.float32]
    lines: tuple[QueryLine, ...] = ()
    line_vectors: tuple[NDArray[np.float32], ...] = ()

    @property
    def is_dialogue(self) -> bool:
        return len(self.lines) > 1

    def term_weights(self) -> dict[str, float]:
        """Lexical query terms and their weights."""
        if not self.is_dialogue:
            return dict.fromkeys(tokenize(self.text), 1.0)
        weights: dict[str, float] = {}
        for line in self.lines:
            for term in set(tokenize(line.text)):
                weights[term] = weights.get(term, 0.0) + line.weight
        return weights


def split_dialogue(text: str, config: RankingConfig) -> tuple[QueryLine, ...]:
    """The ``Name: utterance`` lines of a dialogue query (empty for a plain query)."""
    raw = [line for line in text.splitlines() if line.strip()]
    if len(raw) < 2:
        return ()
    lines = []
    for line in raw:
        match = _LINE_RE.match(line)
        speaker = match.group(1).strip() if match else None
        body = match.group(2).strip() if match else line.strip()
        weight = config.assistant_weight if (speaker or "").lower() in ASSISTANT_NAMES else 1.0
        lines.append(QueryLine(speaker, body, weight))
    return tuple(lines)


def build_query(text: str, embedder: Embedder, config: RankingConfig) -> Query:
    """The query for ``text``: a dialogue's whole text and its lines are embedded in one call,
    as kind ``dialogue``; anything else as one ``question``."""
    lines = split_dialogue(text, config)
    if not lines:
        return Query(text, embed_queries(embedder, [text], "question")[0])
    vectors = embed_queries(embedder, [text, *(line.text for line in lines)], "dialogue")
    return Query(text, vectors[0], lines, tuple(vectors[1:]))
