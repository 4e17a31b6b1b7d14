"""Several embedding models used as one, weighted by the kind of query.

A document's vector is its models' unit vectors side by side, each scaled by ``1/sqrt(n)``, so
it stays a unit vector and is the same whatever the weights. A query's vector is its models'
unit vectors scaled by the weights of its kind, then normalised; the dot product of the two is
therefore the weighted mean of the models' cosines (up to one factor that is equal for every
document of that query). A model whose weight is 0 for a kind is not run for that kind, and its
block of the query is zero.

A turn's context views embed it with the turns before it (a *window* of texts,
:meth:`BlendEmbedder.embed_windows`). A model marked *pooled* does not read a window joined: its
vector of a window is the normalised mean of its vectors of the window's texts alone, so it
embeds each turn once, whatever the number of views. The default pools e5 (the costly model;
its tokens are the whole cost of indexing) and lets the sentence encoder read the joined window.

Why kinds: the default blend is multilingual-e5 with the Universal Sentence Encoder. e5 is the
better model for a question (LoCoMo); for a dialogue whose topic, not its words, points at a
memory (MADial), the two together are clearly better than either (``docs/benchmarks.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import embed_queries
from memstrata.errors import ConfigError, InvalidInputError
from memstrata.ports import QUERY_KINDS, CachingEmbedder, Embedder, ForgettingEmbedder, QueryKind


class BlendEmbedder:
    """:class:`memstrata.ports.Embedder` made of ``parts``, with query weights per kind."""

    def __init__(
        self,
        parts: Sequence[Embedder],
        weights: Mapping[QueryKind, Sequence[float]],
        pooled: Sequence[bool] | None = None,
    ) -> None:
        if len(parts) < 2:
            raise ConfigError("a blend needs at least two embedding models")
        self.parts = tuple(parts)
        #: per model: whether its vector of a window pools its vectors of the texts alone
        self.pooled = (
            tuple(bool(p) for p in pooled) if pooled is not None else (False,) * len(parts)
        )
        if len(self.pooled) != len(self.parts):
            raise ConfigError(
                f"the blend's pooled flags {list(self.pooled)} do not match its {len(parts)} models"
            )
        self.weights: dict[QueryKind, tuple[float, ...]] = {}
        for kind in QUERY_KINDS:
            given = tuple(float(w) for w in weights.get(kind, (1.0,) * len(parts)))
            if len(given) != len(parts):
                raise ConfigError(
                    f"the blend's {kind} weights {list(given)} do not match its {len(parts)} models"
                )
            if any(not math.isfinite(w) or w < 0 for w in given) or not any(given):
                raise ConfigError(
                    f"the blend's {kind} weights must be finite, non-negative and not all 0; "
                    f"got {list(given)}"
                )
            self.weights[kind] = given
        self._offsets = np.cumsum([0, *(p.dim for p in self.parts)])
        self._scale = np.float32(1.0 / math.sqrt(len(self.parts)))

    @property
    def name(self) -> str:
        return "blend(" + ",".join(p.name for p in self.parts) + ")"

    @property
    def dim(self) -> int:
        return int(self._offsets[-1])

    @property
    def blocks(self) -> tuple[int, ...]:
        """The width of each model's block of a vector, in order."""
        return tuple(p.dim for p in self.parts)

    def _slice(self, i: int) -> slice:
        return slice(int(self._offsets[i]), int(self._offsets[i + 1]))

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if texts:
            for i, part in enumerate(self.parts):
                out[:, self._slice(i)] = part.embed_documents(texts) * self._scale
        return out

    def cached_documents(
        self, texts: Sequence[str]
    ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """The rows every model has cached (a model without a cache has none)."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        found = np.ones(len(texts), dtype=bool)
        for i, part in enumerate(self.parts):
            if not isinstance(part, CachingEmbedder):
                return out, np.zeros(len(texts), dtype=bool)
            vectors, part_found = part.cached_documents(texts)
            out[:, self._slice(i)] = vectors * self._scale
            found &= part_found
        out[~found] = 0.0
        return out, found

    def embed_windows(
        self, windows: Sequence[Sequence[str]], sep: str = "\n"
    ) -> NDArray[np.float32]:
        """Document vectors of ``windows`` (each a text after the texts before it, oldest
        first): a pooled model embeds every distinct text alone, once, and takes the
        normalised mean of a window's vectors; any other model embeds the window joined by
        ``sep``. A window of one text gets the vector :meth:`embed_documents` gives it."""
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        if not windows:
            return out
        joined: list[str] | None = None
        for i, part in enumerate(self.parts):
            if self.pooled[i]:
                block = _pooled(part, windows)
            else:
                joined = joined or [sep.join(w) for w in windows]
                block = part.embed_documents(joined)
            out[:, self._slice(i)] = block * self._scale
        return out

    def cached_windows(
        self, windows: Sequence[Sequence[str]], sep: str = "\n"
    ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """:meth:`embed_windows` from what every model has cached (no model is run), and which
        rows were found (rows not found are zero)."""
        out = np.zeros((len(windows), self.dim), dtype=np.float32)
        found = np.ones(len(windows), dtype=bool)
        joined: list[str] | None = None
        for i, part in enumerate(self.parts):
            if not isinstance(part, CachingEmbedder):
                return out, np.zeros(len(windows), dtype=bool)
            if self.pooled[i]:
                texts = _distinct(windows)
                vectors, hit = part.cached_documents(texts)
                block = _pool(windows, texts, vectors)
                seen = {t for t, h in zip(texts, hit, strict=True) if h}
                part_found = np.array([all(t in seen for t in w) for w in windows], dtype=bool)
            else:
                joined = joined or [sep.join(w) for w in windows]
                block, part_found = part.cached_documents(joined)
            out[:, self._slice(i)] = block * self._scale
            found &= part_found
        out[~found] = 0.0
        return out, found

    def close(self) -> None:
        """Close the models that hold resources (a cache's database)."""
        for part in self.parts:
            close = getattr(part, "close", None)
            if callable(close):
                close()

    def forget(self, texts: Sequence[str]) -> None:
        """Drop ``texts`` from every model's cache (models without one keep nothing)."""
        for part in self.parts:
            if isinstance(part, ForgettingEmbedder):
                part.forget(texts)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return np.asarray(self.embed_queries([text], "question")[0], dtype=np.float32)

    def embed_queries(self, texts: Sequence[str], kind: QueryKind) -> NDArray[np.float32]:
        """Query vectors for ``texts``, weighted for ``kind``; each model runs once for all."""
        if kind not in self.weights:
            raise ConfigError(f"unknown query kind {kind!r}; expected one of {QUERY_KINDS}")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        for i, (part, weight) in enumerate(zip(self.parts, self.weights[kind], strict=True)):
            if weight > 0:
                out[:, self._slice(i)] = embed_queries(part, texts, kind) * np.float32(weight)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0  # a model may give the zero vector: the row stays zero
        out /= norms
        return out


def _distinct(windows: Sequence[Sequence[str]]) -> list[str]:
    """The distinct texts of ``windows``, in order of first appearance."""
    if any(not w for w in windows):
        raise InvalidInputError("a window to embed needs at least one text")
    return list(dict.fromkeys(t for w in windows for t in w))


def _pool(
    windows: Sequence[Sequence[str]], texts: Sequence[str], vectors: NDArray[np.float32]
) -> NDArray[np.float32]:
    """Per window, the normalised mean of the vectors (rows of ``vectors``, one per text of
    ``texts``) of its texts."""
    if not windows:
        return np.zeros((0, vectors.shape[1]), dtype=np.float32)
    position = {text: k for k, text in enumerate(texts)}
    out = np.stack([vectors[[position[t] for t in w]].sum(axis=0) for w in windows])
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(out / norms, dtype=np.float32)


def _pooled(model: Embedder, windows: Sequence[Sequence[str]]) -> NDArray[np.float32]:
    """Per window, the normalised mean of ``model``'s vectors of its texts, each distinct
    text embedded once."""
    texts = _distinct(windows)
    return _pool(windows, texts, model.embed_documents(texts))


def embed_windows(
    embedder: Embedder, windows: Sequence[Sequence[str]], sep: str = "\n"
) -> NDArray[np.float32]:
    """Document vectors of ``windows`` by any embedder: a blend's own
    :meth:`BlendEmbedder.embed_windows`, or one model reading each window joined by ``sep``."""
    if isinstance(embedder, BlendEmbedder):
        return embedder.embed_windows(windows, sep)
    return embedder.embed_documents([sep.join(w) for w in windows])


def embeds_turns_alone(embedder: Embedder) -> bool:
    """Whether ``embedder`` embeds each text of a window alone (a blend with a pooled model):
    then a turn's text alone is among the texts embedded for its context views."""
    return isinstance(embedder, BlendEmbedder) and any(embedder.pooled)


def cached_windows(
    embedder: Embedder, windows: Sequence[Sequence[str]], sep: str = "\n"
) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
    """:func:`embed_windows` from ``embedder``'s cache (no model is run), and which rows were
    found; none without a cache."""
    if isinstance(embedder, BlendEmbedder):
        return embedder.cached_windows(windows, sep)
    if isinstance(embedder, CachingEmbedder):
        return embedder.cached_documents([sep.join(w) for w in windows])
    empty = np.zeros((len(windows), embedder.dim), dtype=np.float32)
    return empty, np.zeros(len(windows), dtype=bool)
