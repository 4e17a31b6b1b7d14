"""What every retrieval benchmark shares: a fresh memory, loading conversations, timing.

A benchmark memory lives in a temporary directory; embeddings are cached by content hash in a
file that outlives it (``--embedding-cache``), so a second run does not embed again. The cache
holds vectors only.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter

from memstrata.api import Memory
from memstrata.bench.metrics import percentile
from memstrata.embed import create_embedder
from memstrata.embed.cache import cache_counts, with_cache
from memstrata.importers import Conversation
from memstrata.index.config import RankingConfig
from memstrata.index.query import build_query
from memstrata.index.ranking import Ranker
from memstrata.model import Episode, Granularity, JsonValue, Scope, SearchFilter
from memstrata.ports import Embedder
from memstrata.settings import Settings, default_cache_dir, load_settings


def default_embedding_cache() -> Path:
    return default_cache_dir() / "bench-embeddings.db"


@dataclass(slots=True)
class Timings:
    """Per-query latencies in milliseconds."""

    total: list[float] = field(default_factory=list)
    excluding_embedding: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, JsonValue]:
        if not self.total:
            return {}
        return {
            "search_ms_p50": round(percentile(self.total, 50), 3),
            "search_ms_p95": round(percentile(self.total, 95), 3),
            "search_ms_excl_embedding_p50": round(percentile(self.excluding_embedding, 50), 3),
            "search_ms_excl_embedding_p95": round(percentile(self.excluding_embedding, 95), 3),
        }


@contextmanager
def bench_memory(
    *,
    settings: Settings | None = None,
    embedder: Embedder | None = None,
    embedding_cache: Path | None = None,
    ranking: RankingConfig | None = None,
) -> Iterator[Memory]:
    """A fresh memory in a temporary directory, with the trace off."""
    with tempfile.TemporaryDirectory(prefix="memstrata-bench-") as tmp:
        base = settings or load_settings()
        run_settings = base.model_copy(update={"data_dir": Path(tmp), "trace": False})
        if embedder is None:
            cache = embedding_cache or default_embedding_cache()
            embedder = with_cache(create_embedder(base.embedder), cache)
        memory = Memory.open(settings=run_settings, embedder=embedder, ranking=ranking)
        try:
            yield memory
        finally:
            memory.close()


@dataclass(frozen=True, slots=True)
class Loaded:
    """Conversations stored in a benchmark memory, with how long storing and indexing took."""

    episodes: dict[str, list[Episode]]
    turns: int
    store_s: float
    index_s: float

    @property
    def ingest_turns_per_s(self) -> float:
        return self.turns / self.store_s if self.store_s > 0 else float("inf")

    def stats(self, memory: Memory) -> dict[str, JsonValue]:
        embedder = memory.embedder
        out: dict[str, JsonValue] = {
            "turns": self.turns,
            "ingest_turns_per_s": round(self.ingest_turns_per_s, 1),
            "index_build_s": round(self.index_s, 3),
            "embedder": embedder.name,
        }
        counts = cache_counts(embedder)
        if counts is not None:
            out["embedding_cache"] = dict(counts)
        return out


def load_conversations(
    memory: Memory, conversations: Sequence[Conversation], scope_of: dict[str, Scope]
) -> Loaded:
    """Store each conversation in its own scope, then build every scope's index and embed
    every turn (so searches are timed on a complete index)."""
    episodes: dict[str, list[Episode]] = {}
    started = perf_counter()
    for conv in conversations:
        episodes[conv.key] = memory.remember(conv.turns, scope_of[conv.key], surface="import")
    stored = perf_counter()
    for user in dict.fromkeys(scope_of[conv.key].user for conv in conversations):
        memory.index(user)
    indexed = perf_counter()
    turns = sum(len(v) for v in episodes.values())
    return Loaded(episodes, turns, stored - started, indexed - stored)


def timed_search(
    memory: Memory,
    query: str,
    scope: Scope,
    k: int,
    granularity: str,
    timings: Timings,
    rerank: bool = False,
) -> list[str]:
    """Search end to end (query embedding, and reranking when asked, included), timing it
    and the part after embedding (without reranking)."""
    started = perf_counter()
    hits = memory.search(query, scope, k=k, granularity=granularity, rerank=rerank)
    total = perf_counter() - started
    index = memory.indexes.index(scope.user)
    plan = build_query(query, memory.embedder, index.config)  # vectors cached by now
    started = perf_counter()
    Ranker(index).search(
        plan, scope, k=k, granularity=Granularity(granularity), filters=SearchFilter()
    )
    timings.total.append(total * 1000)
    timings.excluding_embedding.append((perf_counter() - started) * 1000)
    return [h.id for h in hits]
