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

An index loaded from a snapshot (:meth:`ExactVectorIndex.from_arrays`,
:mod:`memstrata.index.snapshot`) keeps the saved matrices as they were mapped from their files
(copy-on-write: a row written in this process is this process's own, the file never changes)
and adds a second, in-memory matrix for slots past them, so that opening an index reads only
the rows a search scores and growing it never copies the mapped rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from memstrata.errors import InvalidInputError, SnapshotError
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
        #: per block, the rows of slots [0, _base_rows), mapped from a snapshot's files
        self._base: list[NDArray[np.float32]] = []
        self._base_rows = 0
        #: per block, the rows of slots from _base_rows on
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
        """Bytes of the vectors, mapped from files or in memory, and their flags."""
        blocks = [*self._base, *self._blocks]
        return int(sum(b.nbytes for b in blocks) + self._alive.nbytes)

    @property
    def mapped_nbytes(self) -> int:
        """Bytes of the vectors mapped from a snapshot's files (read from disk as used)."""
        return int(sum(b.nbytes for b in self._base))

    def _segments(self) -> list[tuple[int, list[NDArray[np.float32]]]]:
        """(first slot, per-block rows) of the mapped rows, if any, then the in-memory ones."""
        tail = (self._base_rows, self._blocks)
        return [(0, self._base), tail] if self._base_rows else [tail]

    def _rows(self, slots: NDArray[np.int64]) -> NDArray[np.float32]:
        out = np.zeros((len(slots), self.dim), dtype=np.float32)
        for start, blocks in self._segments():
            chosen = np.flatnonzero((slots >= start) & (slots < start + len(blocks[0])))
            for block, lo, hi in zip(blocks, self._bounds, self._bounds[1:], strict=False):
                out[chosen, lo:hi] = block[slots[chosen] - start]
        return out

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

    def use_graph_from(self, threshold: int | None) -> None:
        """Set :attr:`ann_threshold`, building the graph at once if the index has reached it
        (an index filled under one threshold, then searched under another)."""
        self.ann_threshold = threshold
        if threshold is None:
            self._graph = None
        else:
            self._maybe_build_graph()

    def candidates(self, query: NDArray[np.float32], count: int) -> NDArray[np.int64] | None:
        """Slots likely to score highest for ``query`` (None when the index is exact)."""
        return None if self._graph is None else self._graph.candidates(query, count)

    def __contains__(self, slot: int) -> bool:
        return slot < len(self._alive) and bool(self._alive[slot])

    def _grow(self, needed: int) -> None:
        if needed <= len(self._alive):
            return
        capacity = max(needed, int(1.25 * len(self._alive))) - self._base_rows
        for i, block in enumerate(self._blocks):
            grown = np.zeros((capacity, block.shape[1]), dtype=np.float32)
            grown[: len(block)] = block
            self._blocks[i] = grown
        alive = np.zeros(self._base_rows + capacity, dtype=bool)
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
        for start, blocks in self._segments():
            chosen = np.flatnonzero((index >= start) & (index < start + len(blocks[0])))
            if len(chosen) == len(index) and not start:
                for block, lo, hi in zip(blocks, self._bounds, self._bounds[1:], strict=False):
                    block[index] = vectors[:, lo:hi]
            elif len(chosen):
                rows = index[chosen] - start
                for block, lo, hi in zip(blocks, self._bounds, self._bounds[1:], strict=False):
                    block[rows] = vectors[chosen, lo:hi]
        self._alive[index] = True
        if self._graph is not None:
            self._graph.add(index, vectors)
        else:
            self._maybe_build_graph()

    def remove(self, slot: int) -> None:
        if slot in self:
            self._alive[slot] = False
            start, blocks = self._segments()[-1 if slot >= self._base_rows else 0]
            for block in blocks:
                block[slot - start] = 0.0
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
        for b, (lo, hi) in enumerate(zip(self._bounds, self._bounds[1:], strict=False)):
            part = query[lo:hi]
            if not part.any():
                continue
            for start, blocks in self._segments():
                block = blocks[b]
                if chosen is not None:
                    mine = chosen
                    if self._base_rows:  # two segments: this one's slots
                        mine = chosen[(chosen >= start) & (chosen < start + len(block))]
                    out[mine] += np.einsum("ij,j->i", block[mine - start], part)
                elif n > start:
                    # einsum runs its own single-threaded SIMD loop. A BLAS product would
                    # start threads that spin while the other core is busy: measured here,
                    # 0.6 ms (einsum) against 8 ms (OpenBLAS, two threads) for 10,000 x 384
                    # beside one busy process.
                    end = min(n, start + len(block))
                    out[start:end] += np.einsum("ij,j->i", block[: end - start], part)
        return out

    def alive(self, capacity: int) -> NDArray[np.bool_]:
        out = np.zeros(capacity, dtype=bool)
        n = min(capacity, len(self._alive))
        out[:n] = self._alive[:n]
        return out

    # persistence --------------------------------------------------------------------
    @property
    def widths(self) -> list[int]:
        return [hi - lo for lo, hi in zip(self._bounds, self._bounds[1:], strict=False)]

    def to_arrays(
        self, rows: int
    ) -> tuple[NDArray[np.bool_], list[list[NDArray[np.float32]]], AnnGraph | None]:
        """What a save writes for slots [0, ``rows``): their flags (a copy), and per block the
        pieces of its matrix that hold them, in slot order (views, not copies: a row written
        after this call may be read in its new state), and the graph, if any."""
        alive = np.zeros(rows, dtype=bool)
        n = min(rows, len(self._alive))
        alive[:n] = self._alive[:n]
        pieces: list[list[NDArray[np.float32]]] = [[] for _ in self._blocks]
        for start, blocks in self._segments():
            end = min(rows, start + len(blocks[0]))
            if end > start:
                for b, block in enumerate(blocks):
                    pieces[b].append(block[: end - start])
        for b, width in enumerate(self.widths):  # rows past the matrix are zero
            have = sum(len(p) for p in pieces[b])
            if have < rows:
                pieces[b].append(np.zeros((rows - have, width), dtype=np.float32))
        return alive, pieces, self._graph

    @classmethod
    def from_arrays(
        cls,
        blocks: Sequence[NDArray[np.float32]],
        alive: NDArray[np.bool_],
        *,
        ann_threshold: int | None = None,
        graph: AnnGraph | None = None,
    ) -> ExactVectorIndex:
        """An index over saved matrices (one per block, each row a slot; typically mapped
        from files copy-on-write, see the module's docstring) and their slots' flags."""
        rows = len(alive)
        widths = [int(b.shape[1]) for b in blocks]
        if any(b.ndim != 2 or len(b) != rows or b.dtype != np.float32 for b in blocks):
            raise SnapshotError(f"vector blocks do not hold {rows} float32 rows")
        index = cls(sum(widths), capacity=1024, ann_threshold=ann_threshold, blocks=widths)
        index._base = list(blocks)
        index._base_rows = rows
        index._alive = np.zeros(rows + 1024, dtype=bool)
        index._alive[:rows] = alive
        index._count = int(np.count_nonzero(alive))
        index._graph = graph
        return index
