"""Approximate nearest neighbours for large scopes, with ``usearch`` (extra ``memstrata[ann]``).

Why usearch: a single-file HNSW engine with wheels for every common platform, actively
released, with key removal and int8 quantisation. Measured here on 100,000 x 384 clustered
vectors: built in 14 s on two threads, 0.34 ms per query, 9-10 of the exact top 10 found.
hnswlib (no release since 2023) and faiss (a much larger package) were measured too; see
``docs/adr/0002-hybrid-retrieval.md``.

The graph only proposes candidates: it is kept in int8, and every candidate is rescored exactly
from the float32 matrix of :class:`ExactVectorIndex`, so scores are the same as without it.

A graph is saved to a file and loaded whole into memory (:meth:`AnnGraph.save`,
:meth:`AnnGraph.load`, for :mod:`memstrata.index.snapshot`): not viewed in place, so that a
deletion may overwrite the file's bytes while another process uses the graph it loaded.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memstrata.errors import SnapshotError
from memstrata.util.durable import fsync_path

log = logging.getLogger(__name__)
_EXPANSION = 128
_warned = threading.Event()


def usearch_available() -> bool:
    try:
        import usearch.index  # noqa: F401
    except ImportError:
        if not _warned.is_set():
            _warned.set()
            log.warning("usearch is not installed (memstrata[ann]); large scopes use exact search")
        return False
    return True


class AnnGraph:
    """An HNSW graph over slots (keys), proposing candidates for a query vector."""

    def __init__(self, dim: int, *, index: Any = None) -> None:
        from usearch.index import Index

        self._index: Any = index or Index(
            ndim=dim,
            metric="cos",
            dtype="i8",
            connectivity=16,
            expansion_add=_EXPANSION,
            expansion_search=_EXPANSION,
        )
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._index)

    @property
    def nbytes(self) -> int:
        return int(self._index.memory_usage)

    def add(self, slots: NDArray[np.int64], vectors: NDArray[np.float32]) -> None:
        with self._lock:
            present = [int(s) for s in slots if self._index.contains(int(s))]
            for slot in present:  # a re-indexed slot replaces its old vector
                self._index.remove(slot)
            self._index.add(np.asarray(slots, dtype=np.uint64), vectors, threads=2)

    def remove(self, slot: int) -> None:
        with self._lock:
            if self._index.contains(slot):
                self._index.remove(slot)

    def candidates(self, query: NDArray[np.float32], count: int) -> NDArray[np.int64]:
        with self._lock:
            if len(self._index) == 0:
                return np.zeros(0, dtype=np.int64)
            matches = self._index.search(query, min(count, len(self._index)))
        return np.asarray(matches.keys, dtype=np.int64)

    def save(self, path: Path) -> None:
        """Write the graph to ``path`` and flush it to disk."""
        with self._lock:
            self._index.save(str(path))
        fsync_path(path)

    @classmethod
    def load(cls, path: Path, dim: int) -> AnnGraph:
        """A graph :meth:`save` wrote, read whole into memory."""
        from usearch.index import Index

        try:
            index: Any = Index.restore(str(path), view=False)
        except (RuntimeError, ValueError, OSError) as exc:
            raise SnapshotError(f"the graph {path.name} cannot be read: {exc}") from exc
        if index is None or index.ndim != dim:
            raise SnapshotError(f"the graph {path.name} is not a graph of {dim} dimensions")
        index.expansion_add = _EXPANSION  # not kept in the file (it comes back as 64)
        index.expansion_search = _EXPANSION
        return cls(dim, index=index)
