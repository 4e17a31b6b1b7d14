"""Any OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM, llama.cpp server ...).

Speaks ``POST {base_url}/embeddings`` with the standard library's HTTP client, so it needs no
extra package. The API key is sent as a bearer token and never logged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import first_row, normalized
from memstrata.errors import EmbeddingError
from memstrata.httpjson import post_json

if TYPE_CHECKING:
    from memstrata.settings import OpenAIEmbedderSettings


class OpenAIEmbedder:
    """:class:`memstrata.ports.Embedder` over an OpenAI-compatible ``/embeddings`` route."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        dim: int,
        api_key: str | None = None,
        batch_size: int = 64,
        timeout_s: float = 30.0,
        query_prefix: str = "",
        document_prefix: str = "",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._dim = dim
        self._api_key = api_key
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        self.query_prefix = query_prefix
        self.document_prefix = document_prefix

    @classmethod
    def from_settings(cls, s: OpenAIEmbedderSettings) -> OpenAIEmbedder:
        return cls(
            base_url=s.base_url,
            model=s.model,
            dim=s.dim,
            api_key=s.api_key.get_secret_value() if s.api_key else None,
            batch_size=s.batch_size,
            timeout_s=s.timeout_s,
            query_prefix=s.query_prefix,
            document_prefix=s.document_prefix,
        )

    @property
    def name(self) -> str:
        return f"openai:{self.base_url}:{self.model}:{self.query_prefix}|{self.document_prefix}"

    @property
    def dim(self) -> int:
        return self._dim

    def _post(self, texts: list[str]) -> NDArray[np.float32]:
        payload = post_json(
            f"{self.base_url}/embeddings",
            {"model": self.model, "input": texts},
            api_key=self._api_key,
            timeout_s=self.timeout_s,
            error=EmbeddingError,
        )
        try:
            rows = sorted(payload["data"], key=lambda d: d.get("index", 0))
            vectors = [row["embedding"] for row in rows]
        except (KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingError(f"{self.base_url} answered without data[].embedding") from exc
        if len(vectors) != len(texts):
            raise EmbeddingError(
                f"{self.base_url} returned {len(vectors)} vectors for {len(texts)} texts"
            )
        return normalized(vectors, dim=self._dim, provider=self.name)

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        if not texts:
            return np.zeros((0, self._dim), dtype=np.float32)
        parts = [
            self._post([self.document_prefix + t for t in texts[i : i + self.batch_size]])
            for i in range(0, len(texts), self.batch_size)
        ]
        return np.vstack(parts)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return first_row(self._post([self.query_prefix + text]))
