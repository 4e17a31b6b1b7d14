"""The benchmark harness on hand-made fixtures: counting, skipping, the JSON it prints."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.bench.locomo import run_locomo
from memstrata.bench.longmemeval import run_longmemeval
from memstrata.bench.madial import run_madial
from memstrata.bench.runner import bench_memory
from memstrata.cli import main
from memstrata.embed.fake import HashingEmbedder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _conversation(n: int) -> list[dict[str, str]]:
    topics = [
        "pottery",
        "hiking",
        "chess",
        "violin",
        "sailing",
        "baking",
        "cycling",
        "poetry",
        "karate",
        "gardening",
        "astronomy",
        "fishing",
    ]
    return [
        {
            "speaker": "Ana" if i % 2 == 0 else "Ben",
            "dia_id": f"D{1 + i // 6}:{1 + i % 6}",
            "text": f"I spent the weekend on {topics[i]} with friends.",
        }
        for i in range(n)
    ]


def _locomo_file(tmp_path: Path) -> Path:
    turns = _conversation(12)
    data = [
        {
            "sample_id": "conv-x",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": turns[:6],
                "session_2_date_time": "2:00 pm on 9 May, 2023",
                "session_2": turns[6:],
            },
            "qa": [
                {
                    "question": "Who did astronomy?",
                    "answer": "Ana",
                    "evidence": ["D2:5"],
                    "category": 4,
                },
                {
                    "question": "What about violin and karate?",
                    "answer": "x",
                    "evidence": ["D1:4; D2:3", "D:11:26", "D9:9"],
                    "category": 1,
                },
                {
                    "question": "Unanswerable",
                    "adversarial_answer": "n",
                    "evidence": [],
                    "category": 5,
                },
            ],
        }
    ]
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps(data))
    return path


def test_locomo_counts_and_scores(tmp_path: Path) -> None:
    path = _locomo_file(tmp_path)
    with bench_memory(embedder=HashingEmbedder(dim=64)) as memory:
        result = run_locomo(memory, path)
    assert (result["questions"], result["questions_total"], result["questions_skipped"]) == (
        2,
        3,
        1,
    )
    assert (result["evidence_malformed"], result["evidence_dangling"]) == (1, 1)
    turn, session = result["turn"], result["session"]
    assert isinstance(turn, dict) and isinstance(session, dict)
    assert turn["R@10"] == 1.0 and session["R@5"] == 1.0  # distinct words: lexical finds them
    assert set(turn) == {"R@5", "R@10", "all@5", "all@10"}
    assert result["turns"] == 12 and float(str(result["ingest_turns_per_s"])) > 0
    assert {"search_ms_p50", "search_ms_p95", "search_ms_excl_embedding_p50"} <= set(result)
    context = result["context"]
    assert isinstance(context, dict) and set(context) >= {"500", "1000", "2000"}
    block = context["1000"]
    assert isinstance(block, dict) and block["recall"] == 1.0  # 12 short turns all fit
    assert 0 < float(str(block["mean_tokens"])) <= 1000
    assert float(str(context["full_conversation_tokens_mean"])) > 0


def test_locomo_after_an_offline_curation(tmp_path: Path) -> None:
    path = _locomo_file(tmp_path)
    with bench_memory(embedder=HashingEmbedder(dim=64)) as memory:
        result = run_locomo(memory, path, curate=True)
        facts = memory.list("locomo-conv-x", "fact")
    curated = result["curated"]
    assert isinstance(curated, dict) and curated["facts"] == len(facts) > 0
    assert int(str(curated["bullets"])) > 0
    context = result["context"]
    assert isinstance(context, dict)
    for budget in ("500", "1000", "2000"):
        block = context[budget]
        assert isinstance(block, dict)
        assert float(str(block["recall_cited"])) >= float(str(block["recall"]))
        assert float(str(block["mean_tokens"])) <= int(budget)


def test_longmemeval_fixture() -> None:
    with bench_memory(embedder=HashingEmbedder(dim=64)) as memory:
        result = run_longmemeval(memory, FIXTURES / "longmemeval_mini.json")
    assert (result["questions"], result["questions_abstention"]) == (1, 1)
    session = result["session"]
    assert isinstance(session, dict)
    assert session["recall_any@5"] == 1.0 and session["recall_all@5"] == 1.0
    assert result["turn_questions"] == 1


def test_madial_fixture(tmp_path: Path) -> None:
    items = ["元旦晚会上做了彩纸灯笼", "去动物园看了熊猫", "学会了骑自行车", "在海边捡贝壳"]
    data = [
        {
            "sample_id": "u1",
            "sessions": [
                {
                    "session_id": f"M{i}",
                    "date": "2022-01-01",
                    "turns": [{"turn_id": f"M{i}", "speaker": "memory", "text": t}],
                }
                for i, t in enumerate(items)
            ],
            "qa": [
                {
                    "question": "Bart: 我又想去看熊猫了！",
                    "answer": "",
                    "evidence": ["M1"],
                    "category": "memory_recall",
                },
                {
                    "question": "Bart: hi",
                    "answer": "",
                    "evidence": ["M99"],
                    "category": "memory_recall",
                },
            ],
        }
    ]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with bench_memory(embedder=HashingEmbedder(dim=64)) as memory:
        result = run_madial(memory, path)
    assert (result["questions"], result["questions_skipped"]) == (1, 1)
    assert result["R@5"] == 1.0


def test_bench_cli_prints_one_json_object(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    assert (
        main(["bench", "longmemeval", "--data", str(FIXTURES / "longmemeval_mini.json"), "--json"])
        == 0
    )
    result = json.loads(capsys.readouterr().out)
    assert result["benchmark"] == "longmemeval" and result["embedder"] == "hashing:256"


def test_scale_bench_reports_each_size() -> None:
    from memstrata.bench.scale import run_scale, synthetic_turns

    turns = synthetic_turns(30)
    assert len({t.id for t in turns}) == 30
    assert any(any("\u4e00" <= c <= "\u9fff" for c in t.text) for t in turns)
    assert any(t.text.isascii() for t in turns)
    from memstrata.index.config import RankingConfig

    result = run_scale(
        HashingEmbedder(dim=32), [50, 200], queries=5, ranking=RankingConfig(ann_threshold=100)
    )
    sizes = result["sizes"]
    assert isinstance(sizes, dict) and set(sizes) == {"50", "200"}
    assert set(sizes["50"]) == {"exact"} and set(sizes["200"]) == {"exact", "approximate"}
    for row in sizes["200"].values():
        assert row["search_ms_p50"] >= row["search_ms_excl_embedding_p50"] > 0
        assert row["index_mb"] > 0


def test_wakeup_bench_on_a_small_scope() -> None:
    from memstrata.bench.wakeup import run_wakeup

    result = run_wakeup(200, calls=3)
    assert result["facts"] == 200 and result["calls"] == 3
    assert 0 < int(str(result["facts_shown"])) <= 200 and int(str(result["tokens"])) <= 800
