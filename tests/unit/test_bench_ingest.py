"""The ingest benchmark reports medians over fresh memories."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.bench.ingest import run_ingest_bench
from memstrata.errors import InvalidInputError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def test_ingest_bench_on_a_fixture() -> None:
    result = run_ingest_bench(FIXTURES / "locomo_mini.json", "locomo", runs=3)
    assert result["turns"] == 4 and result["runs"] == 3
    each = result["turns_per_s_each_run"]
    assert isinstance(each, list) and len(each) == 3
    assert sorted(each)[1] == result["ingest_turns_per_s"]  # the median of three


def test_ingest_bench_needs_a_run() -> None:
    with pytest.raises(InvalidInputError):
        run_ingest_bench(FIXTURES / "locomo_mini.json", "locomo", runs=0)
