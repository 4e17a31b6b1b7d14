"""The ranking recipe: what text each index sees and how the two scores are fused.

The defaults were tuned on the LoCoMo dev split as a whole (never on single questions) and
checked on MADial in Chinese and English; ``docs/benchmarks.md`` has the figures and
``docs/adr/0002-hybrid-retrieval.md`` the reasons.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class RankingConfig:
    #: turns before / after a turn (same session) added to its lexical document
    lexical_prev: int = 1
    lexical_next: int = 0
    #: turns before / after a turn (same session) added to its dense document
    dense_prev: int = 1
    dense_next: int = 0
    #: BM25 parameters
    k1: float = 1.2
    b: float = 0.75
    #: how scores are put on one scale before fusing: z-score, min-max, or reciprocal rank
    fusion: Literal["zscore", "minmax", "rrf"] = "zscore"
    #: the lexical share of the fused score (the dense share is 1 - this)
    lexical_weight: float = 0.5
    #: the k of reciprocal rank fusion
    rrf_k: int = 60
    #: a session's score: its best turn ("max") or best turn plus a share of the rest ("sum")
    session_score: Literal["max", "sum"] = "max"
    session_rest_weight: float = 0.1
    #: added (in fused units) to the turns of a speaker the query names
    speaker_boost: float = 0.0

    @property
    def context_prev(self) -> int:
        return max(self.lexical_prev, self.dense_prev)

    @property
    def context_next(self) -> int:
        return max(self.lexical_next, self.dense_next)
