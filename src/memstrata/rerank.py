"""Reranking search hits with a chat model (optional: search is complete without one).

Hybrid search links words and close meanings; a chat model can also link a dialogue to the
memories it is about by theme (MADial's gold memories: "how should I celebrate full marks?"
calls up an ice cream and a video game afternoon). :func:`llm_reranker` shows the model the
query and the top candidates as numbered JSON data, asks for the numbers worth bringing up, most
useful first, and puts those first. Nothing is ever lost: candidates it leaves out follow in
their hybrid order, numbers it invents are ignored, and on any failure (endpoint down, reply
malformed) the hybrid order stands.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

from memstrata.errors import MemstrataError
from memstrata.llm.prompting import data_messages, load_prompt
from memstrata.model import JsonValue, SearchHit
from memstrata.ports import LLM

log = logging.getLogger(__name__)

#: reorders hits for a query (the same hits, maybe another order)
Reranker = Callable[[str, Sequence[SearchHit]], list[SearchHit]]


def llm_reranker(llm: LLM) -> Reranker:
    prompt = load_prompt("rerank")

    def rerank(query: str, hits: Sequence[SearchHit]) -> list[SearchHit]:
        if len(hits) < 2:
            return list(hits)
        candidates: list[JsonValue] = [{"n": n, "text": h.text} for n, h in enumerate(hits, 1)]
        messages = data_messages(prompt, {"query": query, "candidates": candidates})
        try:
            reply = llm.complete_json(messages)
        except MemstrataError as exc:
            log.warning("reranking failed, keeping the hybrid order: %s", exc)
            return list(hits)
        chosen = _numbers(reply.get("ranking"), len(hits))
        if chosen is None:
            log.warning("reranking reply had no usable ranking, keeping the hybrid order")
            return list(hits)
        picked = [
            replace(hits[n - 1], components={**hits[n - 1].components, "llm_rank": float(rank)})
            for rank, n in enumerate(chosen, 1)
        ]
        taken = set(chosen)
        rest = [h for i, h in enumerate(hits, 1) if i not in taken]
        return picked + rest

    return rerank


def _numbers(raw: object, count: int) -> list[int] | None:
    """The valid candidate numbers of a reply, first mention kept; None: not a list at all."""
    if not isinstance(raw, list):
        return None
    out: list[int] = []
    for item in raw:
        if isinstance(item, bool) or not isinstance(item, int | str):
            continue
        text = str(item).strip().strip("[]")
        if text.isdigit() and 1 <= int(text) <= count and int(text) not in out:
            out.append(int(text))
    return out
