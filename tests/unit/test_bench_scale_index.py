"""``bench index`` (raw text to searchable), ``bench scale`` (latency, memory, build time as a
scope grows) and their plots, on tiny inputs with the hashing embedder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memstrata.bench.scale import run_scale
from memstrata.cli import main
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.fake import HashingEmbedder
from memstrata.index.config import RankingConfig

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def two_conversations(tmp_path: Path) -> Path:
    (first,) = json.loads((FIXTURES / "locomo_mini.json").read_text(encoding="utf-8"))
    second = json.loads(json.dumps(first))
    second["sample_id"] = f"{first.get('sample_id', 'conv')}-b"
    path = tmp_path / "two.json"
    path.write_text(json.dumps([first, second]), encoding="utf-8")
    return path


def _bench_index(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["bench", "index", *args, "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_index_bench_counts_turns_texts_and_models(
    two_conversations: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    both = _bench_index(["--data", str(two_conversations)], capsys)
    one = _bench_index(["--data", str(two_conversations), "--limit", "1"], capsys)
    assert (both["conversations"], one["conversations"]) == (2, 1)
    assert both["turns"] == 2 * one["turns"] > 0
    for result in (both, one):
        assert result["benchmark"] == "index" and result["embedder"] == "hashing:256"
        assert result["entries_indexed"] == result["turns"] and result["pending_after"] == 0
        assert 0 < result["lexical_index_s"] <= result["index_s"]
        # two dense views per turn; a text said twice is embedded once (a cold cache)
        assert 0 < result["texts_embedded"] <= 2 * result["turns"]
        assert result["models"]["hashing:256"]["texts"] == result["texts_embedded"]
        assert result["total_s"] == pytest.approx(result["ingest_s"] + result["index_s"], abs=2e-3)
        assert result["turns_per_s"] <= min(
            result["ingest_turns_per_s"], result["index_turns_per_s"]
        )
        assert result["peak_rss_mb"] > 0
    # the second conversation repeats the first word for word: nothing new to embed
    assert both["texts_embedded"] == one["texts_embedded"]


def test_index_bench_human_output_and_bad_limit(
    two_conversations: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    assert main(["bench", "index", "--data", str(two_conversations), "--limit", "1"]) == 0
    assert "turns searchable in" in capsys.readouterr().out
    assert main(["bench", "index", "--data", str(two_conversations), "--limit", "0"]) == 2


def _check_row(row: dict[str, Any]) -> None:
    for name in ("search_ms_excl_embedding", "search_ms"):
        p50, p95, p99 = (row[f"{name}_p{q}"] for q in (50, 95, 99))
        assert 0 < p50 <= p95 <= p99
    cpu = [row[f"search_cpu_ms_excl_embedding_p{q}"] for q in (50, 95, 99)]
    assert 0 <= cpu[0] <= cpu[1] <= cpu[2]
    for q in (50, 95, 99):  # each query's time plus its own embedding time
        assert row[f"search_ms_p{q}"] >= row[f"search_ms_excl_embedding_p{q}"]
    assert row["index_mb"] >= 0 and row["index_arrays_mb"] > 0 and row["index_build_s"] > 0


def test_scale_bench_rows_exact_then_approximate() -> None:
    blend = BlendEmbedder([HashingEmbedder(dim=16), HashingEmbedder(dim=24)], {})
    result = run_scale(blend, [200, 50], queries=7, ranking=RankingConfig(ann_threshold=100))
    assert result["queries"] == 7 and result["dense_views"] == 2
    assert result["document_vectors"] == "blend(hashing:16,hashing:24)"
    sizes = result["sizes"]
    assert isinstance(sizes, dict) and list(sizes) == ["50", "200"]  # smallest first
    assert set(sizes["50"]) == {"exact"} and set(sizes["200"]) == {"exact", "approximate"}
    for row in (sizes["50"]["exact"], *sizes["200"].values()):
        _check_row(row)
        assert "search_ms_excl_embedding_p50_all_models" in row  # a blend: dialogues too
    exact, approximate = sizes["200"]["exact"], sizes["200"]["approximate"]
    assert (
        approximate["graph_mb"] > 0 and approximate["index_arrays_mb"] == exact["index_arrays_mb"]
    )
    # times are reported, never asserted on: a graph of 200 may build in under the rounding
    assert approximate["index_build_s"] >= approximate["graph_build_s"] >= 0
    assert isinstance(result["peak_rss_mb"], float) and result["peak_rss_mb"] > 0


def _assert_pngs(paths: list[Path]) -> None:
    assert {p.name for p in paths} == {
        "scale_latency.png",
        "scale_memory.png",
        "scale_build.png",
    }
    for path in paths:
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE) and len(data) > len(PNG_SIGNATURE)


def test_scale_plots_are_png_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__DIM", "32")
    plots = tmp_path / "plots"
    args = ["bench", "scale", "--sizes", "30,60", "--queries", "3", "--plot", str(plots)]
    assert main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    _assert_pngs([Path(p) for p in result["plots"]])
    saved = tmp_path / "scale.json"
    saved.write_text(json.dumps(result), encoding="utf-8")
    again = tmp_path / "again"
    assert main(["bench", "plot", str(saved), "--out", str(again)]) == 0
    _assert_pngs([Path(line) for line in capsys.readouterr().out.split()])


def test_plot_refuses_what_is_not_a_scale_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"benchmark": "locomo"}), encoding="utf-8")
    assert main(["bench", "plot", str(other), "--out", str(tmp_path / "x")]) == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{", encoding="utf-8")
    assert main(["bench", "plot", str(broken), "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    capsys.readouterr()


def test_cold_open_bench_opens_a_saved_index_in_a_new_process(tmp_path: Path) -> None:
    from memstrata.bench.cold_open import run_cold_open

    result = run_cold_open(300, opens=2, data_dir=tmp_path / "cold")
    prepared = result["prepare"]
    assert isinstance(prepared, dict) and prepared["turns"] == 300
    assert prepared["snapshot_bytes_per_100k_turns"] > 0
    opens = result["opens"]
    assert isinstance(opens, list) and len(opens) == 2
    assert all(o["loaded_snapshot"] and o["hits"] for o in opens)  # type: ignore[index]
    assert isinstance(result["open_to_first_hits_s_p50"], float)
    assert result["peak_rss_mb_p50"] > 0  # type: ignore[operator]


def test_index_bench_keeps_the_blend_s_pooled_models(
    two_conversations: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(
        "MEMSTRATA_EMBEDDER",
        json.dumps(
            {
                "provider": "blend",
                "parts": [{"provider": "fake", "dim": 32}, {"provider": "fake", "dim": 48}],
                "pooled_context": [True, False],
            }
        ),
    )
    result = _bench_index(["--data", str(two_conversations), "--limit", "1"], capsys)
    pooled, joined = result["models"]["hashing:32"], result["models"]["hashing:48"]
    # the pooled model reads each turn alone, once; the other the turn and the joined window
    assert pooled["texts"] <= result["turns"] < joined["texts"]
