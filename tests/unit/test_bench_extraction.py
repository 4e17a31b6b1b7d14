"""The extraction bench: strict and lenient scores against gold observations, and the share of
flawed facts among those extracted and those wake_up serves."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.bench.extraction import match_tokens, near_turns, run_extraction, token_f1
from memstrata.bench.fact_quality import served_bullets, subject_of
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.model import Candidate, Category, Episode, Extraction

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"


def test_strict_and_lenient_scores_on_the_mini_fixture(memory: Memory) -> None:
    result = run_extraction(RuleExtractor(), MINI, sample=2, memory=memory)
    # facts: "Ana started pottery classes last week." matches its observation; "Ben went
    # hiking in Yangshuo." rests on D1:2 like Ben's observation but says something else
    assert (result["facts"], result["observations"]) == (2, 3)
    assert result["observation_recall"] == round(2 / 3, 4)
    assert result["strict_precision"] == 0.5
    assert result["strict_recall"] == round(1 / 3, 4)
    assert result["strict_f1"] == 0.4
    quality: Any = result["fact_quality"]
    assert quality["count"] == 2 and quality["shares"]["any"] == 0.0
    served: Any = result["wake_up_quality"]
    assert served["budget"] == 800 and served["count"] >= 2
    assert served["shares"]["any"] == 0.0
    assert len(result["sample"]) == 2  # type: ignore[arg-type]


def _with_turns(tmp_path: Path, turns: list[dict[str, str]], ana: list[list[str]]) -> Path:
    data = json.loads(MINI.read_text())
    data[0]["conversation"]["session_1"].extend(turns)
    data[0]["observation"]["session_1_observation"]["Ana"].extend(ana)
    path = tmp_path / "conv.json"
    path.write_text(json.dumps(data))
    return path


def test_a_fact_matches_an_observation_of_its_speaker_from_an_adjacent_turn(
    tmp_path: Path,
) -> None:
    path = _with_turns(
        tmp_path,
        [
            {"speaker": "Ana", "dia_id": "D1:3", "text": "I adopted a puppy named Max."},
            {"speaker": "Ben", "dia_id": "D1:4", "text": "Wow, congrats!"},
        ],
        [["Ana adopted a puppy called Max.", "D1:4"]],  # the turn after the fact's
    )
    result = run_extraction(RuleExtractor(), path, sample=0)
    assert result["facts"] == 3 and result["observations"] == 4
    assert result["strict_precision"] == round(2 / 3, 4)
    assert result["strict_recall"] == 0.5


def test_a_fact_about_another_speaker_or_a_far_turn_does_not_match(tmp_path: Path) -> None:
    path = _with_turns(
        tmp_path,
        [{"speaker": "Ana", "dia_id": "D1:3", "text": "I adopted a puppy named Max."}],
        [["Ana adopted a puppy named Max.", "D2:1"]],  # another session
    )
    data = json.loads(path.read_text())
    data[0]["observation"]["session_1_observation"]["Ben"].append(
        ["Ben adopted a puppy named Max.", "D1:3"]
    )
    path.write_text(json.dumps(data))
    result = run_extraction(RuleExtractor(), path, sample=0)
    assert result["facts"] == 3
    assert result["strict_precision"] == round(1 / 3, 4)  # only the pottery fact


class _NaiveRewrite(RuleExtractor):
    """The rule extractor plus a naive first-person rewrite of every other sentence, so that the
    bench has flawed facts to count (the rule extractor itself drops or repairs them)."""

    def extract(self, episodes: Sequence[Episode]) -> Extraction:
        found = super().extract(episodes).candidates
        cited = {s for c in found for s in c.sources}
        naive = tuple(
            Candidate(
                re.sub(r"\bI\b", e.speaker or "", e.text),
                Category.EVENT,  # served by wake_up, which leaves out a preference with no object
                0.9,
                0.7,
                (e.id,),
                e.speaker,
            )
            for e in episodes
            if e.id not in cited and e.text.startswith("I love")
        )
        return Extraction(found + naive)


def test_flawed_facts_are_counted_with_examples(tmp_path: Path, memory: Memory) -> None:
    path = _with_turns(
        tmp_path,
        [
            {
                "speaker": "Ana",
                "dia_id": "D1:3",
                "text": "I love that you chose pottery for your art.",
            },
            {"speaker": "Ana", "dia_id": "D1:4", "text": "I love it so much!"},
        ],
        [],
    )
    result = run_extraction(_NaiveRewrite(), path, sample=0, memory=memory)
    quality: Any = result["fact_quality"]
    assert quality["count"] == 4
    assert quality["shares"] == {
        "dangling": 0.25,
        "listener": 0.25,
        "question": 0.0,
        "broken_verb": 0.5,
        "any": 0.5,
    }
    assert quality["examples"]["listener"] == ["Ana love that you chose pottery for your art."]
    assert quality["examples"]["dangling"] == ["Ana love it so much!"]
    served: Any = result["wake_up_quality"]
    assert served["shares"]["broken_verb"] > 0
    assert any("you chose" in e for e in served["examples"]["listener"])


def test_tokens_are_stems_and_chinese_characters_without_the_speaker() -> None:
    assert match_tokens("Ana adopted a puppy called Max.", "Ana") == Counter(
        {"adopt": 1, "puppi": 1, "call": 1, "max": 1}
    )
    assert match_tokens("林伟喜欢爬山。", "林伟") == Counter({"喜": 1, "欢": 1, "爬": 1, "山": 1})
    assert token_f1(
        match_tokens("林伟喜欢爬山"), match_tokens("林伟很喜欢爬黄山")
    ) == pytest.approx(2 * (6 / 6) * (6 / 7) / (6 / 6 + 6 / 7))
    assert token_f1(Counter(), Counter({"a": 1})) == 0.0


def test_adjacent_turns_stay_in_their_session() -> None:
    assert near_turns("D3:7") == {"D3:6", "D3:7", "D3:8"}
    assert near_turns("D:11:26") == {"D:11:26"}


def test_bullets_of_a_memory_block_are_unescaped() -> None:
    text = "<memory>\n## Essentials\n- Ana likes R&amp;B &lt;live&gt;.\n</memory>"
    assert served_bullets(text) == ["Ana likes R&B <live>."]


def test_a_served_bullet_is_about_the_speaker_it_names_first() -> None:
    speakers = {"Caroline", "Melanie"}
    assert subject_of("Melanie is so proud of Caroline.", speakers) == "Melanie"
    assert subject_of("Clay is incredible, it brings Melanie joy!", speakers) == "Melanie"
    assert subject_of("name: Ana", speakers) is None


def test_observations_are_required(tmp_path: Path) -> None:
    from memstrata.errors import ImportFormatError

    data = json.loads(MINI.read_text())
    del data[0]["observation"]
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ImportFormatError, match="observation"):
        run_extraction(RuleExtractor(), path)


def test_the_cli_prints_a_table_or_json(capsys: pytest.CaptureFixture[str]) -> None:
    from memstrata.cli import main

    assert main(["bench", "extraction", "--data", str(MINI), "--sample", "1"]) == 0
    table = capsys.readouterr().out
    assert "strict F1                0.400" in table
    assert "lenient recall           0.667" in table
    assert "broken verb" in table and "wake_up" in table
    assert main(["bench", "extraction", "--data", str(MINI), "--budget", "400", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["strict_f1"] == 0.4 and result["wake_up_quality"]["budget"] == 400


def test_the_oracle_takes_each_evidence_turn_of_the_observations_speaker_whole(
    tmp_path: Path,
) -> None:
    base = run_extraction(RuleExtractor(), MINI, sample=0)
    before = base["oracle_whole_turns"]
    assert isinstance(before, dict)
    facts, gold = before["facts"], base["observations"]
    correct = round(before["strict_precision"] * facts)
    found = round(before["strict_recall"] * gold)
    path = _with_turns(
        tmp_path,
        [{"speaker": "Ana", "dia_id": "D1:3", "text": "I adopted a puppy named Max last week."}],
        [["Ana adopted a puppy called Max.", "D1:3"]],
    )
    data = json.loads(path.read_text())
    data[0]["observation"]["session_1_observation"]["Ben"].append(
        ["Ben has a dog.", "D1:3"]  # Ana's turn: not a turn Ben said, so no oracle fact of Ben's
    )
    path.write_text(json.dumps(data))
    after = run_extraction(RuleExtractor(), path, sample=0)["oracle_whole_turns"]
    assert isinstance(after, dict)
    assert after["facts"] == facts + 1  # Ana's turn, whole; nothing for Ben
    assert after["strict_precision"] == round((correct + 1) / (facts + 1), 4)
    assert after["strict_recall"] == round((found + 1) / (gold + 2), 4)  # Ben's unmatched
