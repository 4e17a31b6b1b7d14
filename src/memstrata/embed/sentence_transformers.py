"""Local models through ``sentence-transformers`` (extra ``memstrata[sentence-transformers]``).

The model must already be on disk (a path, or a package that carries its weights): memstrata
sets no download and Hugging Face may be unreachable.
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
    from memstrata.settings import SentenceTransformersEmbedderSettings


class SentenceTransformerEmbedder:
    """:class:`memstrata.ports.Embedder` over a ``SentenceTransformer`` model."""

    def __init__(
        self, model: str, *, query_prefix: str = "", document_prefix: str = "", batch_size: int = 32
    ) -> None:
        self.model_name = model
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix
        self.batch_size = batch_size
        self._model: Any = None
        self._dim: int | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, s: SentenceTransformersEmbedderSettings) -> SentenceTransformerEmbedder:
        return cls(
            s.model,
            query_prefix=s.query_prefix,
            document_prefix=s.document_prefix,
            batch_size=s.batch_size,
        )

    @property
    def name(self) -> str:
        return f"st:{self.model_name}:{self.query_prefix}|{self.document_prefix}"

    def _get(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:
                    raise missing_extra("sentence-transformers", "sentence-transformers") from exc
                try:
                    self._model = SentenceTransformer(self.model_name, device="cpu")
                except Exception as exc:  # the library raises many kinds; translate them all
                    raise EmbeddingError(f"cannot load {self.model_name!r}: {exc}") from exc
                self._dim = int(self._model.get_sentence_embedding_dimension())
            return self._model

    @property
    def dim(self) -> int:
        self._get()
        assert self._dim is not None
        return self._dim

    def _encode(self, texts: list[str]) -> NDArray[np.float32]:
        model = self._get()
        try:
            out = model.encode(
                texts,
                batch_size=self.batch_size,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        except Exception as exc:
            raise EmbeddingError(f"{self.model_name!r} failed to encode: {exc}") from exc
        return normalized(out, dim=self._dim, provider=self.name)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._encode([self.document_prefix + t for t in texts])

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return first_row(self._encode([self.query_prefix + text]))
