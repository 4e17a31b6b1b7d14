"""An incremental BM25 index over integer slots, compact enough for 100,000s of turns.

Terms are interned as integer ids. Each term keeps its postings in three ``array('i')`` columns
(slot, term frequency, the slot's epoch when it was added), appended in O(1). A slot's epoch
grows whenever it is removed or re-added, so a posting is live exactly when its epoch is the
slot's current one: removal only counts a term's stale postings, and compacts its posting list
once they outnumber the live ones (so scoring never filters more than it keeps).

Reads (:meth:`BM25Index.scores`, :meth:`BM25Index.idf`) change nothing but a cache of immutable
arrays, so any number may run at once; writes (:meth:`BM25Index.add`, :meth:`BM25Index.remove`)
need the index to themselves, which its owner ensures (``UserIndex`` holds a read-write lock).

Scoring is Okapi BM25 with Lucene's idf, ``log(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np
from numpy.typing import NDArray


class BM25Index:
    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._vocab: dict[str, int] = {}
        self._slots: list[array[int]] = []
        self._tfs: list[array[int]] = []
        self._epochs: list[array[int]] = []
        self._df: array[int] = array("i")
        self._stale: array[int] = array("i")  # per term, postings of removed slots
        self._docs: dict[int, array[int]] = {}  # slot -> term id, tf, term id, tf, ...
        self._epoch = np.zeros(1024, dtype=np.int32)
        self._lengths = np.zeros(1024, dtype=np.float32)
        self._total_length = 0.0
        self._cache: dict[int, tuple[NDArray[np.int32], NDArray[np.float32]]] = {}

    @property
    def size(self) -> int:
        """Number of live documents."""
        return len(self._docs)

    @property
    def vocabulary(self) -> int:
        return len(self._vocab)

    def __contains__(self, slot: int) -> bool:
        return slot in self._docs

    def _grow(self, slot: int) -> None:
        if slot < len(self._epoch):
            return
        size = max(slot + 1, int(len(self._epoch) * 1.5))
        epoch = np.zeros(size, dtype=np.int32)
        epoch[: len(self._epoch)] = self._epoch
        lengths = np.zeros(size, dtype=np.float32)
        lengths[: len(self._lengths)] = self._lengths
        self._epoch, self._lengths = epoch, lengths

    def add(self, slot: int, tokens: Iterable[str]) -> None:
        """Index ``tokens`` under ``slot`` (replacing what the slot held)."""
        if slot in self._docs:
            self.remove(slot)
        self._grow(slot)
        self._epoch[slot] += 1
        epoch = int(self._epoch[slot])
        counts = Counter(tokens)
        length = float(sum(counts.values()))
        self._lengths[slot] = length
        self._total_length += length
        doc = array("i")
        for term, tf in counts.items():
            tid = self._vocab.get(term)
            if tid is None:
                tid = self._vocab[term] = len(self._vocab)
                self._slots.append(array("i"))
                self._tfs.append(array("i"))
                self._epochs.append(array("i"))
                self._df.append(0)
                self._stale.append(0)
            self._slots[tid].append(slot)
            self._tfs[tid].append(tf)
            self._epochs[tid].append(epoch)
            self._df[tid] += 1
            self._cache.pop(tid, None)
            doc.extend((tid, tf))
        self._docs[slot] = doc

    def remove(self, slot: int) -> None:
        doc = self._docs.pop(slot, None)
        if doc is None:
            return
        self._epoch[slot] += 1  # every posting of the slot is stale from now on
        self._total_length -= float(self._lengths[slot])
        self._lengths[slot] = 0.0
        for tid in doc[::2]:
            self._df[tid] -= 1
            self._stale[tid] += 1
            self._cache.pop(tid, None)
            if self._stale[tid] > self._df[tid]:
                self._compact(tid)

    def _compact(self, tid: int) -> None:
        """Drop a term's stale postings for good (a write: the caller holds the index)."""
        slots = np.frombuffer(self._slots[tid], dtype=np.int32)
        epochs = np.frombuffer(self._epochs[tid], dtype=np.int32)
        keep = np.flatnonzero(epochs == self._epoch[slots])
        tfs = np.frombuffer(self._tfs[tid], dtype=np.int32)
        self._slots[tid] = array("i", slots[keep].tobytes())
        self._tfs[tid] = array("i", tfs[keep].tobytes())
        self._epochs[tid] = array("i", epochs[keep].tobytes())
        self._stale[tid] = 0

    def _arrays(self, tid: int) -> tuple[NDArray[np.int32], NDArray[np.float32]]:
        """A term's live postings as (slots, term frequencies); computed without changing
        the postings, and cached until a write touches the term."""
        cached = self._cache.get(tid)
        if cached is not None:
            return cached
        slots = np.frombuffer(self._slots[tid], dtype=np.int32)
        epochs = np.frombuffer(self._epochs[tid], dtype=np.int32)
        tfs = np.frombuffer(self._tfs[tid], dtype=np.int32)
        live = np.flatnonzero(epochs == self._epoch[slots])
        result = (slots[live].copy(), tfs[live].astype(np.float32))
        self._cache[tid] = result
        return result

    def idf(self, term: str) -> float:
        tid = self._vocab.get(term)
        df = self._df[tid] if tid is not None else 0
        n = self.size
        return float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))

    def scores(
        self, query_terms: Iterable[str] | Mapping[str, float], capacity: int
    ) -> NDArray[np.float32]:
        """BM25 scores for every slot below ``capacity`` (0 where nothing matches).

        ``query_terms`` is a list of terms (each distinct term counted once) or a mapping of
        term to weight.
        """
        out = np.zeros(capacity, dtype=np.float32)
        if not self._docs:
            return out
        weights = (
            dict(query_terms)
            if isinstance(query_terms, Mapping)
            else dict.fromkeys(query_terms, 1.0)
        )
        average = self._total_length / self.size or 1.0
        for term, weight in weights.items():
            tid = self._vocab.get(term)
            if tid is None or self._df[tid] <= 0:
                continue
            slots, tfs = self._arrays(tid)
            norm = self.k1 * (1.0 - self.b + self.b * self._lengths[slots] / average)
            out[slots] += (weight * self.idf(term)) * tfs * (self.k1 + 1.0) / (tfs + norm)
        return out
