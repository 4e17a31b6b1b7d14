"""``memstrata bench index``: from raw text to searchable, with the configured embedder and a
cold cache.

One run in a fresh temporary data directory, whose embedding cache is new and empty: parse the
file and store its turns (ingest, the raw trace on as a real ingest has it), build the user's
search index (searchable by words from then on, ``lexical_index_s``), then embed every turn's
dense views (:meth:`memstrata.api.Memory.index`, what the background indexer does), after which
every turn is searchable densely too. Reports turns per second for the
whole, for the ingest alone and for the indexing alone, the texts each model embedded and the
time it took, and the process's peak resident memory.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from time import perf_counter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstrata import importers
from memstrata.api import Memory
from memstrata.bench.metrics import peak_rss_mb
from memstrata.embed import create_embedder
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.cache import with_cache
from memstrata.errors import InvalidInputError
from memstrata.model import JsonValue
from memstrata.ports import Embedder
from memstrata.settings import Settings, load_settings

_USER = "bench"


class _TimedModel:
    """One model, counting the texts it embeds for documents and the time it takes; every
    other attribute (query forms, closing) is the model's own."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts = 0
        self.seconds = 0.0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        started = perf_counter()
        out = self.inner.embed_documents(texts)
        self.seconds += perf_counter() - started
        self.texts += len(texts)
        return out

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self.inner.embed_query(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


@dataclass(frozen=True, slots=True)
class _Models:
    """The embedder a run uses (cached in the run's own, new cache) and its timed models."""

    embedder: Embedder
    timed: list[_TimedModel]


def _models(settings: Settings) -> _Models:
    model = create_embedder(settings.embedder)
    if isinstance(model, BlendEmbedder):
        timed = [_TimedModel(part) for part in model.parts]
        blend = BlendEmbedder(timed, model.weights, pooled=model.pooled)
        return _Models(with_cache(blend, settings.embedding_cache_path), timed)
    one = _TimedModel(model)
    return _Models(with_cache(one, settings.embedding_cache_path), [one])


def run_index_bench(
    path: Path, fmt: str, *, limit: int | None = None, settings: Settings | None = None
) -> dict[str, JsonValue]:
    """Ingest ``path`` (its first ``limit`` conversations) into a fresh memory and index it."""
    parse_started = perf_counter()
    batch = importers.load(path, fmt)
    if limit is not None:
        if limit < 1:
            raise InvalidInputError("limit must be at least 1")
        batch = replace(batch, conversations=batch.conversations[:limit])
    parse_s = perf_counter() - parse_started
    turns = batch.turn_count
    if turns == 0:
        raise InvalidInputError(f"{path} holds no turns")
    with tempfile.TemporaryDirectory(prefix="memstrata-bench-") as tmp:
        base = settings or load_settings()
        run_settings = base.model_copy(update={"data_dir": Path(tmp), "load_sample": False})
        models = _models(run_settings)
        with Memory.open(settings=run_settings, embedder=models.embedder) as memory:
            started = perf_counter()
            memory.ingest(batch, _USER)
            stored = perf_counter()
            index = memory.indexes.index(_USER)  # searchable by its words from here
            lexical = perf_counter()
            memory.index(_USER)  # every turn's dense vectors embedded
            indexed = perf_counter()
            entries, pending = len(index), memory.pending(_USER)
            name = memory.embedder.name
    ingest_s = parse_s + stored - started
    index_s = indexed - stored
    texts = sum(m.texts for m in models.timed)

    def per_s(count: int, seconds: float) -> float:
        return round(count / seconds, 1) if seconds > 0 else 0.0

    return {
        "benchmark": "index",
        "source": str(path),
        "format": fmt,
        "conversations": len(batch.conversations),
        "turns": turns,
        "entries_indexed": entries,
        "embedder": name,
        "cold_cache": True,
        "parse_s": round(parse_s, 3),
        "ingest_s": round(ingest_s, 3),
        "lexical_index_s": round(lexical - stored, 3),
        "index_s": round(index_s, 3),
        "pending_after": pending,
        "total_s": round(ingest_s + index_s, 3),
        "turns_per_s": per_s(turns, ingest_s + index_s),
        "ingest_turns_per_s": per_s(turns, ingest_s),
        "index_turns_per_s": per_s(turns, index_s),
        "texts_embedded": texts,
        "texts_per_turn": round(texts / turns, 2),
        "models": {
            m.name: {
                "texts": m.texts,
                "seconds": round(m.seconds, 3),
                "texts_per_s": per_s(m.texts, m.seconds),
            }
            for m in models.timed
        },
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
