"""``memstrata bench qa`` against the local fake server with scripted answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.bench.qa import answer_tokens, run_qa, token_f1
from memstrata.cli import main
from memstrata.llm.fake import ByPrompt, Reply, fake_openai_server, reply
from memstrata.llm.openai_compat import OpenAIChat

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "locomo_mini.json"


def test_token_f1_normalises_like_squad_and_splits_chinese() -> None:
    assert token_f1("The pottery.", "pottery") == 1.0
    assert token_f1("pottery class", "pottery") == pytest.approx(2 / 3)
    assert token_f1("unknown", "Yangshuo") == 0.0
    assert answer_tokens("在阳朔徒步！") == ["在", "阳", "朔", "徒", "步"]
    assert token_f1("阳朔", "在阳朔") == pytest.approx(0.8)


def test_answers_scored_by_f1_and_the_judge_with_tokens_per_question(memory: Memory) -> None:
    script = ByPrompt(
        {
            "answer": [
                Reply(reply(answer="pottery"), usage=(200, 5)),
                Reply(reply(answer="in the Alps"), usage=(210, 6)),
            ],
            "judge": [
                Reply(reply(correct=True), usage=(50, 4)),
                Reply(reply(correct=False), usage=(52, 4)),
            ],
        }
    )
    with fake_openai_server(script) as url:  # type: ignore[arg-type]
        result = run_qa(memory, MINI, OpenAIChat(base_url=url, model="m"), budget=300)
    assert result["questions"] == 2 and result["questions_skipped"] == 1  # adversarial
    assert result["f1"] == 0.5 and result["J"] == 0.5 and result["judged"] == 2
    assert result["tokens_per_question"] == {"in": 256.0, "out": 9.5}
    answers = result["answers"]
    assert isinstance(answers, list) and isinstance(answers[0], dict)
    assert answers[0]["gold"] == "pottery" and answers[0]["correct"] is True
    shown = script.data("answer", 0)
    assert shown["question"] == "What did Ana start?" and shown["memory"].startswith("<memory")
    assert "pottery" in shown["memory"]  # the context at the budget held the evidence
    assert script.data("judge", 1)["gold"] == "Yangshuo"
    by_category = result["by_category"]
    assert isinstance(by_category, dict) and set(by_category) == {"1", "4"}


def test_a_question_the_model_cannot_answer_scores_zero_and_is_counted(memory: Memory) -> None:
    script = ByPrompt(
        {
            "answer": ["no json", "still none", reply(answer="Yangshuo")],
            "judge": [reply(correct=True)],
        }
    )
    with fake_openai_server(script) as url:  # type: ignore[arg-type]
        result = run_qa(memory, MINI, OpenAIChat(base_url=url, model="m"), limit=2)
    assert result["f1"] == 0.5 and result["judged"] == 1
    assert result["questions"] == 2 and result["questions_skipped"] == 0  # none before the limit
    failures = result["failures"]
    assert isinstance(failures, list) and len(failures) == 1
    assert "answer: malformed reply twice" in str(failures[0])


def test_bench_qa_refuses_clearly_without_an_endpoint(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["bench", "qa", "--data", str(MINI)]) == 6
    err = capsys.readouterr().err
    assert "chat model" in err and "MEMSTRATA_LLM__MODEL" in err
