"""The profile: slots fill from what the facts state; style preferences need two sessions."""

from __future__ import annotations

from memstrata.api import Memory
from memstrata.model import Category, Scope, Turn

ALICE = Scope("alice")


def _say(memory: Memory, text: str, session: str) -> str:
    return memory.remember(Turn(text, speaker="Alice"), ALICE, session_id=session)[0].id


def test_a_stated_slot_fills_at_once_a_style_preference_needs_two_sessions(
    memory: Memory,
) -> None:
    first = _say(memory, "I work as a backend engineer", "s1")
    memory.add_fact(
        "Alice works as a backend engineer", ALICE, category=Category.PROFILE, sources=[first]
    )
    short = _say(memory, "Please keep answers short", "s1")
    memory.add_fact(
        "Alice prefers short answers", ALICE, category=Category.PREFERENCE, sources=[short]
    )
    report = memory.consolidate(ALICE)
    assert report.promoted == ["fields.name", "fields.job"]
    profile = memory.profile(ALICE)
    assert profile.fields["job"].value == "backend engineer" and profile.preferences == {}
    assert profile.fields["job"].confidence == 0.5  # one session
    second = _say(memory, "As a backend engineer I care about latency", "s2")
    memory.add_fact(
        "Alice works as a backend engineer", ALICE, category=Category.PROFILE, sources=[second]
    )
    again = _say(memory, "Short answers, code first", "s2")
    memory.add_fact(
        "Alice likes short answers with code first",
        ALICE,
        category=Category.PREFERENCE,
        sources=[again],
    )
    report = memory.consolidate(ALICE)
    assert report.promoted == ["fields.job", "preferences.verbosity"]
    profile = memory.profile(ALICE)
    assert set(profile.fields["job"].sources) == {first, second}
    assert profile.fields["job"].confidence == 0.75  # two sessions support it
    assert profile.preferences["verbosity"].value == "Alice likes short answers with code first"
    assert memory.consolidate(ALICE).promoted == []  # nothing new: nothing changes


def test_chinese_slots_promote_too(memory: Memory) -> None:
    a = _say(memory, "我住在杭州", "s1")
    b = _say(memory, "杭州的冬天很冷，我住在杭州西湖边", "s2")
    memory.add_fact("Alice住在杭州", ALICE, category=Category.PERSONAL, sources=[a])
    memory.add_fact("Alice住在杭州西湖边", ALICE, category=Category.PERSONAL, sources=[b])
    memory.consolidate(ALICE)
    assert memory.profile(ALICE).fields["residence"].value == "杭州西湖边"
