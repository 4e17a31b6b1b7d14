"""Bulk indexing gives the index that one-by-one indexing gives: BM25 postings appended per
term in one step, each text tokenized once, hashing vectors summed in one step."""

from __future__ import annotations

import hashlib
import random
import re
from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstrata.bench.scale import QUERIES, synthetic_turns
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import InvalidInputError
from memstrata.index.bm25 import BM25Index
from memstrata.index.config import RankingConfig
from memstrata.index.query import build_query
from memstrata.index.ranking import Ranker
from memstrata.index.scope_index import UserIndex
from memstrata.index.tokenize import tokenize
from memstrata.model import Granularity, Scope, SearchFilter

TERMS = st.sampled_from(["tea", "coffee", "puppy", "茶", "山", "hike", "run"])
BATCH = st.lists(st.tuples(st.integers(0, 12), st.lists(TERMS, max_size=6)), max_size=8)


@settings(max_examples=150, deadline=None)
@given(batches=st.lists(st.tuples(BATCH, st.lists(st.integers(0, 12))), min_size=1, max_size=6))
def test_add_many_equals_adding_one_by_one(
    batches: list[tuple[list[tuple[int, list[str]]], list[int]]],
) -> None:
    bulk, single = BM25Index(), BM25Index()
    for batch, removed in batches:
        bulk.add_many([s for s, _ in batch], [d for _, d in batch])
        for slot, doc in batch:
            single.add(slot, doc)
        for slot in removed:
            bulk.remove(slot)
            single.remove(slot)
        assert bulk.size == single.size
        for query in (["tea"], ["茶", "山", "run"], ["coffee", "puppy", "hike", "tea"]):
            assert np.array_equal(bulk.scores(query, 13), single.scores(query, 13))


def test_add_many_needs_one_document_per_slot() -> None:
    with pytest.raises(InvalidInputError):
        BM25Index().add_many([0, 1], [["tea"]])


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.text(max_size=30), min_size=1, max_size=4))
def test_tokens_of_lines_joined_are_the_tokens_of_each_line(parts: list[str]) -> None:
    """What lets a lexical document (a turn with its previous turns) reuse each turn's
    tokens; the turns' own texts hold no line break only by chance, so any text is tried."""
    pieces = [p for part in parts for p in part.split("\n")]
    assert tokenize("\n".join(parts)) == [t for p in pieces for t in tokenize(p)]


def _reference_vector(text: str, dim: int) -> np.ndarray:
    """The hashing embedder's vector computed feature by feature."""
    tokens = [t.lower() for t in re.findall(r"[a-z0-9]+|[\u3400-\u9fff]", text, re.I)]
    out = np.zeros(dim, dtype=np.float32)
    for feature in tokens + [a + b for a, b in pairwise(tokens)] or ["<empty>"]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        out[int.from_bytes(digest[:4], "little") % dim] += 1.0 if digest[4] & 1 else -1.0
    norm = float(np.linalg.norm(out))
    return out / norm if norm else out


def test_hashing_vectors_of_a_batch_are_those_of_each_text() -> None:
    texts = [t.text for t in synthetic_turns(60)] + ["", "Ünïcode ΣΑΣ 你好 a-b", "x " * 500]
    got = HashingEmbedder(dim=48).embed_documents(texts)
    want = np.stack([_reference_vector(t, 48) for t in texts])
    assert got.dtype == np.float32 and np.array_equal(got, want.astype(np.float32))


def _results(index: UserIndex, embedder: HashingEmbedder) -> list[list[tuple[str, float]]]:
    out = []
    for text in QUERIES:
        plan = build_query(text, embedder, index.config)
        for granularity in (Granularity.TURN, Granularity.SESSION):
            hits = Ranker(index).search(
                plan, Scope("u"), k=10, granularity=granularity, filters=SearchFilter()
            )
            out.append([(h.id, round(h.score, 5)) for h in hits])
    return out


@pytest.mark.parametrize("shuffled", [False, True])
def test_bulk_adds_search_like_one_by_one_adds(shuffled: bool) -> None:
    """One call with every turn, or one call per turn (in order, or shuffled so that later
    turns re-index earlier ones' neighbours): the same hits with the same scores."""
    embedder = HashingEmbedder(dim=64)
    config = RankingConfig(ann_threshold=None)
    turns = synthetic_turns(300, user="u")
    bulk, single = UserIndex("u", embedder, config), UserIndex("u", embedder, config)
    bulk.add_episodes(turns)
    order = list(turns)
    if shuffled:
        random.Random(3).shuffle(order)
    for turn in order:
        single.add_episodes([turn])
    assert len(bulk) == len(single) == 300
    bulk_lexical = bulk.lexical.scores(tokenize("piano lesson 钢琴课"), bulk.catalog.capacity)
    by_id = single.catalog.slots
    single_lexical = single.lexical.scores(tokenize("piano lesson 钢琴课"), 300)
    for item_id, slot in bulk.catalog.slots.items():
        assert bulk_lexical[slot] == pytest.approx(single_lexical[by_id[item_id]], abs=1e-5)
    assert _results(bulk, embedder) == _results(single, embedder)
