"""``memstrata bench scale``: how search latency, index memory and build time grow with a
scope's size, up to a million turns.

Synthetic bilingual turns (English, Chinese and mixed, from a fixed vocabulary and a seeded
generator) fill one user's index at each size, generated batch by batch so the turns
themselves need not all be held. Document vectors come from the hashing embedder, shaped like
the configured model's (for a blend, one block per model), so that a million turns index in
minutes; queries are embedded by the configured model, each timed alone, so the latency
"including query embedding" is the real one, query by query. A blend's question queries use
only the models weighted for questions; ``all_models`` times the same queries embedded as
dialogues, every model's block scored.

Index memory is the growth of the process's resident memory while the index is built, or the
size of its numeric arrays (``index_arrays_mb``) when that is more (memory an earlier size freed
is reused without growing); the process's peak is reported too. Sizes at or
past the approximate threshold are measured exact first, then with the HNSW graphs built over
the same index (their build time is ``graph_build_s``).
"""

from __future__ import annotations

import gc
import random
import statistics
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from time import perf_counter, thread_time
from typing import Final

from memstrata.bench.metrics import peak_rss_mb, percentile, rss_mb
from memstrata.embed.base import embed_queries
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.fake import HashingEmbedder
from memstrata.ids import new_id
from memstrata.index.ann import usearch_available
from memstrata.index.config import RankingConfig
from memstrata.index.query import Query
from memstrata.index.ranking import Ranker
from memstrata.index.scope_index import UserIndex
from memstrata.model import Episode, Granularity, JsonValue, Role, Scope, SearchFilter
from memstrata.ports import Embedder

#: turns added to the index per call while it is built
BATCH: Final = 5000

_EN_TEXT = (
    "hiking trip mountain dinner family project deadline meeting python database migration "
    "piano lesson daughter birthday coffee tea running marathon budget flight hotel tokyo "
    "paris garden tomato recipe soup doctor appointment dentist movie concert guitar book "
    "novel painting museum bike repair laptop phone camera dog cat puppy school exam "
)
_EN = tuple(_EN_TEXT.split())
_ZH = list(
    "我们周末去爬山吃饭家人项目会议数据库迁移钢琴课女儿生日咖啡茶跑步马拉松预算航班酒店花园菜谱汤医生预约电影音乐会吉他小说画博物馆自行车修理电脑手机相机狗猫学校考试"
)

#: bilingual queries over the synthetic turns (``bench scale`` and ``bench serve`` ask them)
QUERIES: Final = (
    "when is the piano lesson",
    "女儿的生日是哪天",
    "database migration deadline",
    "周末去哪里爬山了",
    "what did we cook from the recipe",
    "预算 budget for the flight",
    "dentist appointment time",
    "马拉松训练怎么样",
    "which novel did I read",
    "修理自行车 bike repair",
    "我们上次去哪个博物馆 museum",
    "coffee or tea in the morning",
)


def iter_synthetic_turns(n: int, *, seed: int = 7, user: str = "scale") -> Iterator[Episode]:
    """``n`` synthetic turns, one at a time (the same turns for the same seed)."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    scope = Scope(user)
    for i in range(n):
        style = i % 3
        words = rng.sample(_EN, 8)
        if style == 0:
            text = " ".join(words)
        elif style == 1:
            text = "".join(rng.sample(_ZH, 14))
        else:
            text = " ".join(words[:4]) + " " + "".join(rng.sample(_ZH, 8))
        yield Episode(
            id=new_id("ep"),
            scope=scope,
            surface="chat",
            session_id=f"s{i // 20}",
            speaker="user" if i % 2 == 0 else "assistant",
            role=Role.USER if i % 2 == 0 else Role.ASSISTANT,
            text=text,
            time=start + timedelta(minutes=i),
            metadata={},
        )


def synthetic_turns(n: int, *, seed: int = 7, user: str = "scale") -> list[Episode]:
    return list(iter_synthetic_turns(n, seed=seed, user=user))


@dataclass(frozen=True, slots=True)
class _Queries:
    """The timed queries: embedded as questions, and as dialogues for a blend (every model),
    with each one's embedding time."""

    plans: list[Query]
    all_models: list[Query]
    embed_ms: list[float]


def _build(size: int, embedder: Embedder, config: RankingConfig) -> tuple[UserIndex, float, float]:
    """An index of ``size`` synthetic turns, its build time and the memory it added (MiB)."""
    gc.collect()
    before = rss_mb()
    started = perf_counter()
    index = UserIndex("scale", embedder, config)
    batch: list[Episode] = []
    for episode in iter_synthetic_turns(size):
        batch.append(episode)
        if len(batch) == BATCH:
            index.add_episodes(batch)
            batch = []
    index.add_episodes(batch)
    build_s = perf_counter() - started
    del batch
    gc.collect()
    return index, build_s, rss_mb() - before


def _timed(index: UserIndex, plans: list[Query]) -> tuple[list[float], list[float]]:
    """Each search's wall time and the CPU time of its thread, in milliseconds (the CPU time
    is what the search costs whatever else the machine runs)."""
    wall, cpu = [], []
    for query in plans:
        started, started_cpu = perf_counter(), thread_time()
        Ranker(index).search(
            query, Scope("scale"), k=10, granularity=Granularity.TURN, filters=SearchFilter()
        )
        cpu.append((thread_time() - started_cpu) * 1000)
        wall.append((perf_counter() - started) * 1000)
    return wall, cpu


def _latency(index: UserIndex, queries: _Queries) -> dict[str, JsonValue]:
    """Search percentiles without and with each query's own embedding time, and the CPU time
    of the search alone."""
    excl, cpu = _timed(index, queries.plans)
    incl = [s + e for s, e in zip(excl, queries.embed_ms, strict=True)]
    out: dict[str, JsonValue] = {}
    for name, values in (
        ("search_ms_excl_embedding", excl),
        ("search_ms", incl),
        ("search_cpu_ms_excl_embedding", cpu),
    ):
        for q in (50, 95, 99):
            out[f"{name}_p{q}"] = round(percentile(values, q), 3)
    if queries.all_models:
        out["search_ms_excl_embedding_p50_all_models"] = round(
            statistics.median(_timed(index, queries.all_models)[0]), 3
        )
    return out


def _memory(index: UserIndex) -> tuple[float, float]:
    """The index's numeric arrays and its graphs, in MiB."""
    graphs = sum(view.nbytes - view.matrix_nbytes for view in index.views)
    return index.nbytes / 2**20, graphs / 2**20


def _measure(
    size: int, embedder: Embedder, base: RankingConfig, queries: _Queries
) -> dict[str, JsonValue]:
    """One size: exact, then approximate over the same index when the size calls for it."""
    exact_config = replace(base, ann_threshold=None)
    index, build_s, grown_mb = _build(size, embedder, exact_config)
    arrays_mb, _ = _memory(index)
    row: dict[str, JsonValue] = {
        "exact": {
            **_latency(index, queries),
            "index_build_s": round(build_s, 2),
            "index_mb": round(max(grown_mb, arrays_mb), 1),
            "index_arrays_mb": round(arrays_mb, 1),
        }
    }
    threshold = base.ann_threshold
    if threshold is not None and size >= threshold and usearch_available():
        started = perf_counter()
        for view in index.views:
            view.use_graph_from(threshold)
        graph_s = perf_counter() - started
        index.config = base
        _, graph_mb = _memory(index)
        row["approximate"] = {
            **_latency(index, queries),
            "index_build_s": round(build_s + graph_s, 2),
            "graph_build_s": round(graph_s, 2),
            "index_mb": round(max(grown_mb, arrays_mb) + graph_mb, 1),
            "index_arrays_mb": round(arrays_mb, 1),
            "graph_mb": round(graph_mb, 1),
        }
    del index
    gc.collect()
    return row


def _queries(query_embedder: Embedder, count: int) -> _Queries:
    texts = [
        QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" {i}") for i in range(count)
    ]
    query_embedder.embed_query("warm up")  # a model loads on first use: not timed
    plans, embed_ms = [], []
    for text in texts:  # each embedded alone and timed: the latency a caller sees
        started = perf_counter()
        vector = query_embedder.embed_query(text)
        embed_ms.append((perf_counter() - started) * 1000)
        plans.append(Query(text, vector))
    all_models: list[Query] = []
    if isinstance(query_embedder, BlendEmbedder):
        dialogue = embed_queries(query_embedder, texts, "dialogue")
        all_models = [Query(q, v) for q, v in zip(texts, dialogue, strict=True)]
    return _Queries(plans, all_models, embed_ms)


def document_embedder(query_embedder: Embedder) -> Embedder:
    """Hashing vectors shaped like ``query_embedder``'s (one block per model of a blend)."""
    if isinstance(query_embedder, BlendEmbedder):
        return BlendEmbedder(
            [HashingEmbedder(dim=width) for width in query_embedder.blocks],
            query_embedder.weights,
        )
    return HashingEmbedder(dim=query_embedder.dim)


def run_scale(
    query_embedder: Embedder,
    sizes: Sequence[int],
    *,
    queries: int = 100,
    ranking: RankingConfig | None = None,
    progress: Callable[[int, dict[str, JsonValue]], None] | None = None,
) -> dict[str, JsonValue]:
    """Measure each size in turn, smallest first; ``progress(size, row)`` is told each row
    as it is measured (a million turns take a while)."""
    timed = _queries(query_embedder, queries)
    doc_embedder = document_embedder(query_embedder)
    base = ranking or RankingConfig()
    rows: dict[str, JsonValue] = {}
    for size in sorted(set(sizes)):
        row = rows[str(size)] = _measure(size, doc_embedder, base, timed)
        if progress is not None:
            progress(size, row)
    return {
        "benchmark": "scale",
        "query_embedder": query_embedder.name,
        "document_vectors": doc_embedder.name,
        "dense_views": len(base.dense_views),
        "ann_threshold": base.ann_threshold,
        "query_embedding_ms_p50": round(statistics.median(timed.embed_ms), 3),
        "queries": queries,
        "sizes": rows,
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
