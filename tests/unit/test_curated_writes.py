"""Every write path of curated text is scrubbed and checks the citations it adds; no stale
record blocks a later write; ``superseded_by`` names another current fact of the scope."""

from __future__ import annotations

import pytest

from memstrata.api import Memory
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.model import Category, DocumentKind, Profile, Scope, Slot

ALICE = Scope("alice")
BOB = Scope("bob")
PRIVATE = "mail alice@example.com or call +1 415 555 0100, password: hunter22x"


def _clean(text: str) -> bool:
    return "alice@example.com" not in text and "555 0100" not in text and "hunter22x" not in text


def _topic(text: str, episode_id: str) -> dict[str, object]:
    return {
        "title": "notes",
        "sections": [
            {
                "heading": "Notes",
                "bullets": [
                    {
                        "id": "m_01JAAAAAAAAAAAAAAAAAAAAAAA",
                        "text": text,
                        "citations": [f"chat:{episode_id}"],
                    }
                ],
            }
        ],
    }


def test_updating_a_fact_text_is_scrubbed(memory: Memory) -> None:
    fact = memory.add_fact("Alice likes tea", ALICE)
    updated = memory.update(fact.id, ALICE, text=PRIVATE)
    assert _clean(updated.text) and "[REDACTED:email]" in updated.text  # type: ignore[union-attr]
    assert _clean(str([h.data for h in memory.history(fact.id, ALICE)]))


def test_updating_a_document_is_scrubbed_and_checks_its_citations(memory: Memory) -> None:
    ep = memory.remember(["I take notes"], ALICE)[0]
    stored = memory.store.put_document(
        ALICE, DocumentKind.TOPIC, "notes", _topic("x", ep.id), expected_version=0
    )
    updated = memory.update(stored.id, ALICE, content=_topic(PRIVATE, ep.id))
    assert _clean(str(updated.content)) and "[REDACTED:phone]" in str(updated.content)  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError, match="do not exist"):
        memory.update(stored.id, ALICE, content=_topic("y", "ep_01JAAAAAAAAAAAAAAAAAAAAAAA"))
    with pytest.raises(InvalidInputError):
        memory.update(stored.id, ALICE, content={"title": "no sections"})
    no_id = _topic("z", ep.id)
    no_id["sections"][0]["bullets"][0]["id"] = ""  # type: ignore[index]
    with pytest.raises(InvalidInputError, match="item id"):
        memory.update(stored.id, ALICE, content=no_id)


def test_updating_the_profile_or_state_over_update(memory: Memory) -> None:
    ep = memory.remember(["I am Alice"], ALICE)[0]
    profile = memory.put_profile(Profile(fields={"name": Slot("Alice", (ep.id,))}), ALICE)
    doc = memory.store.get_document(ALICE, DocumentKind.PROFILE, "profile")
    assert doc is not None and profile.version == 1
    content = {"fields": {"context": {"value": PRIVATE, "sources": [ep.id]}}, "preferences": {}}
    updated = memory.update(doc.id, ALICE, content=content)
    assert _clean(str(updated.content))  # type: ignore[union-attr]
    missing = {"fields": {"name": {"value": "A", "sources": ["ep_01JAAAAAAAAAAAAAAAAAAAAAAA"]}}}
    with pytest.raises(InvalidInputError, match="not in scope"):
        memory.update(doc.id, ALICE, content=missing)
    memory.consolidate(ALICE)
    state = memory.store.get_document(ALICE, DocumentKind.STATE, "consolidation")
    if state is not None:
        with pytest.raises(InvalidInputError, match="state"):
            memory.update(state.id, ALICE, content={"last_fact_id": "x"})


def test_profile_and_identity_written_by_hand_are_scrubbed(memory: Memory) -> None:
    ep = memory.remember(["I am Alice"], ALICE)[0]
    profile = memory.put_profile(Profile(fields={"context": Slot(PRIVATE, (ep.id,))}), ALICE)
    assert _clean(profile.fields["context"].value)
    identity = memory.set_identity("I serve Alice. Her password: hunter22x", ALICE)
    assert "hunter22x" not in identity.text and "I serve Alice" in identity.text
    doc = memory.store.get_document(ALICE, DocumentKind.IDENTITY, "identity")
    assert doc is not None
    updated = memory.update(doc.id, ALICE, content={"text": "Mail alice@example.com, pin: 1234"})
    assert "alice@example.com" in str(updated.content)  # the user's own words stay
    updated = memory.update(doc.id, ALICE, content={"text": "her password: hunter22x"})
    assert "hunter22x" not in str(updated.content)  # secrets do not
    with pytest.raises(InvalidInputError):
        memory.update(doc.id, ALICE, content={"text": 3})


def test_http_patch_is_scrubbed(memory: Memory) -> None:

    from tests.keyed import keyed_client

    fact = memory.add_fact("Alice likes tea", ALICE)
    client = keyed_client(memory)
    r = client.patch(f"/v1/items/{fact.id}?user=alice", json={"changes": {"text": PRIVATE}})
    assert r.status_code == 200 and _clean(r.json()["text"])


def test_superseded_by_names_another_fact_of_the_scope(memory: Memory) -> None:
    old = memory.add_fact("Alice lives in Paris", ALICE, category=Category.PERSONAL)
    new = memory.add_fact("Alice lives in Kyoto", ALICE, category=Category.OTHER)
    bobs = memory.add_fact("Bob lives in Rome", BOB)
    with pytest.raises(InvalidInputError, match="itself"):
        memory.update(old.id, ALICE, superseded_by=old.id)
    with pytest.raises(NotFoundError):
        memory.update(old.id, ALICE, superseded_by="fa_01JAAAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(NotFoundError):
        memory.update(old.id, ALICE, superseded_by=bobs.id)
    with pytest.raises(InvalidInputError):
        memory.update(old.id, ALICE, superseded_by=new.sources[0])  # not a fact id
    done = memory.update(old.id, ALICE, superseded_by=new.id)
    assert done.superseded_by == new.id  # type: ignore[union-attr]


def test_a_fact_or_profile_with_a_stale_source_can_still_be_updated(memory: Memory) -> None:
    one, two = memory.remember(["I am Alice", "I like tea"], ALICE)
    fact = memory.add_fact("Alice likes tea", ALICE, sources=[one.id, two.id])
    lonely = memory.add_fact("Alice is Alice", ALICE, sources=[one.id])
    memory.put_profile(
        Profile(
            fields={"name": Slot("Alice", (one.id,))},
            preferences={"other": Slot("tea", (two.id,))},
        ),
        ALICE,
    )
    memory.store.delete_episodes(ALICE, [one.id])  # an older delete: copies left behind
    memory.update(fact.id, ALICE, importance=0.2)
    memory.update(lonely.id, ALICE, importance=0.3)  # it cites nothing now, yet can be closed
    current = memory.profile(ALICE)
    memory.put_profile(
        Profile(
            fields=current.fields,
            preferences={"other": Slot("green tea", (two.id,))},
            version=current.version,
        ),
        ALICE,
    )
    assert memory.profile(ALICE).preferences["other"].value == "green tea"
