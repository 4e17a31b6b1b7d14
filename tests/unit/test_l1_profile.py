"""L1 from the facts: slots (English and Chinese), repeats merged, a budget, the user first,
the other people under People, and the topic a fact is filed in."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.curate.essentials import choose_user
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.curate.slots import SlotFill, is_feeling, preference_of, slots_in
from memstrata.document.coverage import spoken_for, topic_key
from memstrata.document.ops import Operation, OpKind
from memstrata.model import Category, DeleteReason, HistoryOp, Role, Scope, Turn
from memstrata.tokens import HeuristicTokenCounter

ROOM = Scope("u", thread="conv")


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [  # English: facts as extraction writes them from LoCoMo dev turns
        ("Melanie is lucky to have their husband and kids;", "Melanie", ("partner", "husband")),
        ("Melanie's kids are so excited about summer break!", "Melanie", ("children", "kids")),
        (
            "This necklace is super special to Caroline - a gift from their grandma in their "
            "home country, Sweden.",
            "Caroline",
            ("home_country", "Sweden"),
        ),
        ("Melanie plays clarinet!", "Melanie", ("instruments", "clarinet")),
        (
            "Joanna is allergic to most reptiles and animals with fur.",
            "Joanna",
            ("allergies", "most reptiles and animals with fur"),
        ),
        (
            "John's wife and John were road tripping out on the Euro coast.",
            "John",
            ("partner", "wife"),
        ),
        (
            "Painting landscapes and still life is Melanie's favorite!",
            "Melanie",
            ("favorite", "painting landscapes and still life"),
        ),
        ("Nate's dog is so happy.", "Nate", ("pets", "dog")),
        ("Jon lives in Boston now.", "Jon", ("residence", "Boston")),
        (
            "Gina works as a manager at a clothing store.",
            "Gina",
            ("job", "manager at a clothing store"),
        ),
        ("Tim is from England.", "Tim", ("home_country", "England")),
        ("Maria speaks Spanish and English.", "Maria", ("languages", "Spanish and English")),
        (
            "Jon lost their job as a banker yesterday, so Jon is gonna take a shot.",
            "Jon",
            ("former job", "banker"),
        ),
        (
            "Unfortunately, Gina also lost their job at Door Dash this month.",
            "Gina",
            ("former employer", "Door Dash"),
        ),
        (
            "Gina opened an online clothing store and it's been great!",
            "Gina",
            ("business", "online clothing store"),
        ),
        (
            "Moments like these make John so grateful for their basketball career.",
            "John",
            ("career", "basketball"),
        ),
        (
            "John is doing well, John just had a picnic with the wife and kids.",
            "John",
            ("partner", "wife"),
        ),
        (
            "Maria just adopted this cute pup from a shelter last week.",
            "Maria",
            ("pets", "pup"),
        ),
        ("Allergic to peanuts: check restaurant recommendations", "Lin", ("allergies", "peanuts")),
        # Chinese, hand-written
        ("小红开了一家咖啡馆", "小红", ("business", "咖啡馆")),
        ("小红住在杭州。", "小红", ("residence", "杭州")),
        ("小红来自四川", "小红", ("home_country", "四川")),
        ("小红是一名护士", "小红", ("job", "护士")),
        ("小红在阿里巴巴工作", "小红", ("employer", "阿里巴巴")),
        ("小红的丈夫很会做饭", "小红", ("partner", "丈夫")),
        ("小红有两个孩子", "小红", ("children", "两个孩子")),
        ("小红养了一只猫", "小红", ("pets", "猫")),
        ("小红对花生过敏", "小红", ("allergies", "花生")),
        ("小红会说粤语", "小红", ("languages", "粤语")),
        ("小红最喜欢的水果是芒果", "小红", ("favorite 水果", "芒果")),
    ],
)
def test_each_slot_rule(text: str, name: str, expected: tuple[str, str]) -> None:
    assert SlotFill(*expected) in slots_in(text, name)


@pytest.mark.parametrize(
    ("text", "name", "expected"),
    [
        (
            "Melanie loves camping trips with their fam, 'cause nature brings such peace.",
            "Melanie",
            "Melanie loves camping trips with their fam",
        ),
        (
            "Melanie is a big fan of pottery - the creativity is awesome.",
            "Melanie",
            "Melanie is a big fan of pottery",
        ),
        (
            "Nate loves action and sci-fi movies, the effects are so cool",
            "Nate",
            "Nate loves action and sci-fi movies",
        ),
        ("Nate likes having some of these little ones around.", "Nate", None),  # unresolved
        ("Melanie is so happy for you.", "Melanie", None),  # a feeling
        ("Caroline loves it!", "Caroline", None),  # no object
        ("The colors make Melanie feel calm.", "Melanie", None),
        ("小红很喜欢爬山，每周都去", "小红", "小红喜欢爬山"),
        ("小红很喜欢这个", "小红", None),
        ("小红很开心", "小红", None),
    ],
)
def test_preferences_need_an_object(text: str, name: str, expected: str | None) -> None:
    assert preference_of(text, name) == expected


def test_a_pronoun_or_the_slots_own_word_is_no_value() -> None:
    assert slots_in("Nate spends time with their pets.", "Nate") == []
    assert slots_in("Nate has a dog named Max.", "Nate") == [SlotFill("pets", "dog")]


@pytest.mark.parametrize(
    ("text", "feeling"),
    [
        ("The colors make Melanie feel calm.", True),
        ("Makes Melanie feel like maybe Melanie should do it too!", True),
        ("Caroline is really thankful for their friends, family and mentors' support.", True),
        ("Melanie loves camping trips with their fam.", False),
        ("Prefers short answers with code first", False),  # written without its subject
        ("小红很开心", True),
        ("用户喜欢喝茶", False),
        ("Caroline loves it!", True),  # a reaction: a liking with no object
        # a preference said without a verb of liking, as a person files one
        ("不喝咖啡，只喝绿茶", False),
        ("周末我一般去西湖边跑步", False),
        ("Drinks only green tea, never coffee", False),
        ("心情很好", True),
    ],
)
def test_a_feeling_is_told_from_a_preference(text: str, feeling: bool) -> None:
    assert is_feeling(text) is feeling


def test_wake_up_leaves_feelings_to_the_topics(memory: Memory) -> None:
    alice = Scope("alice")
    calm, tea = memory.remember(["The colors make me feel calm.", "I love green tea."], alice)
    memory.add_fact(
        "The colors make Alice feel calm.", alice, category=Category.PREFERENCE, sources=[calm.id]
    )
    memory.add_fact("Alice loves green tea.", alice, category=Category.PREFERENCE, sources=[tea.id])
    memory.consolidate(alice)
    text = memory.wake_up(alice).text
    assert "Alice loves green tea" in text and "feel calm" not in text
    assert "feel calm" in memory.recall("preferences", alice).text  # L2 keeps it


def test_a_preference_filed_without_a_verb_of_liking_is_served_at_once(memory: Memory) -> None:
    """As an agent files one (POST /v1/facts, remember_fact): before any consolidation."""
    alice = Scope("alice")
    for text in ("不喝咖啡，只喝绿茶", "周末我一般去西湖边跑步", "Prefers window seats"):
        memory.add_fact(text, alice, category=Category.PREFERENCE)
    memory.add_fact("Alice is so happy.", alice, category=Category.PREFERENCE)
    text = memory.wake_up(alice).text
    assert "不喝咖啡，只喝绿茶" in text and "西湖边跑步" in text and "window seats" in text
    assert "so happy" not in text  # a feeling stays in L2


def _turn(text: str, speaker: str, session: str) -> Turn:
    return Turn(
        text,
        speaker=speaker,
        role=Role.USER,
        session_id=session,
        time=datetime(2023, 5, int(session[-1]), tzinfo=UTC),
    )


def test_a_repeat_in_another_session_merges_and_raises_importance(memory: Memory) -> None:
    memory.remember(_turn("I love camping with my family.", "Mel", "s1"), ROOM)
    memory.remember(_turn("Hi Caro", "Caro", "s1"), ROOM)
    first = memory.extract(ROOM, extractor=RuleExtractor()).stored
    [fact] = [f for f in first if "camping" in f.text]
    memory.remember(_turn("I love camping with my family!", "Mel", "s2"), ROOM)
    report = memory.extract(ROOM, extractor=RuleExtractor())
    assert report.stored == [] and [f.id for f in report.merged] == [fact.id]
    merged = report.merged[0]
    assert len(merged.sources) == 2 and merged.importance > fact.importance
    memory.remember(_turn("I love camping with my family.", "Mel", "s2"), ROOM)
    same_session = memory.extract(ROOM, extractor=RuleExtractor()).merged[0]
    assert same_session.importance == merged.importance  # a session counts once


def _two_speakers(memory: Memory) -> None:
    said = [
        ("I'm from Sweden.", "Caroline", "s1"),
        ("I love painting landscapes.", "Caroline", "s1"),
        ("My husband and I love hiking.", "Melanie", "s1"),
        ("I love camping with my family.", "Melanie", "s2"),
        ("I'm from Sweden, it was hard to leave.", "Caroline", "s2"),
        ("Thanks!", "Caroline", "s2"),
    ]
    for text, who, session in said:
        memory.remember(_turn(text, who, session), ROOM)
    memory.extract(ROOM)
    memory.consolidate(ROOM)


def test_the_user_comes_first_and_the_others_under_people(memory: Memory) -> None:
    _two_speakers(memory)
    assert memory.profile(ROOM).fields["home country"].value == "Sweden"
    assert memory.profile(ROOM).fields["name"].value == "Caroline"  # most turns of role user
    doc, _ = memory.doc("essentials", ROOM)
    sections = {s.heading: [_undated(b.text) for b in s.bullets] for s in doc.sections}
    assert sections["Preferences"] == ["Caroline loves painting landscapes"]
    assert sections["People: Melanie"][0] == "partner: husband"
    assert "Melanie loves camping with their family" in sections["People: Melanie"]
    text = memory.wake_up(ROOM).text
    assert (
        text.index("## Profile")
        < text.index("- home country: Sweden")
        < text.index("### People: Melanie")
    )


def test_a_setting_names_the_user() -> None:
    from memstrata.model import Episode

    def ep(i: int, who: str) -> Episode:
        return Episode(
            f"ep{i}", ROOM, "chat", "s1", who, Role.USER, "hi", datetime(2023, 5, 1, tzinfo=UTC)
        )

    turns = [ep(0, "Ann"), ep(1, "Bob"), ep(2, "Bob")]
    assert choose_user(turns) == "Bob"
    assert choose_user(turns, "Ann") == "Ann"
    assert choose_user(turns, "Zed") == "Bob"  # not a speaker here: the rule decides


def test_l1_stays_within_its_budget(tmp_path: object, memory: Memory) -> None:
    from memstrata.consolidate import Consolidator

    for i in range(30):
        memory.remember(_turn(f"I love topic number {i} a lot.", "Ann", f"s{i % 9 + 1}"), ROOM)
    memory.extract(ROOM)
    budget = 60
    Consolidator(memory.store, memory.documents, memory.runs, essentials_budget=budget).update(ROOM)
    doc, _ = memory.doc("essentials", ROOM)
    counter = HeuristicTokenCounter()
    profile = memory.profile(ROOM)
    used = sum(counter.count(f"{k}: {v.value}") + 2 for k, v in profile.fields.items())
    used += sum(counter.count(s.heading) + 2 for s in doc.sections)
    used += sum(counter.count(b.text) + 2 for s in doc.sections for b in s.bullets)
    assert 0 < len([b for s in doc.sections for b in s.bullets]) < 30 and used <= budget


def test_a_fact_without_topic_is_spoken_for_by_its_category_document(memory: Memory) -> None:
    alice = Scope("alice")
    ep = memory.remember("We flew to Kyoto", alice)[0]
    fact = memory.add_fact(
        "Alice flew to Kyoto", alice, category=Category.EVENT, sources=[ep.id], importance=0.3
    )
    memory.consolidate(alice)
    assert topic_key(fact) == "events"
    doc, version = memory.doc("events", alice)
    [bullet] = [b for s in doc.sections for b in s.bullets]
    memory.apply_doc(
        "events",
        alice,
        [Operation(OpKind.DELETE, bullet.id, reason=DeleteReason.USER_REQUEST)],
        expected_version=version,
    )
    # the events document speaks for the fact: deleted by hand, nothing stands for it now
    assert spoken_for(memory.store, alice, [fact]) == {fact.id: []}


def test_bench_profile_lists_slots_per_main_speaker(memory: Memory, tmp_path: Path) -> None:
    from memstrata.bench.profile_slots import run_profile_slots

    turns = [
        {"speaker": "Mel", "dia_id": "D1:1", "text": "My husband and I love hiking."},
        {"speaker": "Caro", "dia_id": "D1:2", "text": "I'm from Sweden."},
        {"speaker": "Caro", "dia_id": "D1:3", "text": "Nice!"},
    ]
    sample = {
        "sample_id": "c1",
        "conversation": {
            "speaker_a": "Caro",
            "speaker_b": "Mel",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "qa": [],
    }
    data = tmp_path / "one.json"
    data.write_text(json.dumps([sample]), encoding="utf-8")
    result = run_profile_slots(memory, data)
    [conv] = result["conversations"]  # type: ignore[misc]
    assert conv["user"] == "Caro"
    assert conv["slots"] == {
        "Caro": {"home country": "Sweden"},
        "Mel": {"partner": "husband", "interests": "hiking"},
    }


def test_a_chinese_conversation_of_two_gets_a_profile_and_people(memory: Memory) -> None:
    said = [
        ("我住在杭州，我是一名护士。", "小红", "s1"),
        ("我对花生过敏。", "小红", "s1"),
        ("我养了一只猫。", "小明", "s1"),
        ("我很喜欢爬山。", "小明", "s2"),
        ("我最喜欢的水果是芒果。", "小红", "s2"),
    ]
    for text, who, session in said:
        memory.remember(_turn(text, who, session), ROOM)
    memory.extract(ROOM)
    memory.consolidate(ROOM)
    fields = {k: v.value for k, v in memory.profile(ROOM).fields.items()}
    assert fields["name"] == "小红" and fields["residence"] == "杭州" and fields["job"] == "护士"
    assert fields["favorite 水果"] == "芒果"
    doc, _ = memory.doc("essentials", ROOM)
    sections = {s.heading: [_undated(b.text) for b in s.bullets] for s in doc.sections}
    assert sections["Safety"] == ["小红对花生过敏"]  # an allergy is a safety fact, first in L1
    assert "pets: 猫" in sections["People: 小明"]
    assert "小明很喜欢爬山" in sections["People: 小明"]


def test_a_hand_edit_of_the_essentials_outlasts_the_next_consolidation(memory: Memory) -> None:
    _two_speakers(memory)
    doc, version = memory.doc("essentials", ROOM)
    bullets = {_undated(b.text): b.id for s in doc.sections for b in s.bullets}
    memory.apply_doc(
        "essentials",
        ROOM,
        [
            Operation(OpKind.DELETE, bullets["partner: husband"], reason=DeleteReason.USER_REQUEST),
            Operation(
                OpKind.MOVE,
                bullets["Melanie loves camping with their family"],
                section="Preferences",
                position=0,
            ),
        ],
        expected_version=version,
    )
    memory.remember(_turn("I love reading poetry.", "Caroline", "s3"), ROOM)
    memory.extract(ROOM)
    report = memory.consolidate(ROOM)
    assert report.facts_read == 1
    doc, _ = memory.doc("essentials", ROOM)
    sections = {s.heading: [_undated(b.text) for b in s.bullets] for s in doc.sections}
    assert "partner: husband" not in str(sections)  # deleted by hand: not back
    assert sections["Preferences"][0] == "Melanie loves camping with their family"  # moved
    assert "Caroline loves reading poetry" in sections["Preferences"]
    assert "partner: husband" not in memory.wake_up(ROOM).text


def test_a_better_supported_item_takes_the_place_of_a_weaker_one(memory: Memory) -> None:
    from memstrata.consolidate import Consolidator

    def run() -> dict[str, str]:
        Consolidator(memory.store, memory.documents, memory.runs, essentials_budget=30).update(ROOM)
        doc, _ = memory.doc("essentials", ROOM)
        return {_undated(b.text): b.id for s in doc.sections for b in s.bullets}

    things = ("green tea", "jazz records", "chess openings")
    for i, thing in enumerate(things):
        memory.remember(_turn(f"I love {thing}.", "Ann", f"s{i + 1}"), ROOM)
    memory.extract(ROOM)
    first = run()
    assert 0 < len(first) < 3  # not all fit in 30 tokens
    left_out = next(t for t in things if f"Ann loves {t}" not in first)
    for session in ("s4", "s5"):  # said again in two more sessions: better supported
        memory.remember(_turn(f"I love {left_out}.", "Ann", session), ROOM)
    memory.extract(ROOM)
    second = run()
    assert f"Ann loves {left_out}" in second and len(second) == len(first)
    [gone] = [text for text in first if text not in second]
    last = memory.history(first[gone], ROOM)[-1]
    assert (last.op, last.reason) == (HistoryOp.DELETE, "low-signal")  # back to L2 only


def _undated(text: str) -> str:
    """A bullet's text without the date curation serves it with ("(as of 2023-05-01)")."""
    return re.sub(r" \((?:since )?[^()]*\d{4}[^()]*\)$", "", text)


@pytest.mark.parametrize(
    ("text", "name", "fill"),
    [
        ("Iron Man is Nate's top pick.", "Nate", SlotFill("favorite", "Iron Man")),
        (
            "Jon loves all dances, but contemporary is Jon's top pick.",
            "Jon",
            SlotFill("favorite", "contemporary"),
        ),
        (
            "Wow Jon, same here! Dance is pretty much Gina's go-to for stress relief.",
            "Gina",
            SlotFill("favorite", "Dance"),
        ),
        ("Pizza is Tim's favorite food.", "Tim", SlotFill("favorite food", "Pizza")),
        ("That is Tim's favorite.", "Tim", None),
    ],
)
def test_a_favourite_said_before_whose_it_is_fills_the_slot(
    text: str, name: str, fill: SlotFill | None
) -> None:
    assert slots_in(text, name) == ([] if fill is None else [fill])


@pytest.mark.parametrize(
    ("liked", "activity"),
    [
        ("love writing some", "writing"),
        ("love writing another one", "writing"),
        ("love camping trips with my fam", "camping trips"),
        ("enjoy spending time", None),
        ("love helping out", None),
        ("love curling up", None),
        ("love creating a safe and inclusive space", None),  # cut inside its noun phrase
    ],
)
def test_an_interest_is_an_activity_named_whole(liked: str, activity: str | None) -> None:
    from memstrata.curate.essentials import _activity

    assert _activity(liked) == activity


def test_a_persons_slots_count_the_needs_their_safety_section_states() -> None:
    from memstrata.curate.essentials import Person

    person = Person("Joanna", needs={"allergy": ["cockroaches", "cockroaches", "fur"]})
    assert person.slot_values() == {"allergies": "cockroaches; fur"}


@pytest.mark.parametrize(
    ("said", "slots"),
    [
        ("I want my kids to be happy", ["child:kids"]),  # "want" is no name
        ("Sara, my daughter, loves it", ["child:daughter", "child:Sara"]),
        ("my partner and I went hiking", []),  # "partner" alone says nothing of them
        ("my partner Alex is great", ["partner"]),
    ],
)
def test_a_relation_is_named_by_a_name_not_by_the_verb_before_it(
    said: str, slots: list[str]
) -> None:
    from memstrata.curate.frame_reader import frames_in

    assert [f.slot for f in frames_in(said)] == slots


def test_a_moment_enjoyed_is_no_lasting_preference(memory: Memory) -> None:
    me = Scope("fang")
    turns = ["今天早上闺女带我去喝早茶 虾饺真好吃 就是贵", "I love hiking in the Peak District."]
    memory.remember(
        [Turn(text=t, role=Role.USER, time=datetime(2026, 3, 1, tzinfo=UTC)) for t in turns], me
    )
    memory.extract(me)
    memory.consolidate(me)
    woken = memory.wake_up(me).text
    assert "虾饺" not in woken and "hiking" in woken
