"""The metric definitions, on hand-made rankings whose answers are worked out by hand."""

from __future__ import annotations

import pytest

from memstrata.bench.metrics import (
    all_at,
    any_at,
    parse_locomo_evidence,
    percentile,
    recall_at,
    session_of,
)
from memstrata.errors import InvalidInputError


def test_fractional_recall() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    assert recall_at(ranked, {"a", "b", "c", "d"}, 1) == 0.25
    assert recall_at(ranked, {"a", "b", "c", "d"}, 3) == 0.5
    assert recall_at(ranked, {"a", "b", "c", "d"}, 10) == 0.75
    assert recall_at(ranked, {"z"}, 5) == 0.0


def test_duplicates_in_a_ranking_take_one_place() -> None:
    # sessions repeat when turns are mapped to them: the top 2 distinct are s1, s2
    assert recall_at(["s1", "s1", "s1", "s2", "s3"], {"s3"}, 2) == 0.0
    assert recall_at(["s1", "s1", "s1", "s2", "s3"], {"s3"}, 3) == 1.0


def test_strict_and_any() -> None:
    ranked = ["a", "x", "b"]
    assert all_at(ranked, {"a", "b"}, 2) == 0.0 and all_at(ranked, {"a", "b"}, 3) == 1.0
    assert any_at(ranked, {"b", "q"}, 2) == 0.0 and any_at(ranked, {"b", "q"}, 3) == 1.0


def test_empty_gold_is_an_error() -> None:
    with pytest.raises(InvalidInputError, match="gold"):
        recall_at(["a"], set(), 5)


def test_locomo_evidence_parsing() -> None:
    ev = parse_locomo_evidence(["D8:6; D9:17", "D", "D:11:26", "D1:3", "D1:3"])
    assert ev.turns == ["D8:6", "D9:17", "D1:3"]
    assert ev.malformed == ["D", "D:11:26"]
    assert ev.sessions == ["1", "8", "9"]
    assert session_of("D12:4") == "12"


def test_percentile() -> None:
    assert percentile([5.0, 1.0, 3.0], 50) == 3.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 95) == pytest.approx(4.8)
