"""Every embedder the facade uses is given at most ``MAX_EMBED_CHARS`` of a text, however it
was passed in; a cache keeps its keys (the whole text's hash) and its counts."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from memstrata.api import Memory
from memstrata.embed.base import MAX_EMBED_CHARS, bounded
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.cache import CachedEmbedder, cache_counts
from memstrata.embed.fake import HashingEmbedder
from memstrata.model import Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice")
LONG = "I walk the dog every morning before work. " * 300  # about 12,600 characters
LONG_QUERY = "when do I walk the dog " * 150  # about 3,450 characters


class Recording(HashingEmbedder):
    """A fake model that remembers every text it was given."""

    def __init__(self, dim: int = 32) -> None:
        super().__init__(dim)
        self.documents: list[str] = []
        self.queries: list[str] = []

    @property
    def seen(self) -> list[str]:
        return self.documents + self.queries

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.documents += texts
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        self.queries.append(text)
        return super().embed_documents([text])[0]


def _exercise(mem: Memory) -> None:
    mem.remember([LONG, "short turn"], ALICE)
    assert mem.search(LONG_QUERY, ALICE, k=3)
    assert mem.search("dog", ALICE, k=3)


def _all_bounded(seen: Sequence[str]) -> bool:
    return bool(seen) and all(bounded(t) == t for t in seen)


def test_an_embedder_passed_as_it_is_is_bounded(tmp_path: Path, clock: FixedClock) -> None:
    model = Recording()
    with Memory.open(settings=load_settings(data_dir=tmp_path), clock=clock, embedder=model) as m:
        _exercise(m)
        assert m.embedder.name == model.name
    assert _all_bounded(model.documents) and _all_bounded(model.queries)
    assert max(len(t) for t in model.seen) <= MAX_EMBED_CHARS


def test_each_model_of_a_blend_passed_as_it_is_is_bounded(
    tmp_path: Path, clock: FixedClock
) -> None:
    first, second = Recording(16), Recording(24)
    blend = BlendEmbedder([first, second], {"question": (1.0, 0.5), "dialogue": (1.0, 1.0)})
    with Memory.open(settings=load_settings(data_dir=tmp_path), clock=clock, embedder=blend) as m:
        _exercise(m)
        used = m.embedder
        assert isinstance(used, BlendEmbedder) and used.blocks == (16, 24)
        assert used.weights == blend.weights
    assert _all_bounded(first.seen) and _all_bounded(second.seen)


def test_a_cached_embedder_is_used_as_it_is(tmp_path: Path, clock: FixedClock) -> None:
    model = Recording()
    cached = CachedEmbedder(model, tmp_path / "embeddings.db")
    with Memory.open(
        settings=load_settings(data_dir=tmp_path / "mem"), clock=clock, embedder=cached
    ) as m:
        _exercise(m)
        assert m.embedder is cached  # keys by the whole text, counts once
        counts = cache_counts(m.embedder)
        assert counts is not None and counts["misses"] == len(model.documents)
    assert _all_bounded(model.seen)


def test_a_blend_of_cached_models_is_used_as_it_is(tmp_path: Path, clock: FixedClock) -> None:
    parts = [CachedEmbedder(Recording(16), None), CachedEmbedder(Recording(24), None)]
    blend = BlendEmbedder(parts, {})
    with Memory.open(settings=load_settings(data_dir=tmp_path), clock=clock, embedder=blend) as m:
        assert m.embedder is blend
