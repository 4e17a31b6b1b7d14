"""Curated documents through the facade: preview, apply, conflicts, history, export/import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.errors import ConflictError, InvalidInputError
from memstrata.ids import new_id
from memstrata.model import DeleteReason, HistoryOp, Profile, Scope, Slot
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice")


def _seed(memory: Memory) -> tuple[str, str]:
    tea, work = memory.remember(
        ["I love green tea. 我爱喝绿茶。", "I'm a backend engineer"], ALICE, session_id="s1"
    )
    return tea.id, work.id


def test_apply_a_batch_then_read_it_back(memory: Memory) -> None:
    tea, work = _seed(memory)
    doc, version = memory.doc("essentials", ALICE)
    assert version == 0 and doc.sections == ()
    ops = [
        Operation(
            OpKind.ADD,
            section="Preferences",
            text="Likes green tea 喜欢绿茶",
            citations=(Citation("chat", tea),),
        ),
        Operation(
            OpKind.ADD,
            section="Profile",
            text="Backend engineer",
            citations=(Citation("chat", work),),
        ),
    ]
    preview = memory.preview_doc("essentials", ALICE, ops)
    assert preview.base_version == 0 and "+- Likes green tea" in preview.diff
    assert memory.doc("essentials", ALICE)[1] == 0  # a preview writes nothing
    doc, version = memory.apply_doc("essentials", ALICE, ops, expected_version=0)
    assert version == 1 and [s.heading for s in doc.sections] == ["Preferences", "Profile"]
    markdown, _ = memory.doc_markdown("essentials", ALICE)
    assert "Likes green tea 喜欢绿茶 [^1]" in markdown and f"[^1]: chat:{tea}" in markdown


def test_stale_versions_conflict_and_change_nothing(memory: Memory) -> None:
    tea, _ = _seed(memory)
    add = [Operation(OpKind.ADD, section="S", text="x", citations=(Citation("chat", tea),))]
    memory.apply_doc("travel", ALICE, add, expected_version=0)
    with pytest.raises(ConflictError):
        memory.apply_doc("travel", ALICE, add, expected_version=0)
    with pytest.raises(ConflictError):
        memory.preview_doc("travel", ALICE, add, expected_version=5)
    assert memory.doc("travel", ALICE)[1] == 1


def test_a_bad_operation_or_citation_rejects_the_whole_batch(memory: Memory) -> None:
    tea, _ = _seed(memory)
    good = Operation(OpKind.ADD, section="S", text="fine", citations=(Citation("chat", tea),))
    bad = Operation(OpKind.DELETE, "m_01AAAAAAAAAAAAAAAAAAAAAAAA", reason=DeleteReason.STALE)
    with pytest.raises(InvalidInputError, match="operation 2"):
        memory.apply_doc("t", ALICE, [good, bad], expected_version=0)
    ghost = Operation(
        OpKind.ADD, section="S", text="x", citations=(Citation("chat", new_id("ep")),)
    )
    with pytest.raises(InvalidInputError, match="do not exist"):
        memory.apply_doc("t", ALICE, [good, ghost], expected_version=0)
    other = memory.remember("bob's turn", "bob")[0]
    foreign = Operation(OpKind.ADD, section="S", text="x", citations=(Citation("chat", other.id),))
    with pytest.raises(InvalidInputError, match="do not exist"):
        memory.apply_doc("t", ALICE, [foreign], expected_version=0)
    assert memory.doc("t", ALICE)[1] == 0


def test_every_operation_is_in_the_bullets_history(memory: Memory, clock: FixedClock) -> None:
    tea, _work = _seed(memory)
    _, v1 = memory.apply_doc(
        "t",
        ALICE,
        [Operation(OpKind.ADD, section="A", text="one", citations=(Citation("chat", tea),))],
        expected_version=0,
    )
    doc, _ = memory.doc("t", ALICE)
    item = doc.sections[0].bullets[0].id
    clock.advance(minutes=1)
    memory.apply_doc(
        "t", ALICE, [Operation(OpKind.EDIT, item, text="one, edited")], expected_version=v1
    )
    memory.apply_doc(
        "t", ALICE, [Operation(OpKind.MOVE, item, section="B")], expected_version=v1 + 1
    )
    memory.apply_doc(
        "t",
        ALICE,
        [Operation(OpKind.DELETE, item, reason=DeleteReason.SUPERSEDED)],
        expected_version=v1 + 2,
    )
    hist = memory.history(item, ALICE)
    assert [h.op for h in hist] == [
        HistoryOp.CREATE,
        HistoryOp.UPDATE,
        HistoryOp.MOVE,
        HistoryOp.DELETE,
    ]
    assert hist[1].data["text"] == "one, edited" and hist[2].data["section"] == "B"
    assert hist[3].reason == "superseded"


def test_a_bullet_written_without_citation_cites_its_own_words(memory: Memory) -> None:
    doc, _ = memory.apply_doc(
        "t",
        ALICE,
        [Operation(OpKind.ADD, section="A", text="Allergic to peanuts")],
        expected_version=0,
    )
    [citation] = doc.sections[0].bullets[0].citations
    assert citation.surface == "manual"
    assert memory.get(citation.episode_id, ALICE).text == "Allergic to peanuts"  # type: ignore[union-attr]


def test_preview_from_edited_markdown(memory: Memory) -> None:
    tea, _ = _seed(memory)
    memory.apply_doc(
        "t",
        ALICE,
        [Operation(OpKind.ADD, section="A", text="likes tea", citations=(Citation("chat", tea),))],
        expected_version=0,
    )
    markdown, _version = memory.doc_markdown("t", ALICE)
    preview = memory.preview_doc("t", ALICE, markdown.replace("likes tea", "likes green tea"))
    [op] = preview.operations
    assert op.kind == OpKind.EDIT and op.text == "likes green tea"
    assert "\n-- likes tea" in preview.diff and "\n+- likes green tea" in preview.diff


def test_export_then_import_restores_the_same_memory(tmp_path: Path, clock: FixedClock) -> None:
    source = Memory.open(settings=load_settings(data_dir=tmp_path / "a"), clock=clock)
    scope = Scope("alice")
    tea, work = _seed(source)
    thread_ep = source.remember("线程里的一句话", Scope("alice", "t1"))[0]
    fact = source.add_fact("Alice likes green tea", scope, category="preference", sources=[tea])
    source.update(fact.id, scope, importance=0.9)
    source.add_fact("Thread fact", Scope("alice", "t1"), sources=[thread_ep.id])
    source.set_identity("I serve Alice.\n我为 Alice 服务。\n", scope)
    source.put_profile(Profile(fields={"role": Slot("backend engineer", (work,))}), scope)
    source.apply_doc(
        "essentials",
        scope,
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
    source.apply_doc(
        "hobbies",
        scope,
        [
            Operation(
                OpKind.ADD,
                section="Outdoors",
                text="Hikes 梧桐山",
                citations=(Citation("chat", tea),),
            )
        ],
        expected_version=0,
    )
    out = tmp_path / "export"
    manifest = source.export_markdown(scope, out)
    assert (out / "identity.md").read_text(
        encoding="utf-8"
    ) == "I serve Alice.\n我为 Alice 服务。\n\n"
    assert (out / "topics" / "hobbies.md").exists() and (out / "essentials.md").exists()
    assert manifest["facts"] == 2
    target = Memory.open(settings=load_settings(data_dir=tmp_path / "b"), clock=clock)
    restored = target.import_markdown(out)
    assert restored == scope

    def everything(mem: Memory) -> list[str]:
        return sorted(json.dumps(r, sort_keys=True, ensure_ascii=False) for r in mem.export(scope))

    assert everything(target) == everything(source)
    assert target.identity(scope).text == "I serve Alice.\n我为 Alice 服务。\n"
    with pytest.raises(InvalidInputError, match="empty scope"):
        target.import_markdown(out)
    source.close()
    target.close()
    with Memory.open(settings=load_settings(data_dir=tmp_path / "c"), clock=clock) as third:
        assert third.import_markdown(out, user="alice2") == Scope("alice2")
        assert third.stats("alice2").facts_current == 2 and third.stats("alice").episodes == 0


def test_import_of_a_bad_directory_is_a_clear_error(memory: Memory, tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no manifest"):
        memory.import_markdown(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "other"}')
    with pytest.raises(InvalidInputError, match="not a memstrata-markdown"):
        memory.import_markdown(tmp_path)
