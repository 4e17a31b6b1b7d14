"""Import is a write path of curated text: the one scrub and the one citation check apply,
and the export of a store already scrubbed still comes back exactly as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.errors import InvalidInputError, TooLargeError
from memstrata.model import Profile, Scope, Slot
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice")
EMAIL = "alice@example.com"
PHONE = "+1 415 555 0100"
PASSWORD = "password: hunter22x"


def _seeded(memory: Memory) -> str:
    tea = memory.remember(["I like green tea", "I work as a backend engineer"], ALICE)[0].id
    memory.add_fact("Alice likes green tea", ALICE, category="preference", sources=[tea])
    memory.set_identity("I serve Alice.", ALICE)
    memory.put_profile(Profile(fields={"role": Slot("backend engineer", (tea,))}), ALICE)
    memory.apply_doc(
        "essentials",
        ALICE,
        [
            Operation(
                OpKind.ADD,
                section="Preferences",
                text="Likes green tea",
                citations=(Citation("chat", tea),),
            )
        ],
        expected_version=0,
    )
    return tea


def _everything(mem: Memory, scope: Scope) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in mem.export(scope))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_hand_edited_export_is_imported_scrubbed(memory: Memory, tmp_path: Path) -> None:
    _seeded(memory)
    out = tmp_path / "export"
    memory.export_markdown(ALICE, out)
    _edit(out / "essentials.md", "Likes green tea", f"Likes green tea, mail {EMAIL}")
    _edit(out / "facts.jsonl", "Alice likes green tea", f"Alice likes green tea, call {PHONE}")
    _edit(out / "profile.json", '"backend engineer"', f'"backend engineer at {EMAIL}"')
    _edit(out / "identity.md", "I serve Alice.", f"I serve Alice. Her {PASSWORD}")

    bob = memory.import_markdown(out, user="bob")

    stored = json.dumps(list(memory.export(bob)), ensure_ascii=False)
    assert EMAIL not in stored and "555 0100" not in stored and "hunter22x" not in stored
    assert "[REDACTED:email]" in memory.doc_markdown("essentials", bob)[0]
    assert "[REDACTED:phone]" in memory.list(bob, "fact", limit=10)[0].text  # type: ignore[union-attr]
    assert "[REDACTED:email]" in memory.profile(bob).fields["role"].value
    assert "hunter22x" not in memory.identity(bob).text


def test_a_bullet_citing_an_episode_not_in_the_import_is_refused_whole(
    memory: Memory, tmp_path: Path
) -> None:
    tea = _seeded(memory)
    out = tmp_path / "export"
    memory.export_markdown(ALICE, out)
    stranger = "ep_01JAAAAAAAAAAAAAAAAAAAAAAA"
    _edit(out / "essentials.md", f"chat:{tea}", f"chat:{stranger}")

    with pytest.raises(InvalidInputError, match=stranger):
        memory.import_markdown(out, user="bob")
    with pytest.raises(InvalidInputError, match="essentials"):
        memory.import_markdown(out, user="bob")
    assert memory.stats("bob").episodes == 0 and memory.stats("bob").facts_current == 0
    assert memory.list("bob", "document", limit=10) == []


def test_a_bullet_added_by_hand_without_an_id_gets_one(memory: Memory, tmp_path: Path) -> None:
    tea = _seeded(memory)
    out = tmp_path / "export"
    memory.export_markdown(ALICE, out)
    _edit(out / "essentials.md", "\n\n---\n", "\n- Drinks it hot [^1]\n\n---\n")

    bob = memory.import_markdown(out, user="bob")

    doc, _ = memory.doc("essentials", bob)
    ids = [b.id for s in doc.sections for b in s.bullets]
    assert len(ids) == 2 and all(i.startswith("m_") and len(i) == 28 for i in ids)
    assert [b.text for s in doc.sections for b in s.bullets][1] == "Drinks it hot"
    assert tea not in json.dumps(list(memory.export(bob)))  # cited under its new id


def test_a_scrubbed_store_round_trips_exactly(tmp_path: Path, clock: FixedClock) -> None:
    with Memory.open(settings=load_settings(data_dir=tmp_path / "a"), clock=clock) as source:
        _seeded(source)
        ep = source.remember([f"reach me at {EMAIL}, {PASSWORD}"], ALICE)[0]
        source.add_fact(f"Alice's e-mail is {EMAIL}", ALICE, sources=[ep.id])
        source.set_identity(f"I serve Alice. {PASSWORD}", ALICE)
        source.apply_doc(
            "contact",
            ALICE,
            [Operation(OpKind.ADD, section="Contact", text=f"Mail {EMAIL}", citations=())],
            expected_version=0,
        )
        out = tmp_path / "export"
        source.export_markdown(ALICE, out)
        before = _everything(source, ALICE)
    assert "[REDACTED:email]" in "".join(before)
    with Memory.open(settings=load_settings(data_dir=tmp_path / "b"), clock=clock) as target:
        target.import_markdown(out)
        assert _everything(target, ALICE) == before


def test_an_export_holding_a_lone_surrogate_is_refused_whole(
    memory: Memory, tmp_path: Path
) -> None:
    _seeded(memory)
    out = tmp_path / "export"
    memory.export_markdown(ALICE, out)
    _edit(out / "episodes.jsonl", "I like green tea", "I like green tea \\ud800")
    with pytest.raises(InvalidInputError, match="surrogate"):
        memory.import_markdown(out, user="bob")
    assert memory.stats("bob").episodes == 0


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("episodes.jsonl", "I like green tea"),
        ("facts.jsonl", "Alice likes green tea"),
        ("essentials.md", "Likes green tea"),
    ],
)
def test_an_export_holding_a_text_over_the_limit_is_refused_whole(
    memory: Memory, tmp_path: Path, name: str, text: str
) -> None:
    _seeded(memory)
    out = tmp_path / "export"
    memory.export_markdown(ALICE, out)
    _edit(out / name, text, "tea " * memory.max_turn_chars)
    with pytest.raises(TooLargeError, match="max_turn_chars"):
        memory.import_markdown(out, user="bob")
    assert memory.stats("bob").episodes == 0


def test_a_bullet_added_by_hand_without_a_citation_is_refused(
    memory: Memory, tmp_path: Path
) -> None:
    _seeded(memory)
    out = tmp_path / "export"
    memory.export_markdown(ALICE, out)
    _edit(out / "essentials.md", "\n\n---\n", "\n- Drinks it hot\n\n---\n")
    with pytest.raises(InvalidInputError, match="cites no episode"):
        memory.import_markdown(out, user="bob")
    assert memory.stats("bob").episodes == 0
