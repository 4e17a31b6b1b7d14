"""Profile promotion needs support from at least two distinct sessions."""

from __future__ import annotations

from memstrata.api import Memory
from memstrata.model import Category, Scope, Turn

ALICE = Scope("alice")


def _say(memory: Memory, text: str, session: str) -> str:
    return memory.remember(Turn(text, speaker="Alice"), ALICE, session_id=session)[0].id


def test_one_session_is_not_enough_two_are(memory: Memory) -> None:
    first = _say(memory, "I work as a backend engineer", "s1")
    memory.add_fact(
        "Alice works as a backend engineer", ALICE, category=Category.PROFILE, sources=[first]
    )
    short = _say(memory, "Please keep answers short", "s1")
    memory.add_fact(
        "Alice prefers short answers", ALICE, category=Category.PREFERENCE, sources=[short]
    )
    report = memory.consolidate(ALICE)
    assert report.promoted == [] and memory.profile(ALICE).fields == {}
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
    assert report.promoted == ["fields.role", "preferences.verbosity"]
    profile = memory.profile(ALICE)
    assert profile.fields["role"].value == "a backend engineer"
    assert set(profile.fields["role"].sources) == {first, second}
    assert profile.preferences["verbosity"].value == "Alice likes short answers with code first"
    assert memory.consolidate(ALICE).promoted == []  # nothing new: nothing changes


def test_chinese_slots_promote_too(memory: Memory) -> None:
    a = _say(memory, "我住在杭州", "s1")
    b = _say(memory, "杭州的冬天很冷，我住在杭州西湖边", "s2")
    memory.add_fact("爱丽丝住在杭州", ALICE, category=Category.PERSONAL, sources=[a])
    memory.add_fact("爱丽丝住在杭州", ALICE, category=Category.PERSONAL, sources=[b])
    memory.consolidate(ALICE)
    assert memory.profile(ALICE).fields["context"].value == "杭州"
