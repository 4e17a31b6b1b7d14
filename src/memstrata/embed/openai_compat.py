"""Any OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM, llama.cpp server ...).

Speaks ``POST {base_url}/embeddings`` with the standard library's HTTP client, so it needs no
extra package. The API key is sent as a bearer token and never logged.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import first_row, normalized
from memstrata.errors import EmbeddingError

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
        body = json.dumps({"model": self.model, "input": texts}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        request = urllib.request.Request(
            f"{self.base_url}/embeddings", data=body, headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                payload: Any = json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:200].decode("utf-8", "replace")
            raise EmbeddingError(f"{self.base_url} answered {exc.code}: {detail}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise EmbeddingError(f"cannot reach {self.base_url}: {exc}") from exc
        except json.JSONDecodeError as exc:
            raise EmbeddingError(f"{self.base_url} did not answer JSON") from exc
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
