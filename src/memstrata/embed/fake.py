"""A deterministic embedder for tests and for running without any model.

It hashes word and character-bigram features into a fixed number of dimensions (the hashing
trick), so texts that share words or Chinese characters get similar vectors. It ships with the
code so tests are hermetic and fast; it is not a semantic model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
from itertools import pairwise, repeat

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import first_row, normalized
from memstrata.util.scripts import HAN

_WORD_RE = re.compile(rf"[a-z0-9]+|[{HAN}]", re.IGNORECASE)


@lru_cache(maxsize=1 << 18)
def _cell(feature: str, dim: int) -> int:
    """Where a feature is hashed: ``2 * dimension + 1`` for a positive sign, ``+ 0`` for a
    negative one (the hash is costly and vocabularies repeat, so it is cached)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return 2 * (int.from_bytes(digest[:4], "little") % dim) + (digest[4] & 1)


class HashingEmbedder:
    """:class:`memstrata.ports.Embedder` by feature hashing; no model, no randomness."""

    def __init__(self, dim: int = 256) -> None:
        self._dim = dim

    @property
    def name(self) -> str:
        return f"hashing:{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def _features(self, text: str) -> list[str]:
        tokens = [t.lower() for t in _WORD_RE.findall(text)]
        return tokens + [a + b for a, b in pairwise(tokens)]

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        # Every feature of the batch as one array of cells, summed by one bincount: the sums
        # are small integers, exact in any order.
        cells: list[int] = []
        counts: list[int] = []
        for text in texts:
            features = self._features(text) or ["<empty>"]
            cells.extend(map(_cell, features, repeat(self._dim)))
            counts.append(len(features))
        code = np.asarray(cells, dtype=np.int64)
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
        sums = np.bincount(
            rows * self._dim + (code >> 1),
            weights=np.where(code & 1, 1.0, -1.0),
            minlength=len(texts) * self._dim,
        )
        return normalized(sums.reshape(len(texts), self._dim), dim=self._dim, provider=self.name)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return first_row(self.embed_documents([text]))
