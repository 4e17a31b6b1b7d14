"""The scoring of ``bench handed`` on hand-written served texts for the test conversation: every
figure follows from the text given, whatever a curation would serve."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.bench.handed import (
    Served,
    default_embedder,
    handed_result,
    handed_show,
    handed_table,
    offline_settings,
    score_context,
    score_conversation,
    score_wake_up,
)
from memstrata.bench.handed_files import load_conversation
from memstrata.settings import Settings, load_settings

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "handed_mini.json"

SERVED = """<memory>
## Profile
- partner: husband Tiago
- residence: Lyon since February 2026
- job: nurse in
## Key facts
- Drinks rooibos; used to drink espresso
- Lived in Porto
- Allergic to penicillin
- Going to buy groceries tonight
- Visiting Kyoto in October 2026
</memory>"""

SMALL = "<memory>\n- partner: husband Tiago\n</memory>"


def test_wake_up_figures_follow_from_the_served_text() -> None:
    conv = load_conversation(MINI)
    result = score_wake_up(conv, SERVED, SMALL)
    counts = result["counts"]
    assert result["lines"] == 8
    assert (counts["current"], counts["current_total"]) == (2, 3)
    assert [i["found"] for i in result["current"]] == [True, True, False]  # never-said: never
    assert result["current"][0]["lines"] == ["residence: Lyon since February 2026"]
    # "Lived in Porto" holds no past marker; "used to drink espresso" does
    stale = {i["id"]: i for i in result["stale"]}
    assert stale["old-city"]["as_current"] and stale["old-city"]["current_lines"] == [
        "Lived in Porto"
    ]
    assert stale["espresso"]["found"] and not stale["espresso"]["as_current"]
    assert (counts["stale_as_current"], counts["stale_as_current_no_change_stated"]) == (1, 1)
    # penicillin is the 6th of 8 lines: served, not in the first 25%, not at 160 tokens
    [penicillin] = result["safety"]
    assert penicillin["found"] and not penicillin["early"] and not penicillin["at_small_budget"]
    assert counts["trivia"] == 1
    [kyoto] = result["events"]
    assert kyoto["found"] and kyoto["dated"] and kyoto["date_right"]
    assert counts["lines_dated"] == 2 and result["dated_lines"][0].startswith("residence")
    [partner] = result["slots"]
    assert partner["label_served"] and partner["complete"]
    assert result["cut_lines"] == ["job: nurse in"]


def test_safety_early_and_at_a_small_budget() -> None:
    conv = load_conversation(MINI)
    served = "<memory>\n- 对青霉素过敏\n- Lives in Lyon\n- Drinks rooibos\n- a\n- b\n</memory>"
    [item] = score_wake_up(conv, served, served)["safety"]
    assert item["early"] and item["at_small_budget"]  # line 1 of 5: the first 2 are early
    empty = score_wake_up(conv, "<memory>\n</memory>", "")
    assert empty["lines"] == 0 and not any(i["found"] for i in empty["current"])
    assert empty["counts"]["slots_label_served"] == 0


def test_context_figures_per_question() -> None:
    conv = load_conversation(MINI)
    text = (
        "<memory>\nprofile.residence: Lyon\nsaid 2026-01-10: user: I work as a nurse in Porto"
        "\nsaid 2026-01-10: user: I'm allergic to penicillin.\n</memory>"
    )
    safety, where, kyoto = (score_context(conv, q, text) for q in conv.questions)
    assert safety["answer_found"] and safety["safety_items_in"] == ["penicillin"]
    assert where["answer_found"] and where["stale_as_current"]
    assert where["stale_lines"] == ["said 2026-01-10: user: I work as a nurse in Porto"]
    assert not kyoto["answer_found"] and "safety_items_in" not in kyoto


def test_the_table_and_the_texts_for_reading_by_hand() -> None:
    conv = load_conversation(MINI)
    served = Served(SERVED, 60, SMALL, ("none", "Lives in Lyon", "none"), 5, 0.1)
    result = handed_result(
        [score_conversation(conv, served)],
        sets=[],
        budget=800,
        context_budget=1000,
        embedder="hashing:256",
    )
    result["locomo"] = {"skipped": "no --locomo FILE given"}
    assert result["totals"]["context"] == {
        "questions": 3,
        "answers_found": 1,
        "stale_questions": 1,
        "stale_as_current": 0,
        "safety_questions": 1,
        "safety_answers_found": 0,
    }
    table = handed_table(result)
    row, context_row = (line for line in table.splitlines() if line.startswith("mini-ana"))
    cells = "mini-ana 2/3 1/2 1 1/1 0 0/1 1/1 1/1 1/1 1 8 25% 1/1 1"
    assert row.split() == cells.split()
    assert context_row.split() == ["mini-ana", "1/3", "0/1", "0/1"]
    assert "LoCoMo figures skipped: no --locomo FILE given" in table
    shown = handed_show(result)
    assert SERVED in shown and "context for 'Where does Ana live?' (answer found)" in shown
    assert "context for 'What is Ana allergic to?' (answer NOT found)" in shown


def test_the_offline_defaults_read_no_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MEMSTRATA_LLM__BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("MEMSTRATA_LLM__MODEL", "some-model")
    monkeypatch.setenv("MEMSTRATA_ESSENTIALS_BUDGET", "41")
    assert load_settings().llm is not None  # what a user's environment would give
    settings = offline_settings(tmp_path)
    assert settings.llm is None and settings.data_dir == tmp_path
    assert settings.essentials_budget == Settings.model_fields["essentials_budget"].default
    assert not settings.trace and not settings.load_sample


def test_each_memory_gets_an_embedder_of_its_own(tmp_path: Path) -> None:
    make = default_embedder(tmp_path / "vectors.db")
    first, second = make(), make()
    assert first is not second and first.name == second.name  # a memory closes its own
    for embedder in (first, second):
        embedder.close()  # type: ignore[attr-defined]


def test_where_each_miss_stands() -> None:
    """A miss of wake_up is placed by where its words are: a fact that holds, one that
    ended, the user's own turns only, or nowhere; a stale value served as current the same."""
    conv = load_conversation(MINI)
    served = Served(
        "<memory>\n- Lived in Porto\n</memory>",
        10,
        "",
        ("none", "none", "none"),
        3,
        0.1,
        current_facts=("The user drinks rooibos", "residence: Porto"),
        ended_facts=("The user lives in Lyon",),
    )
    result = score_conversation(conv, served)
    misses = result["wake_up"]["misses"]
    # Lyon only in an ended fact, rooibos in one that holds, the never-said term nowhere
    assert misses["current"]["items"] == {"city": "ended", "drink": "fact", "never-said": "unsaid"}
    assert misses["current"]["counts"] == {"fact": 1, "ended": 1, "said": 0, "unsaid": 1}
    # penicillin was said by the user and filed as nothing
    assert misses["safety"]["items"] == {"penicillin": "said"}
    # Porto is served as current and still held by a fact: a supersession missed
    assert misses["stale_as_current"]["items"] == {"old-city": "fact"}
    whole = handed_result(
        [result, result], sets=[], budget=800, context_budget=1000, embedder="hashing:256"
    )
    assert whole["totals"]["wake_up"]["misses"]["current"] == {
        "fact": 2,
        "ended": 2,
        "said": 0,
        "unsaid": 2,
    }
    table = handed_table({**whole, "locomo": {"skipped": "no --locomo FILE given"}})
    rows = table.splitlines()
    at = rows.index("where wake_up's misses stand")
    assert rows[at + 1].split() == ["fact", "ended", "said", "unsaid"]
    assert rows[at + 2].split() == ["current", "2", "2", "0", "2"]
    assert rows[at + 4].split() == ["stale_as_current", "2", "0", "0", "0"]
