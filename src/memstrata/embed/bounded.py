"""Every model the facade uses is given at most what it reads of a text.

:class:`memstrata.embed.cache.CachedEmbedder` cuts a text (``bounded``) before its model sees
it, keyed by the whole text. An embedder passed to ``Memory.open(embedder=...)`` as it is, or
a blend of such models, had no cut: :func:`bounded_embedder` adds it around each model that
lacks one, and leaves a cached model as it is (its keys and its hit counts unchanged).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import bounded, embed_queries
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.cache import CachedEmbedder
from memstrata.ports import CachingEmbedder, Embedder, ForgettingEmbedder, QueryKind


class BoundedEmbedder:
    """``inner`` given at most :data:`memstrata.embed.base.MAX_EMBED_CHARS` of each text; the
    same name, dimension and vectors for every text within the bound."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self.inner.embed_documents([bounded(t) for t in texts])

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return self.inner.embed_query(bounded(text))

    def embed_queries(self, texts: Sequence[str], kind: QueryKind) -> NDArray[np.float32]:
        return embed_queries(self.inner, [bounded(t) for t in texts], kind)

    def cached_documents(
        self, texts: Sequence[str]
    ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """Forwarded to a model that keeps vectors; none found otherwise."""
        if isinstance(self.inner, CachingEmbedder):
            return self.inner.cached_documents([bounded(t) for t in texts])
        return np.zeros((len(texts), self.dim), dtype=np.float32), np.zeros(len(texts), bool)

    def forget(self, texts: Sequence[str]) -> None:
        """Forwarded to a model that keeps copies, by the texts as it was given them."""
        if isinstance(self.inner, ForgettingEmbedder):
            self.inner.forget([bounded(t) for t in texts])

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()


def bounded_embedder(embedder: Embedder) -> Embedder:
    """``embedder`` with every model in it bounded; the same object when each already is."""
    if isinstance(embedder, CachedEmbedder | BoundedEmbedder):
        return embedder
    if isinstance(embedder, BlendEmbedder):
        parts = [bounded_embedder(p) for p in embedder.parts]
        if all(new is old for new, old in zip(parts, embedder.parts, strict=True)):
            return embedder
        return BlendEmbedder(parts, embedder.weights, embedder.pooled)
    return BoundedEmbedder(embedder)
