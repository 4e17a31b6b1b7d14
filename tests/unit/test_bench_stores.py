"""`bench stores`: the same turns through each record store, side by side."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.bench.stores import run_stores_bench
from memstrata.cli import main
from memstrata.errors import InvalidInputError
from memstrata.settings import load_settings
from tests.contract.backends import fresh_url, servers_given

MINI = Path(__file__).parents[1] / "fixtures" / "locomo_mini.json"


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A fresh database on each test server named by the environment (none when unset, but
    under CI, where a missing one fails): never the server's own database, which other runs on
    the same server may be using."""
    with ExitStack() as stack:
        yield {
            backend: stack.enter_context(fresh_url(backend, tmp_path))
            for backend in servers_given()
        }


def test_each_store_is_measured_on_the_same_turns_and_left_as_found(
    tmp_path: Path, servers: dict[str, str]
) -> None:
    store = tmp_path / "kept.db"
    stores: list[tuple[str, str | None]] = [
        ("sqlite-temp", None),
        ("sqlite-file", f"sqlite:///{store}"),
        *servers.items(),
    ]
    result = run_stores_bench(MINI, "locomo", stores, queries=2, writes=3)
    assert result["turns"] > 0 and result["queries"] == 2 and result["writes"] == 3
    rows = result["stores"]
    assert isinstance(rows, list)
    assert [r["store"] for r in rows] == [name for name, _ in stores]  # type: ignore[index]
    for row in rows:
        assert isinstance(row, dict)
        for field in (
            "ingest_turns_per_s",
            "search_p50_ms",
            "search_p95_ms",
            "writes_per_s",
            "write_then_search_p50_ms",
        ):
            assert isinstance(row[field], float) and row[field] > 0, (row["store"], field)
        assert row["search_p50_ms"] <= row["search_p95_ms"]  # type: ignore[operator]
    # the bench's user is forgotten: each store it wrote to holds no memory
    for i, url in enumerate([f"sqlite:///{store}", *servers.values()]):
        with Memory.open(
            settings=load_settings(data_dir=tmp_path / f"check{i}", trace=False, load_sample=False),
            store_url=url,
        ) as memory:
            assert memory.store.users() == [], url


def test_the_cli_prints_a_row_per_store_and_refuses_a_bad_store(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "stores", "--data", str(MINI), "--queries", "3", "--writes", "2"]) == 0
    out = capsys.readouterr().out
    assert "sqlite" in out and "ingest/s" in out
    code = main(["bench", "stores", "--data", str(MINI), "--store", "no-url-here", "--json"])
    assert code != 0
    assert "NAME=URL" in capsys.readouterr().err


def test_json_output_and_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["bench", "stores", "--data", str(MINI), "--queries", "2", "--writes", "1", "--json"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert [r["store"] for r in result["stores"]] == ["sqlite"]
    with pytest.raises(InvalidInputError):
        run_stores_bench(MINI, "locomo", [], queries=1, writes=1)
