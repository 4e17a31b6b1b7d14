"""A deterministic embedder for tests and for running without any model.

It hashes word and character-bigram features into a fixed number of dimensions (the hashing
trick), so texts that share words or Chinese characters get similar vectors. It ships with the
code so tests are hermetic and fast; it is not a semantic model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import first_row, normalized

_WORD_RE = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]", re.IGNORECASE)


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

    def _vector(self, text: str) -> NDArray[np.float32]:
        out = np.zeros(self._dim, dtype=np.float32)
        for feature in self._features(text) or ["<empty>"]:
            digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self._dim
            out[bucket] += 1.0 if digest[4] & 1 else -1.0
        return out

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        return normalized(
            np.stack([self._vector(t) for t in texts]), dim=self._dim, provider=self.name
        )

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return first_row(self.embed_documents([text]))
