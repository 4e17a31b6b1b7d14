"""The exact vector index, with one block or several (a blend of models)."""

from __future__ import annotations

import numpy as np
import pytest

from memstrata.errors import InvalidInputError
from memstrata.index.vectors import ExactVectorIndex


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    m = rng.standard_normal((n, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


@pytest.mark.parametrize("blocks", [None, (16, 24), (8, 8, 24)])
def test_scores_are_dot_products_whatever_the_blocks(blocks: tuple[int, ...] | None) -> None:
    rng = np.random.default_rng(7)
    vectors = unit_rows(rng, 300, 40)
    index = ExactVectorIndex(40, capacity=8, blocks=blocks)  # grows as rows arrive
    index.add(np.arange(300), vectors)
    query = unit_rows(rng, 1, 40)[0]
    assert np.allclose(index.scores(query, 310), np.r_[vectors @ query, np.zeros(10)], atol=1e-5)
    slots = np.array([3, 17, 299])
    only = index.scores(query, 300, slots)
    assert np.allclose(only[slots], vectors[slots] @ query, atol=1e-5)
    assert np.count_nonzero(only) == 3
    index.remove(17)
    assert index.size == 299 and 17 not in index and index.scores(query, 300)[17] == 0.0


def test_a_block_the_query_leaves_at_zero_adds_nothing() -> None:
    rng = np.random.default_rng(3)
    vectors = unit_rows(rng, 50, 40)
    index = ExactVectorIndex(40, blocks=(16, 24))
    index.add(np.arange(50), vectors)
    query = np.zeros(40, dtype=np.float32)
    query[:16] = unit_rows(rng, 1, 16)[0]
    assert np.allclose(index.scores(query, 50), vectors[:, :16] @ query[:16], atol=1e-5)
    assert index.nbytes == index.matrix_nbytes  # no graph below the threshold


def test_blocks_must_split_the_dimensions() -> None:
    with pytest.raises(InvalidInputError, match="do not split 40"):
        ExactVectorIndex(40, blocks=(16, 16))
    with pytest.raises(InvalidInputError, match="do not split"):
        ExactVectorIndex(16, blocks=(16, 0))


def test_the_approximate_graph_sees_whole_vectors_of_every_block() -> None:
    pytest.importorskip("usearch")
    rng = np.random.default_rng(11)
    vectors = unit_rows(rng, 400, 40)
    index = ExactVectorIndex(40, ann_threshold=200, blocks=(16, 24))
    index.add(np.arange(400), vectors)
    assert index.approximate
    target = vectors[123]
    found = index.candidates(target, 5)
    assert found is not None and 123 in found.tolist()
