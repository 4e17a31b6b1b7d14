"""``memstrata bench scale``: how search latency and index memory grow with a scope's size.

Synthetic bilingual turns (English, Chinese and mixed, from a fixed vocabulary and a seeded
generator) fill one user's index at each size. Document vectors come from the hashing embedder,
shaped like the configured model's (for a blend, one block per model), so that 100,000 turns
index in a minute; queries are embedded by the configured model, so the latency "including
query embedding" is the real one. A blend's question queries use only the models weighted for
questions; ``all_models`` times the same queries embedded as dialogues, every model's block
scored.
Index memory is measured with ``tracemalloc`` while the index is built, plus what the
approximate graph reports for itself. Sizes at or past the approximate threshold are measured
both exact and approximate.
"""

from __future__ import annotations

import random
import statistics
import tracemalloc
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from time import perf_counter
from typing import Final

from memstrata.bench.metrics import percentile
from memstrata.embed.base import embed_queries
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.fake import HashingEmbedder
from memstrata.ids import new_id
from memstrata.index.ann import usearch_available
from memstrata.index.config import RankingConfig
from memstrata.index.query import Query
from memstrata.index.scope_index import UserIndex
from memstrata.model import Episode, Granularity, JsonValue, Role, Scope, SearchFilter
from memstrata.ports import Embedder

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


def synthetic_turns(n: int, *, seed: int = 7, user: str = "scale") -> list[Episode]:
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    scope = Scope(user)
    out = []
    for i in range(n):
        style = i % 3
        words = rng.sample(_EN, 8)
        if style == 0:
            text = " ".join(words)
        elif style == 1:
            text = "".join(rng.sample(_ZH, 14))
        else:
            text = " ".join(words[:4]) + " " + "".join(rng.sample(_ZH, 8))
        out.append(
            Episode(
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
        )
    return out


def _measure(
    episodes: list[Episode],
    embedder: Embedder,
    config: RankingConfig,
    queries: list[Query],
    embed_p50: float,
    all_models: list[Query],
) -> dict[str, JsonValue]:
    tracemalloc.start()
    started = perf_counter()
    index = UserIndex("scale", embedder, config)
    for start in range(0, len(episodes), 5000):
        index.add_episodes(episodes[start : start + 5000])
    build_s = perf_counter() - started
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    graph_mb = sum(v.nbytes - v.matrix_nbytes for v in index.views) / 2**20

    def timed(plans: list[Query]) -> list[float]:
        out = []
        for query in plans:
            t = perf_counter()
            index.search(
                query, Scope("scale"), k=10, granularity=Granularity.TURN, filters=SearchFilter()
            )
            out.append((perf_counter() - t) * 1000)
        return out

    search_ms = timed(queries)
    excl = statistics.median(search_ms)
    extra: dict[str, JsonValue] = {}
    if all_models:
        extra["search_ms_excl_embedding_p50_all_models"] = round(
            statistics.median(timed(all_models)), 3
        )
    return {
        "search_ms_excl_embedding_p50": round(excl, 3),
        "search_ms_excl_embedding_p95": round(percentile(search_ms, 95), 3),
        "search_ms_p50": round(excl + embed_p50, 3),
        "index_build_s": round(build_s, 2),
        "index_mb": round(current / 2**20 + graph_mb, 1),
        "index_peak_mb": round(peak / 2**20 + graph_mb, 1),
        **extra,
    }


def run_scale(
    query_embedder: Embedder,
    sizes: Sequence[int],
    *,
    queries: int = 50,
    ranking: RankingConfig | None = None,
) -> dict[str, JsonValue]:
    query_texts = [
        QUERIES[i % len(QUERIES)] + ("" if i < len(QUERIES) else f" {i}") for i in range(queries)
    ]
    started = perf_counter()
    vectors = [Query(q, query_embedder.embed_query(q)) for q in query_texts]
    embed_ms = [(perf_counter() - started) * 1000 / len(query_texts)]
    doc_embedder: Embedder = HashingEmbedder(dim=query_embedder.dim)
    all_models: list[Query] = []
    if isinstance(query_embedder, BlendEmbedder):  # documents shaped like the blend's
        doc_embedder = BlendEmbedder(
            [HashingEmbedder(dim=width) for width in query_embedder.blocks],
            query_embedder.weights,
        )
        dialogue = embed_queries(query_embedder, query_texts, "dialogue")
        all_models = [Query(q, v) for q, v in zip(query_texts, dialogue, strict=True)]
    embed_each = []
    for q in query_texts[:20]:  # per-query embedding time, not amortised
        t = perf_counter()
        query_embedder.embed_query(q + " ?")
        embed_each.append((perf_counter() - t) * 1000)
    base = ranking or RankingConfig()
    exact_config = replace(base, ann_threshold=None)
    rows: dict[str, JsonValue] = {}
    embed_p50 = statistics.median(embed_each)
    for size in sizes:
        episodes = synthetic_turns(size)
        variants = [("exact", exact_config)]
        if base.ann_threshold is not None and size >= base.ann_threshold and usearch_available():
            variants.append(("approximate", base))
        row: dict[str, JsonValue] = {}
        for name, config in variants:
            row[name] = _measure(episodes, doc_embedder, config, vectors, embed_p50, all_models)
        rows[str(size)] = row
        del episodes
    return {
        "benchmark": "scale",
        "query_embedder": query_embedder.name,
        "query_embedding_ms_p50": round(statistics.median(embed_each), 3),
        "query_embedding_ms_batch_mean": round(embed_ms[0], 3),
        "queries": queries,
        "sizes": rows,
    }
