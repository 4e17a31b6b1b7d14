"""Models through ``fastembed`` (extra ``memstrata[fastembed]``).

fastembed downloads its models by default; point ``cache_dir`` at a directory that already holds
the model (memstrata does not fetch anything itself).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import first_row, missing_extra, normalized
from memstrata.errors import EmbeddingError

if TYPE_CHECKING:
    from memstrata.settings import FastEmbedEmbedderSettings


class FastEmbedEmbedder:
    """:class:`memstrata.ports.Embedder` over ``fastembed.TextEmbedding``."""

    def __init__(self, model: str, *, dim: int, cache_dir: str | None = None) -> None:
        self.model_name = model
        self._dim = dim
        self.cache_dir = cache_dir
        self._model: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, s: FastEmbedEmbedderSettings) -> FastEmbedEmbedder:
        return cls(s.model, dim=s.dim, cache_dir=s.cache_dir)

    @property
    def name(self) -> str:
        return f"fastembed:{self.model_name}"

    @property
    def dim(self) -> int:
        return self._dim

    def _get(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from fastembed import TextEmbedding
                except ImportError as exc:
                    raise missing_extra("fastembed", "fastembed") from exc
                try:
                    self._model = TextEmbedding(
                        model_name=self.model_name, cache_dir=self.cache_dir, local_files_only=True
                    )
                except Exception as exc:
                    raise EmbeddingError(f"cannot load {self.model_name!r}: {exc}") from exc
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        model = self._get()
        try:
            rows = list(model.passage_embed(list(texts)))
        except Exception as exc:
            raise EmbeddingError(f"{self.model_name!r} failed to encode: {exc}") from exc
        return normalized(rows, dim=self._dim, provider=self.name)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        model = self._get()
        try:
            rows = list(model.query_embed(text))
        except Exception as exc:
            raise EmbeddingError(f"{self.model_name!r} failed to encode: {exc}") from exc
        return first_row(normalized(rows, dim=self._dim, provider=self.name))
