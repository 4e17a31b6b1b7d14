"""Dense vector indexes over integer slots.

:class:`ExactVectorIndex` keeps one contiguous float32 matrix and scores every slot with one
matrix-vector product: exact, and fast enough well past 100,000 vectors on two cores. Past
``ann_threshold`` vectors an HNSW graph (:mod:`memstrata.index.ann`) proposes candidates and
only those are scored, still exactly from the matrix.

A blend of models (:mod:`memstrata.embed.blend`) gives vectors made of blocks, one per model,
and a query may leave a block at zero (a model it does not use). The matrix is therefore kept
as one contiguous matrix per block, and a block that is zero in the query is skipped: a
strided column slice of one wide matrix would be slower than scoring all of it.

Reads change nothing, so searches may score at once; writes (``add``, ``remove``) need the index
to themselves, which its owner ensures (``UserIndex`` holds a read-write lock).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from memstrata.errors import InvalidInputError
from memstrata.index.ann import AnnGraph, usearch_available


class ExactVectorIndex:
    def __init__(
        self,
        dim: int,
        *,
        capacity: int = 1024,
        ann_threshold: int | None = None,
        blocks: Sequence[int] | None = None,
    ) -> None:
        widths = list(blocks) if blocks else [dim]
        if sum(widths) != dim or any(w <= 0 for w in widths):
            raise InvalidInputError(f"blocks {widths} do not split {dim} dimensions")
        self.dim = dim
        #: size from which an approximate graph proposes candidates (None: never)
        self.ann_threshold = ann_threshold
        self._graph: AnnGraph | None = None
        self._bounds = [0, *np.cumsum(widths).tolist()]
        self._blocks = [np.zeros((capacity, w), dtype=np.float32) for w in widths]
        self._alive = np.zeros(capacity, dtype=bool)
        self._count = 0

    @property
    def size(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        graph = self._graph.nbytes if self._graph is not None else 0
        return self.matrix_nbytes + graph

    @property
    def matrix_nbytes(self) -> int:
        return int(sum(b.nbytes for b in self._blocks) + self._alive.nbytes)

    def _rows(self, slots: NDArray[np.int64]) -> NDArray[np.float32]:
        return np.hstack([block[slots] for block in self._blocks])

    @property
    def approximate(self) -> bool:
        """Whether an approximate graph is in use (the scope has grown past the threshold)."""
        return self._graph is not None

    def _maybe_build_graph(self) -> None:
        if (
            self._graph is None
            and self.ann_threshold is not None
            and self._count >= self.ann_threshold
            and usearch_available()
        ):
            self._graph = AnnGraph(self.dim)
            live = np.flatnonzero(self._alive)
            for start in range(0, len(live), 10_000):
                chunk = live[start : start + 10_000]
                self._graph.add(chunk, self._rows(chunk))

    def candidates(self, query: NDArray[np.float32], count: int) -> NDArray[np.int64] | None:
        """Slots likely to score highest for ``query`` (None when the index is exact)."""
        return None if self._graph is None else self._graph.candidates(query, count)

    def __contains__(self, slot: int) -> bool:
        return slot < len(self._alive) and bool(self._alive[slot])

    def _grow(self, needed: int) -> None:
        if needed <= len(self._alive):
            return
        capacity = max(needed, int(1.25 * len(self._alive)))
        for i, block in enumerate(self._blocks):
            grown = np.zeros((capacity, block.shape[1]), dtype=np.float32)
            grown[: len(block)] = block
            self._blocks[i] = grown
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(self._alive)] = self._alive
        self._alive = alive

    def add(self, slots: NDArray[np.int64] | list[int], vectors: NDArray[np.float32]) -> None:
        index = np.asarray(slots, dtype=np.int64)
        if len(index) == 0:
            return
        if vectors.shape != (len(index), self.dim):
            raise InvalidInputError(f"expected vectors of shape ({len(index)}, {self.dim})")
        self._grow(int(index.max()) + 1)
        self._count += int((~self._alive[index]).sum())
        for block, lo, hi in zip(self._blocks, self._bounds, self._bounds[1:], strict=False):
            block[index] = vectors[:, lo:hi]
        self._alive[index] = True
        if self._graph is not None:
            self._graph.add(index, vectors)
        else:
            self._maybe_build_graph()

    def remove(self, slot: int) -> None:
        if slot in self:
            self._alive[slot] = False
            for block in self._blocks:
                block[slot] = 0.0
            self._count -= 1
            if self._graph is not None:
                self._graph.remove(slot)

    def scores(
        self, query: NDArray[np.float32], capacity: int, slots: NDArray[np.int64] | None = None
    ) -> NDArray[np.float32]:
        """Cosine scores for every slot below ``capacity`` (vectors are normalised), or only
        for ``slots`` (zero elsewhere)."""
        out = np.zeros(capacity, dtype=np.float32)
        chosen = None if slots is None else slots[slots < len(self._alive)]
        n = min(capacity, len(self._alive))
        for block, lo, hi in zip(self._blocks, self._bounds, self._bounds[1:], strict=False):
            part = query[lo:hi]
            if not part.any():
                continue
            if chosen is not None:
                out[chosen] += np.einsum("ij,j->i", block[chosen], part)
            else:
                # einsum runs its own single-threaded SIMD loop. A BLAS product would start
                # threads that spin while the other core is busy: measured here, 0.6 ms
                # (einsum) against 8 ms (OpenBLAS, two threads) for 10,000 x 384 beside one
                # busy process.
                out[:n] += np.einsum("ij,j->i", block[:n], part)
        return out

    def alive(self, capacity: int) -> NDArray[np.bool_]:
        out = np.zeros(capacity, dtype=bool)
        n = min(capacity, len(self._alive))
        out[:n] = self._alive[:n]
        return out
