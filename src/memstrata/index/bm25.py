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

:meth:`BM25Index.to_arrays` gives the live postings as flat numpy arrays (terms no live
document has are left out) and :meth:`BM25Index.from_arrays` takes them back for
:mod:`memstrata.index.snapshot`. A loaded index reads its postings from those arrays, and
copies a term's (or a document's) into its own ``array`` columns only when a write touches it:
making 100,000s of small arrays on load would take most of a second.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any, cast

import numpy as np
from numpy.typing import NDArray

from memstrata.errors import InvalidInputError, SnapshotError

#: per term: its string, its place in the vocabulary and its three posting columns (objects)
_TERM_BYTES = 600


class _Loaded:
    """Postings and documents as loaded from arrays (read-only; writes copy out of them)."""

    def __init__(self, arrays: Mapping[str, NDArray[Any]]) -> None:
        self.offsets: list[int] = arrays["postings.offsets"].tolist()
        self.slots = np.asarray(arrays["postings.slots"], dtype=np.int32)
        self.tfs = np.asarray(arrays["postings.tfs"], dtype=np.int32)
        self.epochs = np.asarray(arrays["postings.epochs"], dtype=np.int32)
        self.doc_offsets: NDArray[np.int64] = arrays["docs.offsets"]
        self.docs = np.asarray(arrays["docs.pairs"], dtype=np.int32)
        #: the slots whose document is still the loaded one
        self.has_doc = np.asarray(arrays["docs.present"], dtype=bool).copy()
        self.count = int(self.has_doc.sum())

    def doc(self, slot: int) -> array[int]:
        start, end = int(self.doc_offsets[slot]), int(self.doc_offsets[slot + 1])
        return array("i", self.docs[start:end].tobytes())


class BM25Index:
    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1 = k1
        self.b = b
        self._vocab: dict[str, int] = {}
        #: per term: its postings (None: still those loaded, in ``_loaded``)
        self._slots: list[array[int] | None] = []
        self._tfs: list[array[int] | None] = []
        self._epochs: list[array[int] | None] = []
        self._loaded: _Loaded | None = None
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
        return len(self._docs) + (self._loaded.count if self._loaded is not None else 0)

    @property
    def vocabulary(self) -> int:
        return len(self._vocab)

    @property
    def nbytes(self) -> int:
        """An estimate of the memory the index holds, from its counts: per posting (live or
        stale) its three columns and its pair in its document, the arrays loaded from a
        snapshot, the postings cached for scoring, the per-slot columns, and per term its
        entry in the vocabulary. Safe beside a writer: it reads copies of the growing
        columns (a view would keep a writer from growing them) and of the cache's values."""
        df = np.frombuffer(self._df.tobytes(), dtype=np.int32)
        stale = np.frombuffer(self._stale.tobytes(), dtype=np.int32)
        postings = int(df.sum(dtype=np.int64)) + int(stale.sum(dtype=np.int64))
        loaded = self._loaded
        mapped = 0
        if loaded is not None:
            arrays = (loaded.slots, loaded.tfs, loaded.epochs, loaded.docs, loaded.doc_offsets)
            mapped = sum(int(a.nbytes) for a in arrays) + 8 * len(loaded.offsets)
        cached = sum(s.nbytes + t.nbytes for s, t in list(self._cache.values()))
        columns = self._epoch.nbytes + self._lengths.nbytes
        return 20 * postings + mapped + int(cached) + columns + _TERM_BYTES * len(self._vocab)

    @property
    def cached_terms(self) -> int:
        """How many terms' postings are cached for scoring (the cache grows with searches)."""
        return len(self._cache)

    def __contains__(self, slot: int) -> bool:
        return slot in self._docs or self._loaded_doc(slot)

    def _loaded_doc(self, slot: int) -> bool:
        loaded = self._loaded
        return loaded is not None and slot < len(loaded.has_doc) and bool(loaded.has_doc[slot])

    def _pop_doc(self, slot: int) -> array[int] | None:
        doc = self._docs.pop(slot, None)
        if doc is None and self._loaded_doc(slot):
            assert self._loaded is not None
            doc = self._loaded.doc(slot)
            self._loaded.has_doc[slot] = False
            self._loaded.count -= 1
        return doc

    def _own(self, tid: int) -> tuple[array[int], array[int], array[int]]:
        """A term's postings as its own columns (copied out of the loaded arrays first)."""
        slots, tfs, epochs = self._slots[tid], self._tfs[tid], self._epochs[tid]
        if slots is None or tfs is None or epochs is None:
            s, t, e = self._columns(tid)
            slots, tfs, epochs = (
                array("i", s.tobytes()),
                array("i", t.tobytes()),
                array("i", e.tobytes()),
            )
            self._slots[tid], self._tfs[tid], self._epochs[tid] = slots, tfs, epochs
        return slots, tfs, epochs

    def _columns(self, tid: int) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]]:
        """A term's postings (slots, term frequencies, epochs), live or stale, read-only."""
        slots, tfs, epochs = self._slots[tid], self._tfs[tid], self._epochs[tid]
        if slots is None or tfs is None or epochs is None:
            loaded = self._loaded
            assert loaded is not None
            start, end = loaded.offsets[tid], loaded.offsets[tid + 1]
            return loaded.slots[start:end], loaded.tfs[start:end], loaded.epochs[start:end]
        return (
            np.frombuffer(slots, dtype=np.int32),
            np.frombuffer(tfs, dtype=np.int32),
            np.frombuffer(epochs, dtype=np.int32),
        )

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
        if slot in self:
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
            tid = self._term_id(term)
            slots, tfs, epochs = self._own(tid)
            slots.append(slot)
            tfs.append(tf)
            epochs.append(epoch)
            self._df[tid] += 1
            self._cache.pop(tid, None)
            doc.extend((tid, tf))
        self._docs[slot] = doc

    def add_many(self, slots: Sequence[int], documents: Sequence[Iterable[str]]) -> None:
        """Index many documents: the same index as :meth:`add` of each in turn (a slot given
        twice keeps its last document), with each term's postings appended in one step."""
        if len(slots) != len(documents):
            raise InvalidInputError("add_many needs one document per slot")
        latest = dict(zip(slots, documents, strict=True))
        if not latest:
            return
        for slot in latest:
            if slot in self:
                self.remove(slot)
        order = np.fromiter(latest, dtype=np.int64, count=len(latest))
        self._grow(int(order.max()))
        self._epoch[order] += 1
        vocab = self._vocab
        tids: list[int] = []
        tfs: list[int] = []
        sizes = np.zeros(len(order), dtype=np.int64)
        lengths = np.zeros(len(order), dtype=np.float32)
        for i, tokens in enumerate(latest.values()):
            counts = Counter(tokens)
            ids = [vocab.get(term) for term in counts]
            if None in ids:
                ids = [self._term_id(term) for term in counts]
            tids.extend(cast(list[int], ids))
            tfs.extend(counts.values())
            sizes[i] = len(counts)
            lengths[i] = sum(counts.values())
        self._lengths[order] = lengths
        self._total_length += float(lengths.sum(dtype=np.float64))
        term = np.asarray(tids, dtype=np.int32)
        tf = np.asarray(tfs, dtype=np.int32)
        owner = np.repeat(order.astype(np.int32), sizes)
        epoch = self._epoch[owner]
        interleaved = np.empty(2 * len(term), dtype=np.int32)
        interleaved[0::2], interleaved[1::2] = term, tf
        ends = 2 * np.cumsum(sizes)
        starts = (ends - 2 * sizes).tolist()
        for s, start, end in zip(order.tolist(), starts, ends.tolist(), strict=True):
            self._docs[s] = array("i", interleaved[start:end].tobytes())
        if not len(term):
            return
        by_term = np.argsort(term, kind="stable")
        term, tf, owner, epoch = term[by_term], tf[by_term], owner[by_term], epoch[by_term]
        bounds = np.flatnonzero(np.r_[True, term[1:] != term[:-1], True])
        for start, end in pairwise(bounds.tolist()):
            tid = int(term[start])
            slots_of, tfs_of, epochs_of = self._own(tid)
            slots_of.frombytes(owner[start:end].tobytes())
            tfs_of.frombytes(tf[start:end].tobytes())
            epochs_of.frombytes(epoch[start:end].tobytes())
            self._df[tid] += end - start
            self._cache.pop(tid, None)

    def _term_id(self, term: str) -> int:
        tid = self._vocab.get(term)
        if tid is None:
            tid = self._vocab[term] = len(self._vocab)
            self._slots.append(array("i"))
            self._tfs.append(array("i"))
            self._epochs.append(array("i"))
            self._df.append(0)
            self._stale.append(0)
        return tid

    def remove(self, slot: int) -> None:
        doc = self._pop_doc(slot)
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
        slots, tfs, epochs = self._columns(tid)
        keep = np.flatnonzero(epochs == self._epoch[slots])
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
        slots, tfs = self._live(tid)
        result = (slots, tfs.astype(np.float32))
        self._cache[tid] = result
        return result

    def _live(self, tid: int) -> tuple[NDArray[np.int32], NDArray[np.int32]]:
        """A term's live postings (slots, term frequencies), new arrays."""
        slots, tfs, epochs = self._columns(tid)
        live = np.flatnonzero(epochs == self._epoch[slots])
        return slots[live], tfs[live]

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
        if not self.size:
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

    def score_tokens(
        self, tokens: Iterable[str], query_terms: Iterable[str] | Mapping[str, float]
    ) -> float:
        """The BM25 score a document of ``tokens`` would have if it were added: the index's
        idf and average length as they are (the document itself not counted in them)."""
        if not self.size:
            return 0.0
        counts = Counter(tokens)
        length = sum(counts.values())
        weights = (
            dict(query_terms)
            if isinstance(query_terms, Mapping)
            else dict.fromkeys(query_terms, 1.0)
        )
        average = self._total_length / self.size or 1.0
        norm = self.k1 * (1.0 - self.b + self.b * length / average)
        return float(
            sum(
                weight * self.idf(term) * tf * (self.k1 + 1.0) / (tf + norm)
                for term, weight in weights.items()
                if (tf := counts.get(term, 0))
            )
        )

    # persistence --------------------------------------------------------------------
    def _doc_pairs(self, slot: int) -> NDArray[np.int32]:
        doc = self._docs.get(slot)
        if doc is not None:
            return np.frombuffer(doc, dtype=np.int32)
        loaded = self._loaded
        assert loaded is not None
        start, end = int(loaded.doc_offsets[slot]), int(loaded.doc_offsets[slot + 1])
        return loaded.docs[start:end]

    def to_arrays(self, capacity: int) -> tuple[dict[str, NDArray[Any]], list[str]]:
        """The index as flat arrays (live postings only, terms renumbered densely; documents
        and per-slot columns up to ``capacity``) and its terms in their new order: a term no
        live document has is left out, so nothing of a removed document stays."""
        old = np.flatnonzero(np.frombuffer(self._df, dtype=np.int32) > 0)
        renumber = np.full(len(self._vocab), -1, dtype=np.int32)
        renumber[old] = np.arange(len(old), dtype=np.int32)
        terms_by_id = list(self._vocab)
        pieces = [self._live(int(t)) for t in old]
        epochs_of = [self._epoch[p[0]] for p in pieces]
        counts = np.array([len(p[0]) for p in pieces], dtype=np.int64)
        offsets = np.zeros(len(old) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])

        def flat(parts: Sequence[NDArray[Any]], dtype: type[np.generic]) -> NDArray[Any]:
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)

        present = np.zeros(capacity, dtype=bool)
        doc_counts = np.zeros(capacity, dtype=np.int64)
        doc_parts: list[NDArray[np.int32]] = []
        for slot in range(min(capacity, len(self._epoch))):
            if slot not in self:
                continue
            pairs = self._doc_pairs(slot).reshape(-1, 2).copy()
            pairs[:, 0] = renumber[pairs[:, 0]]
            present[slot] = True
            doc_counts[slot] = pairs.size
            doc_parts.append(pairs.ravel())
        doc_offsets = np.zeros(capacity + 1, dtype=np.int64)
        np.cumsum(doc_counts, out=doc_offsets[1:])
        n = min(capacity, len(self._epoch))
        epoch = np.zeros(capacity, dtype=np.int32)
        epoch[:n] = self._epoch[:n]
        lengths = np.zeros(capacity, dtype=np.float32)
        lengths[:n] = self._lengths[:n]
        arrays: dict[str, NDArray[Any]] = {
            "postings.offsets": offsets,
            "postings.slots": flat([p[0] for p in pieces], np.int32),
            "postings.tfs": flat([p[1] for p in pieces], np.int32),
            "postings.epochs": flat(epochs_of, np.int32),
            "docs.offsets": doc_offsets,
            "docs.pairs": flat(doc_parts, np.int32),
            "docs.present": present,
            "epoch": epoch,
            "lengths": lengths,
            "total_length": np.array([self._total_length], dtype=np.float64),
        }
        return arrays, [terms_by_id[int(t)] for t in old]

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, NDArray[Any]], terms: Sequence[str], *, k1: float, b: float
    ) -> BM25Index:
        """An index from :meth:`to_arrays`' output; its postings stay in those arrays until
        a write touches them."""
        index = cls(k1=k1, b=b)
        loaded = _Loaded(arrays)
        size = len(loaded.has_doc)
        if (
            len(loaded.offsets) != len(terms) + 1
            or loaded.offsets[-1] != len(loaded.slots)
            or not len(loaded.slots) == len(loaded.tfs) == len(loaded.epochs)
            or len(loaded.doc_offsets) != size + 1
            or int(loaded.doc_offsets[-1]) != len(loaded.docs)
            or len(arrays["epoch"]) != size
            or (len(loaded.slots) and int(loaded.slots.max()) >= size)
        ):
            raise SnapshotError("the lexical index's arrays do not fit together")
        index._loaded = loaded
        index._vocab = {term: tid for tid, term in enumerate(terms)}
        if len(index._vocab) != len(terms):
            raise SnapshotError("the lexical index names a term twice")
        index._slots = [None] * len(terms)
        index._tfs = [None] * len(terms)
        index._epochs = [None] * len(terms)
        index._df = array("i", np.diff(np.asarray(loaded.offsets)).astype(np.int32).tobytes())
        index._stale = array("i", bytes(4 * len(terms)))
        index._epoch = np.array(arrays["epoch"], dtype=np.int32)
        index._lengths = np.array(arrays["lengths"], dtype=np.float32)
        index._total_length = float(arrays["total_length"][0])
        if len(index._epoch) == 0:
            index._epoch = np.zeros(1024, dtype=np.int32)
            index._lengths = np.zeros(1024, dtype=np.float32)
        return index
