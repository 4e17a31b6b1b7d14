"""Document keys: the L0 identity is no curated document; a preview's ids are the applied ids."""

from __future__ import annotations

import pytest

from memstrata.api import Memory
from memstrata.document.ops import Operation, OpKind
from memstrata.errors import InvalidInputError


def test_identity_is_not_a_document_key(memory: Memory) -> None:
    add = [Operation(OpKind.ADD, section="S", text="x")]
    with pytest.raises(InvalidInputError, match="set_identity"):
        memory.doc_markdown("identity", "alice")
    with pytest.raises(InvalidInputError, match="/v1/identity"):
        memory.preview_doc("identity", "alice", add)
    with pytest.raises(InvalidInputError, match="memstrata identity"):
        memory.apply_doc("identity", "alice", add, expected_version=0)
    memory.set_identity("I help Alice.", "alice")
    assert memory.identity("alice").text == "I help Alice."


def test_a_fact_about_identity_is_filed_under_its_category(memory: Memory) -> None:
    memory.add_fact("Alice is a nurse", "alice", category="profile", topic="Identity")
    memory.consolidate("alice")
    markdown, version = memory.doc_markdown("profile", "alice")
    assert "Alice is a nurse" in markdown and version == 1
    assert memory.identity("alice").version == 0


def test_applying_a_preview_stores_the_ids_it_showed(memory: Memory) -> None:
    preview = memory.preview_doc(
        "essentials", "alice", [Operation(OpKind.ADD, section="Drinks", text="Likes tea")]
    )
    [shown] = [op.id for op in preview.operations]
    assert shown and shown in preview.after
    memory.apply_doc("essentials", "alice", preview.operations, expected_version=0)
    markdown, _ = memory.doc_markdown("essentials", "alice")
    assert f"<!--{shown}-->" in markdown
