"""Whose words the proxy stores: the user's turns under the name the memory knows the user
by, the answer under the assistant's, so curation speaks of the user by name ("Bob prefers
aisle seats", beside "Bob likes chess"), never of "the user"."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.model import Profile, Slot
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.proxied import ScriptedUpstream, captured, completion, proxy_client

#: the memory fixture with the hashing embedder and no sample (tests/conftest.py)
pytestmark = pytest.mark.light_memory


def ask(memory: Memory, user: str, text: str, answer: str = "Noted.") -> None:
    """One proxied exchange of ``user`` (named by a key bound to them), stored."""
    upstream = ScriptedUpstream(answer=completion(answer))
    with proxy_client(memory, upstream, users=[user]) as (client, app):
        sent = client.post(
            "/v1/chat/completions",
            json={"model": "m1", "messages": [{"role": "user", "content": text}]},
        )
        app.state.captures.drain(30)
    assert sent.status_code == 200, sent.text


def current_facts(memory: Memory, user: str) -> list[str]:
    return sorted(view.fact.text for view in memory.facts(user))


def test_the_users_turns_are_stored_under_their_name_and_facts_name_them(
    memory: Memory,
) -> None:
    memory.remember([{"speaker": "bob", "text": "I like chess."}], "bob")
    ask(memory, "bob", "I prefer aisle seats.", "Aisle seats it is.")
    assert captured(memory, "bob") == [
        ("user", "bob", "I prefer aisle seats."),
        ("assistant", "assistant", "Aisle seats it is."),
    ]
    memory.extract("bob")
    facts = current_facts(memory, "bob")
    assert "Bob prefers aisle seats." in facts and "Bob likes chess." in facts
    assert not [text for text in facts if "user" in text.lower()]


def test_a_user_the_profile_names_speaks_under_that_name(memory: Memory) -> None:
    said = memory.remember("Hi, I'm Lin Wei.", "u42")  # an unnamed speaker, as imports store
    memory.put_profile(Profile(fields={"name": Slot("Lin Wei", (said[0].id,))}), "u42")
    ask(memory, "u42", "I prefer aisle seats.")
    assert [speaker for _, speaker, _ in captured(memory, "u42")] == ["Lin Wei", "assistant"]
    memory.extract("u42")
    assert "Lin Wei prefers aisle seats." in current_facts(memory, "u42")


def test_a_name_already_speaking_for_the_user_is_kept(memory: Memory) -> None:
    """A name learned later does not split one person into two speakers."""
    ask(memory, "carol", "I live in Hangzhou.")
    first = memory.list("carol", "episode", limit=1)[0]
    memory.put_profile(Profile(fields={"name": Slot("Carol Chen", (first.id,))}), "carol")
    ask(memory, "carol", "I prefer aisle seats.")
    users = [speaker for role, speaker, _ in captured(memory, "carol") if role == "user"]
    assert users == ["carol", "carol"]
    memory.remember([{"speaker": "Carol Chen", "text": "I play the cello."}], "carol")
    ask(memory, "carol", "I drink green tea.")  # now both speak: the profile's name first
    assert captured(memory, "carol")[-2][1] == "Carol Chen"


def test_the_speaker_the_settings_name_is_the_users_where_it_speaks(
    data_dir: Path, clock: FixedClock
) -> None:
    settings = load_settings(data_dir=data_dir, load_sample=False, user_speaker="Dana")
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as mem:
        mem.remember([{"speaker": "Dana", "text": "I run on Sundays."}], "dana")
        ask(mem, "dana", "I prefer aisle seats.")
        ask(mem, "erin", "I prefer window seats.")  # another user: Dana never spoke there
        assert captured(mem, "dana")[0][1] == "Dana"
        assert captured(mem, "erin")[0][1] == "erin"
