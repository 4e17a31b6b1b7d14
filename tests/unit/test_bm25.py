"""The incremental BM25 index equals BM25 computed from scratch, after any adds and removes."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memstrata.index.bm25 import BM25Index

TERMS = st.sampled_from(["tea", "coffee", "puppy", "茶", "山", "hike", "run"])
DOC = st.lists(TERMS, min_size=1, max_size=8)
OPS = st.lists(
    st.tuples(st.sampled_from(["add", "remove"]), st.integers(0, 9), DOC), min_size=1, max_size=40
)


def reference(
    docs: dict[int, list[str]], query: list[str], k1: float, b: float, capacity: int
) -> np.ndarray:
    out = np.zeros(capacity)
    n = len(docs)
    if not n:
        return out
    avg = sum(len(d) for d in docs.values()) / n
    for term in set(query):
        df = sum(1 for d in docs.values() if term in d)
        idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
        for slot, d in docs.items():
            tf = Counter(d)[term]
            if tf:
                out[slot] += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(d) / avg))
    return out


@settings(max_examples=150, deadline=None)
@given(ops=OPS, query=st.lists(TERMS, min_size=1, max_size=4))
def test_matches_a_from_scratch_computation(
    ops: list[tuple[str, int, list[str]]], query: list[str]
) -> None:
    index = BM25Index(k1=1.2, b=0.5)
    docs: dict[int, list[str]] = {}
    for op, slot, tokens in ops:
        if op == "add":
            index.add(slot, tokens)
            docs[slot] = tokens
        else:
            index.remove(slot)
            docs.pop(slot, None)
        index.scores(query, 10)  # materialise between operations too
    assert index.size == len(docs)
    assert np.allclose(index.scores(query, 10), reference(docs, query, 1.2, 0.5, 10), atol=1e-4)


def test_weights_scale_terms() -> None:
    index = BM25Index()
    index.add(0, ["tea", "tea", "cake"])
    index.add(1, ["coffee"])
    plain = index.scores(["tea"], 2)
    weighted = index.scores({"tea": 0.5}, 2)
    assert weighted[0] == np.float32(plain[0] * 0.5) and weighted[1] == 0.0


def test_scoring_leaves_postings_alone_and_removal_keeps_them_compact() -> None:
    """Concurrent searches read the postings, so scoring must not rewrite them; removals
    compact a term's list once its stale postings outnumber the live ones."""
    index = BM25Index()
    for slot in range(100):
        index.add(slot, ["tea", f"t{slot}"])
    for slot in range(70):
        index.remove(slot)
    tid = index._vocab["tea"]
    postings = index._slots[tid]
    assert len(postings) <= 2 * 30 + 1
    scores = index.scores(["tea"], 100)
    assert index._slots[tid] is postings  # a read replaced nothing
    assert (scores[:70] == 0).all() and (scores[70:] > 0).all()


def test_its_size_can_be_read_while_a_writer_adds_new_terms() -> None:
    """The memory bound reads an index's size without its lock; that must never keep a
    writer from growing the index (a view of a growing column did: "cannot resize an array
    that is exporting buffers")."""
    import sys
    import threading

    index = BM25Index()
    errors: list[BaseException] = []
    done = threading.Event()

    def write() -> None:
        try:
            for slot in range(3000):
                index.add(slot, [f"term{slot}", f"other{slot}", "shared"])
        except BaseException as exc:  # any failure of the writer fails the test
            errors.append(exc)
        finally:
            done.set()

    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        writer = threading.Thread(target=write)
        writer.start()
        sizes = 0
        while not done.is_set():
            sizes += index.nbytes > 0
        writer.join()
    finally:
        sys.setswitchinterval(previous)
    assert not errors, errors[0]
    assert index.size == 3000 and sizes > 0
