"""An incremental BM25 index over integer slots.

Postings are kept per term as Python lists (cheap appends) and turned into numpy arrays the
first time a term is scored after a change, so a query costs a few vector operations per query
term. Removal marks a slot dead and corrects the document frequencies; dead postings are dropped
when their term is next materialised.

Scoring is Okapi BM25 with Lucene's idf, ``log(1 + (N - df + 0.5) / (df + 0.5))``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

import numpy as np
from numpy.typing import NDArray


class _Postings:
    __slots__ = ("array_slots", "array_tfs", "dirty", "slots", "tfs")

    def __init__(self) -> None:
        self.slots: list[int] = []
        self.tfs: list[int] = []
        self.array_slots: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.array_tfs: NDArray[np.float32] = np.zeros(0, dtype=np.float32)
        self.dirty = False


class BM25Index:
    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._postings: dict[str, _Postings] = {}
        self._df: Counter[str] = Counter()
        self._terms: dict[int, dict[str, int]] = {}
        self._lengths = np.zeros(1024, dtype=np.float32)
        self._total_length = 0.0

    @property
    def size(self) -> int:
        """Number of live documents."""
        return len(self._terms)

    def __contains__(self, slot: int) -> bool:
        return slot in self._terms

    def add(self, slot: int, tokens: Iterable[str]) -> None:
        """Index ``tokens`` under ``slot`` (replacing what the slot held)."""
        if slot in self._terms:
            self.remove(slot)
        counts = Counter(tokens)
        if slot >= len(self._lengths):
            grown = np.zeros(max(slot + 1, 2 * len(self._lengths)), dtype=np.float32)
            grown[: len(self._lengths)] = self._lengths
            self._lengths = grown
        length = float(sum(counts.values()))
        self._lengths[slot] = length
        self._total_length += length
        self._terms[slot] = dict(counts)
        for term, tf in counts.items():
            postings = self._postings.get(term)
            if postings is None:
                postings = self._postings[term] = _Postings()
            postings.slots.append(slot)
            postings.tfs.append(tf)
            postings.dirty = True
            self._df[term] += 1

    def remove(self, slot: int) -> None:
        terms = self._terms.pop(slot, None)
        if terms is None:
            return
        self._total_length -= float(self._lengths[slot])
        self._lengths[slot] = 0.0
        for term in terms:
            self._df[term] -= 1
            if self._df[term] <= 0:
                del self._df[term]
                del self._postings[term]
            else:
                self._postings[term].dirty = True

    def _arrays(self, term: str) -> tuple[NDArray[np.int64], NDArray[np.float32]] | None:
        postings = self._postings.get(term)
        if postings is None:
            return None
        if postings.dirty:
            latest = dict(zip(postings.slots, postings.tfs, strict=True))  # re-added slots
            live = [(s, tf) for s, tf in latest.items() if self._terms.get(s, {}).get(term) == tf]
            postings.slots = [s for s, _ in live]
            postings.tfs = [tf for _, tf in live]
            postings.array_slots = np.asarray(postings.slots, dtype=np.int64)
            postings.array_tfs = np.asarray(postings.tfs, dtype=np.float32)
            postings.dirty = False
        return postings.array_slots, postings.array_tfs

    def idf(self, term: str) -> float:
        n = self.size
        df = self._df.get(term, 0)
        return float(np.log(1.0 + (n - df + 0.5) / (df + 0.5)))

    def scores(
        self, query_terms: Iterable[str] | Mapping[str, float], capacity: int
    ) -> NDArray[np.float32]:
        """BM25 scores for every slot below ``capacity`` (0 where nothing matches).

        ``query_terms`` is a list of terms (each distinct term counted once) or a mapping of
        term to weight.
        """
        out = np.zeros(capacity, dtype=np.float32)
        if not self._terms:
            return out
        weights = (
            dict(query_terms)
            if isinstance(query_terms, Mapping)
            else dict.fromkeys(query_terms, 1.0)
        )
        average = self._total_length / self.size or 1.0
        lengths = self._lengths
        for term, weight in weights.items():
            arrays = self._arrays(term)
            if arrays is None:
                continue
            slots, tfs = arrays
            norm = self.k1 * (1.0 - self.b + self.b * lengths[slots] / average)
            out[slots] += (weight * self.idf(term)) * tfs * (self.k1 + 1.0) / (tfs + norm)
        return out
