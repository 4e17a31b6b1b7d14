"""Extraction: rules in English and Chinese, guards, the LLM extractor against a fake server,
and the idempotent pipeline into memory."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memstrata.api import Memory
from memstrata.curate.extract_llm import LLMExtractor
from memstrata.curate.extract_rules import RuleExtractor, sentences, third_person
from memstrata.curate.guards import GuardConfig, guard
from memstrata.ids import new_id
from memstrata.llm.fake import ScriptedChat, fake_openai_server
from memstrata.llm.openai_compat import OpenAIChat
from memstrata.model import Candidate, Category, Episode, Role, Scope

ALICE = Scope("alice")


def _ep(text: str, speaker: str = "Lin Wei") -> Episode:
    return Episode(
        new_id("ep"),
        ALICE,
        "chat",
        "s1",
        speaker,
        Role.USER,
        text,
        datetime(2024, 5, 1, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("text", "rule", "category", "expected"),
    [
        (
            "I really love hiking in the mountains.",
            "frame:like",
            Category.PREFERENCE,
            "Lin Wei really loves hiking in the mountains.",
        ),
        ("I can't stand long meetings on Mondays.", "frame:like", Category.PREFERENCE, None),
        ("I decided to use PostgreSQL for the route data.", "decision", Category.DECISION, None),
        ("I'm planning to visit Kyoto next spring.", "frame:plan", Category.PLAN, None),
        (
            "I adopted a puppy named Max last week.",
            "frame:pet",
            Category.PERSONAL,
            "Lin Wei adopted a puppy named Max last week.",
        ),
        ("我不喜欢太长的解释。", "frame:like", Category.PREFERENCE, "Lin Wei不喜欢太长的解释。"),
        ("下个月我打算去爬黄山。", "frame:plan", Category.PLAN, "下个月Lin Wei打算去爬黄山。"),
        ("我决定用 PostgreSQL。", "decision", Category.DECISION, None),
        ("周末我去爬了梧桐山。", "event", Category.EVENT, None),
        (
            "I'm allergic to peanuts and shellfish.",
            "frame:allergy",
            Category.HEALTH,
            "Lin Wei is allergic to peanuts and shellfish.",
        ),
        ("我对花生过敏，吃饭要注意。", "frame:allergy", Category.HEALTH, None),
    ],
)
def test_rules_in_both_languages(
    text: str, rule: str, category: Category, expected: str | None
) -> None:
    [candidate] = RuleExtractor().extract([_ep(text)]).candidates
    assert (candidate.rule, candidate.category, candidate.subject) == (rule, category, "Lin Wei")
    if expected is not None:
        assert candidate.text == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the speaker's own name is no fact: what else the sentence states is said plainly
        (
            "My name is Lin Wei and I'm a backend engineer.",
            [("job", "Lin Wei is a backend engineer")],
        ),
        (
            "我叫林伟，是一名后端工程师。",
            [("name", "Lin Wei叫林伟"), ("job", "Lin Wei是后端工程师")],
        ),
    ],
)
def test_a_sentence_of_several_states_is_one_plain_fact_each(
    text: str, expected: list[tuple[str, str]]
) -> None:
    """A self-introduction states a name and a job: each is its own fact, said plainly,
    never "Lin Wei's name is Lin Wei and Lin Wei is..." nor "Lin Wei叫林伟，是..."."""
    found = RuleExtractor().extract([_ep(text)]).candidates
    assert [(c.slot, c.text) for c in found] == expected


def test_a_sentence_that_only_says_the_speakers_own_name_is_no_fact() -> None:
    """Nothing else is said, so no rule of a name reads it again ("Lin Wei's name is Lin Wei")."""
    assert RuleExtractor().extract([_ep("My name is Lin Wei.")]).candidates == ()


@pytest.mark.parametrize(
    "text",
    [
        "Do you like hiking?",
        "Thanks so much!",
        "Cool.",
        "The weather was nice.",
        "你喜欢爬山吗？",
        "好的",
    ],
)
def test_rules_skip_questions_small_talk_and_other_people(text: str) -> None:
    assert RuleExtractor().extract([_ep(text)]).candidates == ()


def test_the_assistant_is_not_a_subject() -> None:
    assert (
        RuleExtractor().extract([_ep("I love helping you!", speaker="assistant")]).candidates == ()
    )


def test_sentences_and_pronouns() -> None:
    assert sentences("I went out. Did you? 我去了。好！") == [
        "I went out.",
        "Did you?",
        "我去了。",
        "好！",
    ]
    assert third_person("I'm sure my dog likes me", "Ana") == "Ana is sure their dog likes Ana"


def _candidate(
    text: str, category: Category, confidence: float, sources: tuple[str, ...]
) -> Candidate:
    return Candidate(text, category, confidence, 0.5, sources, "Ana")


def test_guards(memory: Memory) -> None:
    ep = memory.remember("I love tea", ALICE)[0]
    other = memory.remember("bob's", "bob")[0]
    candidates = [
        _candidate("Ana loves tea", Category.PREFERENCE, 0.8, (ep.id,)),
        _candidate("Ana is 34", Category.PERSONAL, 0.8, (ep.id,)),  # personal needs 0.85
        _candidate("Ana likes tea", Category.PREFERENCE, 0.9, (other.id,)),  # not in scope
        _candidate("Ana likes tea", Category.PREFERENCE, 0.9, ()),
        _candidate("Ana always drinks tea", Category.PREFERENCE, 0.9, (ep.id,)),
        _candidate("Ana 总是喝茶", Category.PREFERENCE, 0.9, (ep.id,)),
    ]
    report = guard(candidates, ALICE, memory.store)
    assert [c.text for c in report.kept] == ["Ana loves tea"]
    assert (report.low_confidence, report.bad_citations, report.overclaiming) == (1, 2, 2)
    lenient = GuardConfig(thresholds={Category.PERSONAL: 0.5})
    assert len(guard(candidates[:2], ALICE, memory.store, lenient).kept) == 2


def _reply(*facts: dict[str, object]) -> str:
    return json.dumps({"facts": list(facts)}, ensure_ascii=False)


def test_llm_extractor_maps_citations_and_retries_once() -> None:
    eps = [_ep("我叫林伟"), _ep("I prefer short answers")]
    good = _reply(
        {
            "text": "Lin Wei prefers short answers",
            "category": "preference",
            "confidence": 0.9,
            "importance": 0.8,
            "subject": "Lin Wei",
            "cites": [2, 9],
        },
        {"text": "invented", "category": "other", "cites": [42]},
    )
    script = ScriptedChat(["this is not json", good])
    with fake_openai_server(script) as url:
        result = LLMExtractor(OpenAIChat(base_url=url, model="m")).extract(eps)
    [candidate] = result.candidates
    assert candidate.sources == (eps[1].id,) and candidate.category == Category.PREFERENCE
    assert result.failures == () and result.dropped_citations == 2
    assert len(script.requests) == 2  # the malformed reply was retried once
    user_message = script.requests[0]["messages"][1]["content"]
    assert '"n": 1' in user_message and eps[0].id not in user_message  # ids stay on our side


def test_llm_extractor_records_failures_instead_of_raising() -> None:
    eps = [_ep("I love tea")]
    with fake_openai_server(ScriptedChat(["nope", '{"facts": "x"}'])) as url:
        twice = LLMExtractor(OpenAIChat(base_url=url, model="m")).extract(eps)
    assert twice.candidates == () and "malformed reply twice" in twice.failures[0]
    with fake_openai_server(ScriptedChat([500])) as url:
        down = LLMExtractor(OpenAIChat(base_url=url, model="m")).extract(eps)
    assert down.candidates == () and "answered 500" in down.failures[0]


def test_extract_into_memory_is_idempotent(memory: Memory) -> None:
    memory.remember(
        ["I adopted a puppy named Max last week.", "Do you like dogs?", "我最喜欢的水果是芒果。"],
        ALICE,
    )
    first = memory.extract(ALICE, extractor=RuleExtractor())
    assert first.episodes == 3 and len(first.stored) == 2
    assert sorted(f.text for f in first.stored) == [
        "The user adopted a puppy named Max last week.",
        "用户最喜欢的水果是芒果。",
    ]
    for fact in first.stored:
        assert len(fact.sources) == 1 and memory.get(fact.sources[0], ALICE)
    again = memory.extract(ALICE, extractor=RuleExtractor())
    assert again.stored == [] and again.episodes == 1  # only the question is left


def test_extraction_bench_on_a_fixture(tmp_path: object) -> None:
    from pathlib import Path

    from memstrata.bench.extraction import run_extraction

    data = [
        {
            "sample_id": "c1",
            "conversation": {
                "speaker_a": "Ana",
                "speaker_b": "Ben",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy named Max."},
                    {"speaker": "Ben", "dia_id": "D1:2", "text": "Wow, congrats!"},
                    {"speaker": "Ana", "dia_id": "D1:3", "text": "Max is very cute."},
                ],
            },
            "qa": [],
            "observation": {
                "session_1_observation": {
                    "Ana": [["Ana adopted a puppy named Max.", "D1:1"], ["Max is cute.", "D1:3"]],
                    "Ben": [["Ben congratulated Ana.", "D1:2"]],
                }
            },
        }
    ]
    path = Path(str(tmp_path)) / "obs.json"
    path.write_text(json.dumps(data))
    result = run_extraction(RuleExtractor(), path, sample=5)
    assert result["observations"] == 3
    assert result["observation_recall"] == round(1 / 3, 4)  # only D1:1 is first-person
    # a pet adopted is a state of the speaker's life (the pet), not only an event
    assert result["facts"] == 1 and result["facts_by_category"] == {"personal": 1}


def test_the_extractor_follows_the_settings(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from memstrata.settings import load_settings

    data = Path(str(tmp_path)) / "m"
    with Memory.open(settings=load_settings(data_dir=data)) as mem:
        assert mem.extractor().name == "rules"
    monkeypatch.setenv("MEMSTRATA_LLM__MODEL", "qwen2.5")
    monkeypatch.setenv("MEMSTRATA_LLM__API_KEY", "sk-never-shown")
    with Memory.open(settings=load_settings(data_dir=data)) as mem:
        name = mem.extractor().name
    assert name.startswith("llm:") and "qwen2.5" in name and "sk-never-shown" not in name


def test_thresholds_come_from_the_settings(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pathlib import Path

    from memstrata.errors import ConfigError
    from memstrata.settings import load_settings

    text = "I finished the quarterly review last week."  # an event at confidence 0.65
    monkeypatch.setenv("MEMSTRATA_CONFIDENCE_THRESHOLDS", '{"event": 0.9}')
    with Memory.open(settings=load_settings(data_dir=Path(str(tmp_path)) / "a")) as mem:
        mem.remember(text, ALICE)
        report = mem.extract(ALICE, extractor=RuleExtractor())
        assert report.stored == [] and report.low_confidence == 1
    monkeypatch.setenv("MEMSTRATA_CONFIDENCE_THRESHOLDS", '{"gossip": 0.9}')
    with pytest.raises(ConfigError, match="unknown categories gossip"):
        load_settings()
