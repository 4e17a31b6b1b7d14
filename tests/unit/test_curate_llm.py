"""Consolidation by a chat model (a local fake server): topics rewritten, not appended;
contradictions superseding with history; themes merged with their citations; profile slots
proposed; every output through the guards; rules for what the model could not do."""

from __future__ import annotations

import json
from pathlib import Path

from memstrata.api import Memory
from memstrata.citations import missing_episodes
from memstrata.consolidate import ConsolidationReport
from memstrata.document.format import parse, serialize
from memstrata.llm.fake import ByPrompt, reply
from memstrata.model import DocumentKind, FactFilter, Profile, Scope
from tests.conftest import FixedClock
from tests.unit.llm_script import model_memory

WEI = Scope("wei")
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm"


def _bullets(mem: Memory, key: str) -> list[tuple[str, str, tuple[str, ...]]]:
    doc, _ = mem.documents.get(WEI, key)
    return [
        (b.id, b.text, tuple(c.episode_id for c in b.citations))
        for s in doc.sections
        for b in s.bullets
    ]


def _turns(mem: Memory, clock: FixedClock, *texts: str) -> list[str]:
    ids = []
    for text in texts:
        clock.advance(minutes=1)
        ids.append(mem.remember([{"text": text, "speaker": "Wei"}], WEI)[0].id)
    return ids


def _consistent(mem: Memory) -> None:
    """Every document parses back to itself and every citation resolves."""
    for stored in mem.store.list_documents(WEI):
        if stored.kind not in (DocumentKind.TOPIC, DocumentKind.ESSENTIALS):
            continue
        doc, _ = mem.documents.get(WEI, stored.key)
        assert parse(serialize(doc)) == doc
        cited = [c.episode_id for s in doc.sections for b in s.bullets for c in b.citations]
        assert all(b.citations for s in doc.sections for b in s.bullets)
        assert missing_episodes(mem.store, WEI, cited) == []


def test_new_facts_are_folded_into_the_topic_not_appended(
    data_dir: Path, clock: FixedClock
) -> None:
    script = ByPrompt(
        {
            "consolidate": [
                reply(
                    bullets=[
                        {
                            "section": "Expertise",
                            "text": "Wei works at Alibaba as an engineer, on the payments "
                            "team since last month",
                            "cites": [1, 2],
                            "replaces": [1],
                            "facts": [1],
                        }
                    ]
                )
            ]
        }
    )
    with model_memory(data_dir, script, clock) as mem:
        first, second = _turns(
            mem,
            clock,
            "I work at Alibaba as an engineer.",
            "I moved to the payments team at Alibaba last month.",
        )
        mem.add_fact("Wei works at Alibaba as an engineer", WEI, topic="work", sources=[first])
        mem.consolidate(WEI, use_llm=False)
        [(bullet_id, _, _)] = _bullets(mem, "work")
        mem.add_fact(
            "Wei moved to the payments team at Alibaba last month",
            WEI,
            topic="work",
            sources=[second],
        )
        report = mem.consolidate(WEI)
        [(same_id, text, cites)] = _bullets(mem, "work")
        history = mem.history(bullet_id, WEI)
        _consistent(mem)
    assert same_id == bullet_id and "payments team" in text and cites == (first, second)
    assert [v.op for v in history][-1] == "update"  # an edit of the bullet, history kept
    assert report.by_model == 1 and report.by_rules == 0 and report.rejected == []
    shown = script.data("consolidate")
    assert shown["bullets"][0]["b"] == 1 and shown["new_facts"][0]["f"] == 1
    assert [e["n"] for e in shown["episodes"]] == [1, 2]
    assert first not in json.dumps(shown)  # ids stay on our side
    assert report.usage is not None and report.usage["calls"] == script.count("consolidate") + (
        script.count("contradict") + script.count("profile") + script.count("merge_topics")
    )


def test_guards_refuse_uncited_invented_and_unsupported_text(
    data_dir: Path, clock: FixedClock
) -> None:
    bad = [
        {"section": "Notes", "text": "Wei likes green tea", "cites": [], "facts": [1]},
        {"section": "Notes", "text": "Wei likes green tea", "cites": [9], "facts": [1]},
        {"section": "Notes", "text": "Wei climbs mountains in Tibet", "cites": [1], "facts": [1]},
        {"section": "Notes", "text": "Wei always drinks green tea", "cites": [1], "facts": [1]},
    ]
    script = ByPrompt({"consolidate": [reply(bullets=bad)]})
    with model_memory(data_dir, script, clock) as mem:
        [turn] = _turns(mem, clock, "I like green tea.")
        mem.add_fact("Wei likes green tea", WEI, topic="food", sources=[turn])
        report = mem.consolidate(WEI)
        bullets = _bullets(mem, "food")
        _consistent(mem)
    reasons = [r.split(": ")[1] for r in report.rejected]
    assert reasons == ["uncited", "invented citation", "unsupported", "overclaiming"]
    assert [t for _, t, _ in bullets] == ["Wei likes green tea"]  # the fact, by rules
    assert report.by_model == 0 and report.by_rules == 1


def test_a_contradiction_supersedes_the_older_fact_with_history(
    data_dir: Path, clock: FixedClock
) -> None:
    script = ByPrompt(
        {
            "contradict": [reply(contradictions=[{"new": 1, "old": 1, "cites": [1]}])],
            "consolidate": [
                reply(bullets=[{"text": "Wei quit his job at Alibaba", "cites": [1], "facts": [1]}])
            ],
        }
    )
    with model_memory(data_dir, script, clock) as mem:
        works, quits = _turns(mem, clock, "I work at Alibaba.", "I quit my job at Alibaba.")
        old = mem.add_fact("Wei works at Alibaba", WEI, topic="work", sources=[works])
        mem.consolidate(WEI, use_llm=False)
        clock.advance(days=30)
        new = mem.add_fact("Wei quit his job at Alibaba", WEI, topic="work", sources=[quits])
        assert mem.store.get_fact(WEI, old.id).current  # the rules see no slot here
        report = mem.consolidate(WEI)
        closed = mem.store.get_fact(WEI, old.id)
        history = mem.history(old.id, WEI)
        texts = [t for _, t, _ in _bullets(mem, "work")]
        _consistent(mem)
    assert closed.superseded_by == new.id and closed.valid_to == new.valid_from
    assert history[-1].op == "supersede" and report.superseded == [old.id]
    assert texts == ["Wei quit his job at Alibaba"]  # the outdated bullet deleted
    assert script.data("contradict")["current_facts"] == [{"c": 1, "text": old.text}]


def test_same_theme_topics_are_merged_with_their_citations(
    data_dir: Path, clock: FixedClock
) -> None:
    script = ByPrompt({"merge_topics": [reply(merges=[{"into": 2, "from": [1]}])]})
    with model_memory(data_dir, script, clock) as mem:
        a, b, c = _turns(
            mem,
            clock,
            "I went hiking in the Alps.",
            "I love outdoor trips with my dog.",
            "I hiked Mount Tai last spring.",
        )
        hike = mem.add_fact("Wei went hiking in the Alps", WEI, topic="hiking", sources=[a])
        mem.add_fact("Wei loves outdoor trips with his dog", WEI, topic="outdoors", sources=[b])
        mem.consolidate(WEI, use_llm=False)
        mem.add_fact("Wei hiked Mount Tai last spring", WEI, topic="hiking", sources=[c])
        report = mem.consolidate(WEI)
        kept = _bullets(mem, "outdoors")
        folded = _bullets(mem, "hiking")
        refiled = mem.store.get_fact(WEI, hike.id)
        state = mem.store.get_document(WEI, DocumentKind.STATE, "consolidation")
        # a later fact of the folded topic goes to the kept one, by rules too
        [later] = _turns(mem, clock, "I hiked in Yunnan too.")
        mem.add_fact("Wei hiked in Yunnan", WEI, topic="hiking", sources=[later])
        mem.consolidate(WEI, use_llm=False)
        after = [t for _, t, _ in _bullets(mem, "outdoors")]
        still_folded = _bullets(mem, "hiking")
        _consistent(mem)
    assert report.topics_merged == {"hiking": "outdoors"} and folded == []
    assert {(t, s) for _, t, s in kept} >= {
        ("Wei went hiking in the Alps", (a,)),
        ("Wei hiked Mount Tai last spring", (c,)),
        ("Wei loves outdoor trips with his dog", (b,)),
    }
    assert refiled.topic == "outdoors" and state is not None
    assert state.content["aliases"] == {"hiking": "outdoors"} and "merging" not in state.content
    assert "Wei hiked in Yunnan" in after and still_folded == []


def test_profile_slots_are_proposed_from_the_evidence(data_dir: Path, clock: FixedClock) -> None:
    slots = [
        {"section": "preferences", "key": "tone", "value": "concise answers", "cites": [1]},
        {"section": "fields", "key": "location", "value": "Mars", "cites": [1]},
        {"section": "fields", "key": "salary", "value": "concise", "cites": [1]},
        {"section": "fields", "key": "role", "value": "answers", "cites": [7]},
    ]
    script = ByPrompt({"profile": [reply(slots=slots)]})
    with model_memory(data_dir, script, clock) as mem:
        [turn] = _turns(mem, clock, "Please keep your answers concise.")
        fact = mem.add_fact(
            "Wei prefers concise answers", WEI, category="preference", sources=[turn]
        )
        report = mem.consolidate(WEI)
        profile = mem.store.get_document(WEI, DocumentKind.PROFILE, "profile")
        again = mem.consolidate(WEI, use_llm=False)  # the proposal stands on later runs
        kept = mem.store.get_document(WEI, DocumentKind.PROFILE, "profile")
        state = mem.store.get_document(WEI, DocumentKind.STATE, "consolidation")
    assert profile is not None and kept is not None
    tone = Profile.from_document(profile).preferences["tone"]
    assert tone.value == "concise answers" and tone.sources == (turn,)
    assert "preferences.tone" in report.promoted and again.promoted == []
    assert Profile.from_document(kept).preferences["tone"].value == "concise answers"
    assert len(report.rejected) == 3 and "location" not in Profile.from_document(profile).fields
    assert state is not None
    assert state.content["model_slots"]["preferences.tone"]["facts"] == [fact.id]  # type: ignore[index,call-overload]


def test_a_chinese_conversation_yields_chinese_memory(data_dir: Path, clock: FixedClock) -> None:
    fixture = json.loads((FIXTURES / "zh_conversation.json").read_text("utf-8"))
    script = ByPrompt(
        {
            "extract": [json.dumps(fixture["extract_reply"], ensure_ascii=False)],
            "consolidate": [json.dumps(fixture["consolidate_reply"], ensure_ascii=False)],
        }
    )
    with model_memory(data_dir, script, clock) as mem:
        for turn in fixture["turns"]:
            clock.advance(minutes=1)
            mem.remember([turn], WEI)
        run = mem.start_run(WEI)
        _wait(mem, run.id)
        texts = [t for _, t, _ in _bullets(mem, "工作")]
        facts = mem.store.list_facts(WEI, FactFilter(current_only=True))
        steps = [e.data["step"] for e in mem.runs.replay(run_id=run.id).events if e.kind == "model"]
        _consistent(mem)
    system = script.asked[[s for s, _ in script.asked].index("consolidate")][1]["messages"][0]
    assert "用中文" in system["content"]
    assert [e["text"] for e in script.data("consolidate")["episodes"]] == [
        t["text"] for t in fixture["turns"][:2]
    ]
    assert texts == fixture["expected_bullets"]
    assert steps[0] == "extract" and "topic:工作" in steps and "contradictions" not in steps
    assert {f.text for f in facts} == {f["text"] for f in fixture["extract_reply"]["facts"]}
    assert run.result is not None and run.result["consolidation"]["bullets_added"] == 1  # type: ignore[index,call-overload]


def test_malformed_twice_then_rules_and_recorded(data_dir: Path, clock: FixedClock) -> None:
    script = ByPrompt({"consolidate": ["not json", '{"bullets": "nope"}']})
    with model_memory(data_dir, script, clock) as mem:
        [turn] = _turns(mem, clock, "I like green tea.")
        mem.add_fact("Wei likes green tea", WEI, topic="food", sources=[turn])
        report = mem.consolidate(WEI)
        texts = [t for _, t, _ in _bullets(mem, "food")]
    assert texts == ["Wei likes green tea"] and report.by_rules == 1
    assert report.model_failures == [
        f for f in report.model_failures if f.startswith("topic food: malformed reply twice")
    ]
    assert len(report.model_failures) == 1 and script.count("consolidate") == 2


def test_a_spent_budget_finishes_by_rules(data_dir: Path, clock: FixedClock) -> None:
    script = ByPrompt()
    with model_memory(data_dir, script, clock, run_token_budget=1) as mem:
        turns = _turns(mem, clock, "I like green tea.", "I play the violin.")
        mem.add_fact("Wei likes green tea", WEI, topic="food", sources=[turns[0]])
        mem.add_fact("Wei plays the violin", WEI, topic="music", sources=[turns[1]])
        report = mem.consolidate(WEI)
        food, music = _bullets(mem, "food"), _bullets(mem, "music")
    assert len(script.asked) == 1  # the first call spent the budget; no other was made
    assert report.usage is not None and report.usage["budget_spent"] is True
    assert [t for _, t, _ in food + music] == ["Wei likes green tea", "Wei plays the violin"]
    assert any("budget" in f for f in report.model_failures)


def _wait(mem: Memory, run_id: str) -> None:
    import time

    for _ in range(1500):
        if mem.runs.get(run_id).finished_at is not None:
            return
        time.sleep(0.02)
    raise AssertionError("the run did not finish")


def test_contradiction_candidates_come_from_a_search_too(data_dir: Path, clock: FixedClock) -> None:
    from memstrata.consolidate import Consolidator
    from memstrata.llm.openai_compat import OpenAIChat

    script = ByPrompt({"contradict": [reply(contradictions=[{"new": 1, "old": 1, "cites": [1]}])]})
    with model_memory(data_dir, script, clock) as mem:
        plays, quits = _turns(mem, clock, "I play chess every week.", "I gave up board games.")
        old = mem.add_fact("Wei plays chess weekly", WEI, topic="hobbies", sources=[plays])
        mem.consolidate(WEI, use_llm=False)
        new = mem.add_fact("Wei gave up board games", WEI, topic="life", sources=[quits])
        assert mem.settings is not None and mem.settings.llm is not None
        model = OpenAIChat(base_url=mem.settings.llm.base_url, model="fake", max_retries=0)
        searched: list[str] = []

        def related(scope: Scope, text: str) -> list[str]:
            searched.append(text)
            return [old.id]

        blind = Consolidator(mem.store, mem.documents, mem.runs, llm=model, clock=clock)
        blind_report = ConsolidationReport()
        assert blind.model is not None
        assert not blind.model.contradictions(WEI, [new], [old, new], blind_report)
        asked_blind = script.count("contradict")
        seeing = Consolidator(
            mem.store, mem.documents, mem.runs, llm=model, clock=clock, related=related
        )
        report = seeing.update(WEI)
        closed = mem.store.get_fact(WEI, old.id)
    assert asked_blind == 0 and blind_report.superseded == []  # no shared term, other topic
    assert searched == [new.text] and report.superseded == [old.id]
    assert closed.superseded_by == new.id
