"""Dense vector indexes over integer slots.

:class:`ExactVectorIndex` keeps one contiguous float32 matrix and scores every slot with one
matrix-vector product: exact, and fast enough well past 100,000 vectors on two cores.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from memstrata.errors import InvalidInputError


class ExactVectorIndex:
    def __init__(self, dim: int, *, capacity: int = 1024) -> None:
        self.dim = dim
        self._matrix = np.zeros((capacity, dim), dtype=np.float32)
        self._alive = np.zeros(capacity, dtype=bool)
        self._count = 0

    @property
    def size(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        return int(self._matrix.nbytes + self._alive.nbytes)

    def __contains__(self, slot: int) -> bool:
        return slot < len(self._alive) and bool(self._alive[slot])

    def _grow(self, needed: int) -> None:
        if needed <= len(self._alive):
            return
        capacity = max(needed, 2 * len(self._alive))
        matrix = np.zeros((capacity, self.dim), dtype=np.float32)
        matrix[: len(self._matrix)] = self._matrix
        alive = np.zeros(capacity, dtype=bool)
        alive[: len(self._alive)] = self._alive
        self._matrix, self._alive = matrix, alive

    def add(self, slots: NDArray[np.int64] | list[int], vectors: NDArray[np.float32]) -> None:
        index = np.asarray(slots, dtype=np.int64)
        if len(index) == 0:
            return
        if vectors.shape != (len(index), self.dim):
            raise InvalidInputError(f"expected vectors of shape ({len(index)}, {self.dim})")
        self._grow(int(index.max()) + 1)
        self._count += int((~self._alive[index]).sum())
        self._matrix[index] = vectors
        self._alive[index] = True

    def remove(self, slot: int) -> None:
        if slot in self:
            self._alive[slot] = False
            self._matrix[slot] = 0.0
            self._count -= 1

    def scores(self, query: NDArray[np.float32], capacity: int) -> NDArray[np.float32]:
        """Cosine scores for every slot below ``capacity`` (vectors are normalised)."""
        out = np.zeros(capacity, dtype=np.float32)
        n = min(capacity, len(self._alive))
        # einsum runs its own single-threaded SIMD loop. A BLAS product would start threads
        # that spin while the other core is busy: measured here, 0.6 ms (einsum) against 8 ms
        # (OpenBLAS, two threads) for 10,000 x 384 beside one busy process.
        out[:n] = np.einsum("ij,j->i", self._matrix[:n], query)
        return out

    def alive(self, capacity: int) -> NDArray[np.bool_]:
        out = np.zeros(capacity, dtype=bool)
        n = min(capacity, len(self._alive))
        out[:n] = self._alive[:n]
        return out
