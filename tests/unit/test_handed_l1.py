"""What every session is handed, on a realistic conversation: current over stale, dated,
safety first, lasting over passing, slot values whole; and what a fact filed by hand gets."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from memstrata.api import Memory
from memstrata.curate.dating import dated
from memstrata.model import Category, Fact, Role, Scope, Turn
from tests.conftest import FixedClock

LIN = Scope("lin")

SESSIONS = [
    (
        datetime(2026, 3, 6, 10, tzinfo=UTC),
        [
            ("user", "Hi! I'm Lin Wei, a product manager at Tencent in Shenzhen."),
            ("assistant", "Nice to meet you, Lin Wei!"),
            ("user", "I'm severely allergic to shellfish. 虾和螃蟹都不能吃，吃了会过敏休克。"),
            ("assistant", "Noted. I'll never suggest dishes with shellfish."),
            ("user", "I drink coffee every morning, usually a flat white."),
            ("user", "My husband 王磊 and I are planning a trip to Kyoto in May."),
            ("user", "Last Friday I finished the quarterly review."),
        ],
    ),
    (
        datetime(2026, 5, 20, 9, tzinfo=UTC),
        [
            (
                "user",
                "Big news: I accepted an offer from CATL, I'll be a battery product lead there.",
            ),
            ("user", "We moved from Shenzhen to Ningde last week."),
            ("user", "The Kyoto trip is postponed to October."),
            ("user", "我女儿小雨下个月上小学。"),
            ("user", "I'm gonna head out soon, need to pick up groceries tonight."),
        ],
    ),
    (
        datetime(2026, 8, 2, 20, tzinfo=UTC),
        [
            ("user", "Actually I'm only allergic to shrimp, crab is fine — my doctor retested me."),
            ("user", "我现在不喝咖啡了，只喝绿茶。"),
            ("user", "I go running every morning at 6:30."),
        ],
    ),
]


def _told(memory: Memory) -> str:
    for number, (day, turns) in enumerate(SESSIONS, start=1):
        memory.remember(
            [
                Turn(text=t, speaker=r, role=Role(r), time=day, session_id=f"s{number}")
                for r, t in turns
            ],
            LIN,
        )
    memory.extract(LIN)
    memory.consolidate(LIN)
    return memory.wake_up(LIN).text


def test_what_every_session_is_handed_is_current_dated_and_safe(
    memory: Memory, clock: FixedClock
) -> None:
    clock.value = datetime(2026, 9, 1, tzinfo=UTC)
    text = _told(memory)
    lines = text.splitlines()
    # safety first, in its current form (the correction replaced the shellfish allergy)
    assert lines[1] == "## Safety" and "only allergic to shrimp" in lines[2]
    assert "shellfish" not in text
    # current state, never the stale one
    assert "employer: CATL" in text and "Tencent" not in text
    assert "residence: Ningde (since week of 2026-05-11)" in text and "Shenzhen" not in text
    assert "job: battery product lead" in text and "product manager" not in text
    assert "只喝绿茶" in text and "flat white" not in text
    # whole values with the names said
    assert "partner: husband 王磊" in text and "女儿小雨" in text
    # the plan as postponed, dated; passing moments stay out
    assert "Kyoto trip is postponed to October (2026-10)" in text
    assert "groceries" not in text  # a passing moment stays in the archive
    # a moment of the past that sets no state is an anecdote: the archive keeps it, dated
    assert "quarterly review" not in text
    [review] = [f for f in memory.list(LIN, "fact") if "quarterly" in getattr(f, "text", "")]
    assert isinstance(review, Fact) and dated(review).endswith("(2026-02-27)")  # "last Friday"
    found = memory.context("When did I finish the quarterly review?", LIN).text
    assert "said 2026-03-06: user: Last Friday I finished the quarterly review." in found
    # every bullet says when, but for the slots that do not change over a life
    steady = ("- name:", "- children:", "- pets:", "- family:", "- languages:", "- interests:")
    bullets = [line for line in lines if line.startswith("- ") and not line.startswith(steady)]
    assert bullets and all("(" in line and "20" in line for line in bullets), bullets


def test_a_plan_whose_time_has_passed_leaves_l1(memory: Memory, clock: FixedClock) -> None:
    clock.value = datetime(2026, 11, 20, tzinfo=UTC)
    assert "Kyoto" not in _told(memory)  # October is over: the archive keeps it


def test_a_fact_filed_by_hand_is_served_at_once(memory: Memory) -> None:
    """No consolidation needed: a preference or a health fact filed directly is in wake_up
    (a health one in Safety, first)."""
    memory.add_fact("Alice prefers window seats on long flights", "alice", category="preference")
    memory.add_fact(
        "Alice is allergic to penicillin", "alice", category="health", slot="allergy:penicillin"
    )
    text = memory.wake_up("alice").text
    assert "window seats" in text
    assert text.splitlines()[1] == "## Safety" and "penicillin" in text.splitlines()[2]


def test_a_childs_allergy_corrected_is_served_as_corrected(memory: Memory) -> None:
    scope = Scope("hejing")
    turns = [
        ("我儿子乐乐今年七岁，上二年级", datetime(2026, 1, 8, tzinfo=UTC)),
        (
            "乐乐花生过敏，很严重，上次误吃了一口花生酱嘴都肿了",
            datetime(2026, 1, 8, 0, 1, tzinfo=UTC),
        ),
        (
            "纠正一下，乐乐其实不是花生过敏，过敏原检测出来是腰果和开心果，花生没事",
            datetime(2026, 6, 20, tzinfo=UTC),
        ),
    ]
    for i, (text, at) in enumerate(turns):
        memory.remember(
            [Turn(text, speaker="user", role=Role.USER, time=at)], scope, session_id=f"s{i}"
        )
    memory.extract(scope)
    memory.consolidate(scope)
    safety = memory.wake_up(scope).text.split("## Profile")[0]
    assert "乐乐对腰果和开心果过敏" in safety
    assert "对花生过敏" not in safety and "用户对花生不过敏" not in safety


def test_an_old_home_said_in_words_is_no_key_fact_beside_the_new_one(memory: Memory) -> None:
    """A fact without a slot that states a home or a job in its words ("The user lives in a
    flatshare in Brixton ...", from before the frames read the dwelling) is not served beside
    a newer home: L1 holds the current value only; the fact stays in the archive."""
    scope = Scope("priya")
    old = Fact(
        id="fa_old",
        scope=scope,
        text="The user lives in a flatshare in Brixton with two other nurses",
        category=Category.PERSONAL,
        confidence=0.85,
        importance=0.7,
        topic=None,
        sources=(),
        valid_from=datetime(2026, 1, 12, tzinfo=UTC),
        valid_to=None,
        superseded_by=None,
        created_at=datetime(2026, 1, 12, tzinfo=UTC),
        updated_at=datetime(2026, 1, 12, tzinfo=UTC),
    )
    memory.remember(
        [
            Turn(
                "I live in a flatshare in Brixton with two other nurses.",
                speaker="user",
                role=Role.USER,
                time=datetime(2026, 1, 12, tzinfo=UTC),
            )
        ],
        scope,
    )
    [turn] = memory.list(scope, "episode")
    memory.store.add_fact(scope, replace(old, sources=(turn.id,)))
    memory.remember(
        [
            Turn(
                "We got the flat in Peckham, moved in on the 1st.",
                speaker="user",
                role=Role.USER,
                time=datetime(2026, 6, 5, tzinfo=UTC),
            )
        ],
        scope,
    )
    memory.extract(scope)
    memory.consolidate(scope)
    text = memory.wake_up(scope).text
    assert "residence: Peckham" in text and "Brixton" not in text
    assert any(f.fact.id == "fa_old" for f in memory.facts(scope))  # kept, not deleted
