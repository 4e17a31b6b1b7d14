"""The LLM extractor: structured JSON over any OpenAI-compatible chat model.

Episodes are shown in chunks that never split a sentence (:mod:`memstrata.curate.chunking`), as
numbered, escaped JSON lines (:mod:`memstrata.llm.prompting`);
the numbers the model cites are mapped back to episode ids and invented numbers are dropped and
counted. A reply that is not the JSON asked for is retried once, then recorded as a failed step;
an unreachable model (or a spent token budget) is recorded too, and a ``fallback`` extractor
(the rules) extracts the chunks the model could not do. The extractor never raises into the
run.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any, Final

from memstrata.curate.chunking import chunk_episodes
from memstrata.errors import LLMReplyError
from memstrata.llm.metered import ask
from memstrata.llm.prompting import CitationMap, episodes_block, load_prompt
from memstrata.model import Candidate, Category, Episode, Extraction
from memstrata.ports import LLM, Extractor

_MAX_CHARS: Final = 12_000  # characters of episode text per request


def _prompt() -> str:
    return load_prompt("extract")


def _unit(value: Any, default: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return min(1.0, max(0.0, number))


def _candidates(reply: dict[str, Any], citations: CitationMap) -> list[Candidate]:
    facts = reply.get("facts")
    if not isinstance(facts, list):
        raise LLMReplyError("the reply has no 'facts' list")
    out = []
    for item in facts:
        if not isinstance(item, dict) or not isinstance(item.get("text"), str):
            raise LLMReplyError("each fact needs a 'text' string")
        sources = citations.resolve(item.get("cites") or [])
        if not sources or not item["text"].strip():
            continue  # a fact citing nothing that exists is dropped (counted by the map)
        try:
            category = Category(str(item.get("category", "other")).lower())
        except ValueError:
            category = Category.OTHER
        subject = item.get("subject")
        topic = item.get("topic")
        out.append(
            Candidate(
                text=item["text"].strip(),
                category=category,
                confidence=_unit(item.get("confidence"), 0.5),
                importance=_unit(item.get("importance"), 0.5),
                sources=tuple(sources),
                subject=subject if isinstance(subject, str) else None,
                topic=topic if isinstance(topic, str) and topic else None,
            )  # no rule: the model wrote it, so the overclaiming guard reads it
        )
    return out


class LLMExtractor:
    """:class:`memstrata.ports.Extractor` over a chat model."""

    def __init__(
        self, llm: LLM, *, max_chars: int = _MAX_CHARS, fallback: Extractor | None = None
    ) -> None:
        self.llm = llm
        self.max_chars = max_chars
        self.fallback = fallback

    @property
    def name(self) -> str:
        return f"llm:{self.llm.name}"

    def extract(self, episodes: Sequence[Episode]) -> Extraction:
        candidates: list[Candidate] = []
        failures: list[str] = []
        dropped = 0
        system = _prompt()
        position = 0
        for chunk in chunk_episodes(episodes, self.max_chars):
            start, position = position, position + len(chunk)
            citations = CitationMap()
            messages = [
                {"role": "system", "content": system},
                {"role": "user", "content": episodes_block(chunk, citations)},
            ]
            where = f"chunk of parts {start + 1}-{position}"
            found = ask(
                self.llm,
                messages,
                partial(_candidates, citations=citations),
                failures=failures,
                where=where,
            )
            if found is None and self.fallback is not None:
                ruled = self.fallback.extract(chunk)
                found = list(ruled.candidates)
                failures.extend(ruled.failures)
                failures.append(f"{where}: extracted by {self.fallback.name}")
            candidates.extend(found or [])
            dropped += citations.dropped
        return Extraction(tuple(candidates), tuple(failures), dropped)
