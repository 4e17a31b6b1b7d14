"""A person's edits of the profile outlast consolidation; wake_up serves each thing once; the
user can be named per run."""

from __future__ import annotations

from datetime import UTC, datetime

from memstrata.api import Memory
from memstrata.model import DocumentKind, Profile, Role, Scope, Slot, Turn

ROOM = Scope("u", thread="conv")


def _say(memory: Memory, text: str, speaker: str, session: str) -> None:
    day = datetime(2023, 5, int(session[-1]), tzinfo=UTC)
    memory.remember(Turn(text, speaker=speaker, role=Role.USER, session_id=session, time=day), ROOM)


def _conversation(memory: Memory) -> None:
    for text, who, session in [
        ("I'm from Sweden.", "Caroline", "s1"),
        ("I play the violin.", "Caroline", "s1"),
        ("My husband and I love hiking.", "Melanie", "s1"),
        ("I'm from Sweden, it was hard to leave.", "Caroline", "s2"),
    ]:
        _say(memory, text, who, session)
    memory.extract(ROOM)
    memory.consolidate(ROOM)


def _without(profile: Profile, key: str) -> Profile:
    fields = {k: v for k, v in profile.fields.items() if k != key}
    return Profile(fields, profile.preferences, profile.version)


def _later(memory: Memory) -> None:
    """A later session with a new fact, then consolidation again."""
    _say(memory, "I love reading poetry.", "Caroline", "s3")
    memory.extract(ROOM)
    memory.consolidate(ROOM)


def test_a_slot_deleted_by_hand_does_not_come_back_from_the_same_facts(memory: Memory) -> None:
    _conversation(memory)
    profile = memory.profile(ROOM)
    assert profile.fields["home country"].value == "Sweden"
    memory.put_profile(_without(profile, "home country"), ROOM)
    _later(memory)
    _say(memory, "Sweden is where I'm from.", "Caroline", "s3")  # said again, other words
    memory.extract(ROOM)
    memory.consolidate(ROOM)
    fields = memory.profile(ROOM).fields
    assert "home country" not in fields and fields["instruments"].value == "violin"
    text = memory.wake_up(ROOM).text
    assert "Sweden" not in text  # neither the slot nor its fact among the key facts
    assert "Caroline loves reading poetry" in text


def test_a_slot_deleted_through_update_stays_deleted(memory: Memory) -> None:
    _conversation(memory)
    stored = memory.store.get_document(ROOM, DocumentKind.PROFILE, "profile")
    assert stored is not None
    content = {
        "fields": {k: v for k, v in stored.content["fields"].items() if k != "instruments"},
        "preferences": stored.content["preferences"],
    }
    memory.update(stored.id, ROOM, content=content)
    _later(memory)
    assert "instruments" not in memory.profile(ROOM).fields


def test_a_slot_edited_by_hand_is_the_persons(memory: Memory) -> None:
    _conversation(memory)
    profile = memory.profile(ROOM)
    source = profile.fields["home country"].sources
    fields = {**profile.fields, "home country": Slot("Norway", source)}
    fields["employer"] = Slot("Acme", source)  # a slot no fact states, written by hand
    memory.put_profile(Profile(fields, profile.preferences, profile.version), ROOM)
    _later(memory)
    fields = memory.profile(ROOM).fields
    assert fields["home country"].value == "Norway" and fields["employer"].value == "Acme"
    assert "Caroline is from Sweden" not in memory.wake_up(ROOM).text


def test_a_slot_consolidation_wrote_goes_when_its_fact_goes(memory: Memory) -> None:
    _conversation(memory)
    [violin] = [f for f in memory.store.iter_facts(ROOM) if "violin" in f.text]
    memory.delete(violin.id, ROOM)
    _later(memory)
    assert "instruments" not in memory.profile(ROOM).fields


def test_wake_up_serves_a_slots_fact_once(memory: Memory) -> None:
    _conversation(memory)
    text = memory.wake_up(ROOM).text
    assert "- home country: Sweden" in text and "- instruments: violin" in text
    assert "Caroline is from Sweden" not in text and "Caroline plays" not in text
    assert text.count("husband") == 1  # the people's slot, not its fact again


def test_the_user_is_named_per_run(memory: Memory) -> None:
    _conversation(memory)
    assert memory.profile(ROOM).fields["name"].value == "Caroline"
    memory.consolidate(ROOM, user_speaker="Melanie")
    _later(memory)  # a run without the name: the setting's default again
    assert memory.profile(ROOM).fields["name"].value == "Caroline"
    other = Scope("u", thread="other")
    for text, who in [("I'm from Sweden.", "Caroline"), ("My husband cooks.", "Melanie")]:
        memory.remember(Turn(text, speaker=who, role=Role.USER, session_id="s1"), other)
    memory.extract(other)
    memory.consolidate(other, user_speaker="Melanie")
    fields = memory.profile(other).fields
    assert fields["name"].value == "Melanie" and fields["partner"].value == "husband"
    doc, _ = memory.doc("essentials", other)
    assert "People: Caroline" in [s.heading for s in doc.sections]


def test_a_legacy_state_keeps_the_profile_and_records_it(memory: Memory) -> None:
    """A state written before the profile record: what the older rule wrote is taken as
    consolidation's (overwritten when L1 states it, kept otherwise), then recorded."""
    _conversation(memory)
    state = memory.store.get_document(ROOM, DocumentKind.STATE, "consolidation")
    assert state is not None and "profile" in state.content
    legacy = {k: v for k, v in state.content.items() if k not in ("profile", "facts")}
    memory.store.put_document(
        ROOM, DocumentKind.STATE, "consolidation", legacy, expected_version=state.version
    )
    profile = memory.profile(ROOM)
    source = profile.fields["name"].sources
    fields = {**profile.fields, "employer": Slot("Acme", source)}
    memory.put_profile(Profile(fields, profile.preferences, profile.version), ROOM)
    _later(memory)
    fields = memory.profile(ROOM).fields
    assert fields["employer"].value == "Acme" and fields["home country"].value == "Sweden"
    state = memory.store.get_document(ROOM, DocumentKind.STATE, "consolidation")
    assert state is not None and "fields.home country" in state.content["profile"]["slots"]


def test_a_chinese_slot_deleted_by_hand_stays_deleted(memory: Memory) -> None:
    for text, session in [("我住在杭州。", "s1"), ("我对花生过敏。", "s1")]:
        _say(memory, text, "小红", session)
    memory.extract(ROOM)
    memory.consolidate(ROOM)
    profile = memory.profile(ROOM)
    assert profile.fields["residence"].value == "杭州"
    memory.put_profile(_without(profile, "residence"), ROOM)
    _say(memory, "我很喜欢爬山。", "小红", "s2")
    memory.extract(ROOM)
    memory.consolidate(ROOM)
    fields = memory.profile(ROOM).fields
    assert "residence" not in fields
    text = memory.wake_up(ROOM).text
    assert "杭州" not in text and "小红对花生过敏" in text  # the allergy stays, in Safety


def test_a_named_user_reads_only_the_cited_turns_and_chooses_the_same(memory: Memory) -> None:
    from memstrata.consolidate import Consolidator

    _conversation(memory)
    counted = Consolidator(memory.store, memory.documents, memory.runs).selection(ROOM)
    named = Consolidator(
        memory.store, memory.documents, memory.runs, user_speaker="Caroline"
    ).selection(ROOM)
    assert counted.user == named.user == "Caroline"
    assert counted.entries == named.entries and counted.profile == named.profile
