"""Import of an export into another user of the same store: every id new, every link remapped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.errors import InvalidInputError
from memstrata.model import Scope

_ID = re.compile(r"\b(?:ep|fa|doc|m|run)_[0-9A-Z]{26}\b")


def _ids(mem: Memory, scope: Scope) -> set[str]:
    return set(_ID.findall(json.dumps(list(mem.export(scope)))))


@pytest.fixture
def out(memory: Memory, tmp_path: Path) -> Path:
    """Alice's sample memory, exported as markdown to a folder."""
    memory.load_sample("alice")
    folder = tmp_path / "export"
    memory.export_markdown("alice", folder)
    return folder


def test_import_into_another_user_of_the_same_store(memory: Memory, tmp_path: Path) -> None:
    memory.load_sample("alice")
    alice = Scope("alice")
    facts = memory.list(alice, "fact", limit=100)
    old, new = facts[0], facts[1]
    memory.update(old.id, alice, superseded_by=new.id, valid_to=new.valid_from)
    before = sorted(json.dumps(r, sort_keys=True) for r in memory.export(alice))
    out = tmp_path / "export"
    memory.export_markdown(alice, out)

    assert memory.import_markdown(out, user="bob") == Scope("bob")
    bob = Scope("bob")
    assert sorted(json.dumps(r, sort_keys=True) for r in memory.export(alice)) == before
    assert _ids(memory, bob).isdisjoint(_ids(memory, alice))
    assert memory.stats(bob).episodes == memory.stats(alice).episodes
    bob_episodes = {e.id for e in memory.list(bob, "episode", limit=1000)}
    bob_facts = {f.id: f for f in memory.list(bob, "fact", limit=1000)}
    for fact in bob_facts.values():
        assert set(fact.sources) <= bob_episodes
    superseded = [f for f in bob_facts.values() if f.superseded_by]
    assert len(superseded) == 1 and superseded[0].superseded_by in bob_facts
    for doc in memory.list(bob, "document", limit=100):
        for cited in re.findall(r":(ep_[0-9A-Z]{26})", json.dumps(doc.content)):
            assert cited in bob_episodes
    # the restored copy is a working memory: curation, edits and deletes pass their checks
    alice_episodes = memory.stats(alice).episodes
    memory.remember("I moved to Hangzhou", bob)
    memory.consolidate(bob)
    memory.forget(sorted(bob_episodes)[0], bob)
    assert memory.stats(alice).episodes == alice_episodes


def test_importing_twice_into_one_user_is_refused_and_writes_nothing(
    memory: Memory, out: Path
) -> None:
    memory.import_markdown(out, user="bob")
    snapshot = sorted(json.dumps(r, sort_keys=True) for r in memory.export("bob"))
    with pytest.raises(InvalidInputError, match="empty scope"):
        memory.import_markdown(out, user="bob")
    with pytest.raises(InvalidInputError, match="empty scope"):
        memory.import_markdown(out)
    assert sorted(json.dumps(r, sort_keys=True) for r in memory.export("bob")) == snapshot


def test_a_manifest_naming_a_file_outside_the_export_is_refused(memory: Memory, out: Path) -> None:
    (out.parent / "secret.md").write_text("# Secret\n", encoding="utf-8")
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    manifest["documents"][0]["file"] = "../secret.md"
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(InvalidInputError, match="outside"):
        memory.import_markdown(out, user="bob")
    assert memory.stats("bob").episodes == 0


def test_reimport_after_deleting_everything_says_how_to_import(memory: Memory, out: Path) -> None:
    for kind in ("document", "fact", "episode"):
        for record in memory.list("alice", kind, limit=1000):  # type: ignore[arg-type]
            memory.delete(record.id, "alice")
    with pytest.raises(InvalidInputError, match="--user") as info:
        memory.import_markdown(out)
    assert "UNIQUE" not in str(info.value)
    assert memory.stats("alice").episodes == 0
    assert memory.import_markdown(out, user="alice-again") == Scope("alice-again")


@pytest.mark.parametrize("target", ["facts.jsonl", "manifest.json"])
def test_an_export_holding_nan_is_refused_whole(memory: Memory, out: Path, target: str) -> None:
    path = out / target
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace('"confidence": 1.0', '"confidence": NaN', 1).replace(
            '"format_version": 1', '"format_version": 1, "x": NaN'
        ),
        encoding="utf-8",
    )
    with pytest.raises(InvalidInputError, match="NaN"):
        memory.import_markdown(out, user="bob")
    assert memory.stats("bob").episodes == 0
