"""``memstrata bench handed`` end to end on the test conversation: the JSON's shape, and the
figures that follow from the file whatever the curation serves."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memstrata.bench.handed_lines import holds, served_lines
from memstrata.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MINI = FIXTURES / "handed_mini.json"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    argv = ["bench", "handed", "--data", str(MINI), "--embedder", "hashing", *args]
    assert main([*argv, "--json"]) == 0
    result: dict[str, Any] = json.loads(capsys.readouterr().out)
    return result


def test_the_json_lists_every_item_with_what_was_found(
    capsys: pytest.CaptureFixture[str],
) -> None:
    result = _run(capsys, "--budget", "300", "--context-budget", "400")
    assert result["benchmark"] == "handed" and result["sets"] == []
    assert result["embedder"].startswith("hashing") and result["llm"] is None
    assert (result["budget"], result["context_budget"], result["small_budget"]) == (300, 400, 160)
    assert result["locomo"] == {"skipped": "no --locomo FILE given"}
    assert "was" in result["past_markers"] and "以前" in result["past_markers"]
    [conv] = result["conversations"]
    assert (conv["id"], conv["sessions"], conv["turns"]) == ("mini-ana", 2, 7)
    wake = conv["wake_up"]
    totals = result["totals"]["wake_up"]
    for key, total in (
        ("current_total", 3),
        ("stale_total", 2),
        ("safety_total", 1),
        ("trivia_total", 1),
        ("events_total", 1),
        ("slots_total", 1),
    ):
        assert wake["counts"][key] == totals[key] == total
    assert [i["id"] for i in wake["current"]] == ["city", "drink", "never-said"]
    never = wake["current"][2]
    assert never == {
        "id": "never-said",
        "note": "a term no turn holds: never served",
        "found": False,
        "lines": [],
    }
    # what the JSON says was found is in the served text, line by line
    lines = served_lines(wake["text"])
    assert wake["lines"] == len(lines) and wake["tokens"] <= 300
    for item in wake["current"] + wake["stale"] + wake["safety"] + wake["trivia"]:
        assert item["found"] == bool(item["lines"])
        assert all(line in lines for line in item["lines"])
    assert wake["counts"]["current"] == sum(i["found"] for i in wake["current"])
    assert wake["counts"]["cut_lines"] == len(wake["cut_lines"])
    context = conv["context"]
    assert [q["kind"] for q in context["items"]] == ["safety", "stale-check", "event"]
    assert "safety_items_in" in context["items"][0]
    kyoto = context["items"][2]
    assert not kyoto["answer_found"] and kyoto["answer_lines"] == []
    for q in context["items"]:
        assert all(holds((("Lyon",), ("penicillin",), ("青霉素",)), x) for x in q["answer_lines"])
    assert result["totals"]["context"]["questions"] == 3
    assert result["totals"]["context"]["safety_questions"] == 1


def test_the_table_and_the_texts_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["bench", "handed", "--data", str(MINI), "--embedder", "hashing", "--show"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "mini-ana: " in err  # progress, with the time it took
    assert "=== mini-ana: wake_up" in out and "--- mini-ana: wake_up at 160 tokens" in out
    assert "context for 'What is Ana allergic to?'" in out
    table = out.split("bench handed: 1 conversations", 1)[1]
    assert "embedder: hashing" in table
    assert any(line.startswith("mini-ana") for line in table.splitlines())
    assert any(line.startswith("total") for line in table.splitlines())
    assert "LoCoMo figures skipped: no --locomo FILE given" in table


def test_locomo_figures_by_the_existing_measures(capsys: pytest.CaptureFixture[str]) -> None:
    result = _run(capsys, "--locomo", str(FIXTURES / "locomo_mini.json"))
    locomo = result["locomo"]
    samples = json.loads((FIXTURES / "locomo_mini.json").read_text(encoding="utf-8"))
    assert locomo["wake_up_quality"]["budget"] == 800
    assert set(locomo["wake_up_quality"]["shares"]) >= {"dangling", "question", "any"}
    slots = locomo["profile_slots"]
    assert len(slots["per_speaker"]) == 2 * len(samples)  # the two main speakers of each
    counts = [s["slots"] for s in slots["per_speaker"]]
    assert slots["min"] == min(counts) and slots["mean"] == round(sum(counts) / len(counts), 2)


def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["bench", "handed", "--data", str(MINI), "--set", "dev"]) == 2
    assert "give --set or --data, not both" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text(MINI.read_text(encoding="utf-8").replace('"now"', '"later"'), "utf-8")
    assert main(["bench", "handed", "--data", str(bad), "--embedder", "hashing"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing key 'now'" in err
