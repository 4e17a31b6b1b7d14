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
    #: turns before a turn (same session) added to its lexical document
    lexical_prev: int = 2
    #: one dense vector per entry: the turn with this many previous turns of its session
    dense_views: tuple[int, ...] = (0, 1)
    #: BM25 parameters
    k1: float = 1.2
    b: float = 0.5
    #: how scores are put on one scale before fusing: z-score, min-max, or reciprocal rank
    fusion: Literal["zscore", "minmax", "rrf"] = "zscore"
    #: the lexical share of the fused score (the dense share is 1 - this)
    lexical_weight: float = 0.4
    #: the k of reciprocal rank fusion
    rrf_k: int = 60
    #: a session's score is the mean of the fused scores of its best this-many turns
    session_top: int = 3
    #: added (in fused units) to the turns of a speaker the query names
    speaker_boost: float = 0.2
    #: added (in fused units) to entries dated within a date the query names
    date_bonus: float = 2.0
    #: days after a named date that still count as "then" (people talk about it afterwards)
    date_slack_days: float = 7.0
    #: weight of dialogue lines spoken by the assistant when a query is a dialogue
    assistant_weight: float = 0.5
    #: in a dialogue query, the share of the dense score from its best single line
    line_weight: float = 0.5
    #: from this many entries on, an approximate graph proposes dense candidates (needs usearch)
    ann_threshold: int | None = 50_000
    #: how many candidates each dense view proposes when the graph is in use
    ann_candidates: int = 300

    @property
    def context_prev(self) -> int:
        return max(self.lexical_prev, *self.dense_views)
