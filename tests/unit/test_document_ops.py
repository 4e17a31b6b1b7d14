"""Document operations: each kind, batch atomicity, diffs of hand-edited documents, JSON."""

from __future__ import annotations

import pytest

from memstrata.document.format import Bullet, Citation, Document, Section, parse, serialize
from memstrata.document.ops import (
    Operation,
    OperationError,
    OpKind,
    apply_operations,
    diff_documents,
    operation_from_json,
    operation_to_json,
)
from memstrata.errors import InvalidInputError
from memstrata.ids import new_id
from memstrata.model import DeleteReason

A, B, C = new_id("m"), new_id("m"), new_id("m")
TEA = Citation("chat", new_id("ep"))
WORK = Citation("chat", new_id("ep"))

DOC = Document(
    "Alice",
    (
        Section(
            "Preferences",
            (
                Bullet(A, "Likes green tea 喜欢绿茶", (TEA,)),
                Bullet(B, "Prefers short answers", (TEA, WORK)),
            ),
        ),
        Section("Work", (Bullet(C, "Backend engineer", (WORK,)),)),
    ),
)


def _ids(doc: Document) -> dict[str, list[str]]:
    return {s.heading: [b.id for b in s.bullets] for s in doc.sections}


def test_add_assigns_an_id_and_can_create_a_section() -> None:
    new, [added] = apply_operations(
        DOC,
        [Operation(OpKind.ADD, section="Hobbies", text="Hikes twice a month", citations=(TEA,))],
    )
    assert added.startswith("m_") and _ids(new)["Hobbies"] == [added]
    first, _ = apply_operations(
        DOC, [Operation(OpKind.ADD, section="Work", text="x", citations=(WORK,), position=0)]
    )
    assert _ids(first)["Work"][1] == C


def test_edit_delete_move() -> None:
    edited, _ = apply_operations(DOC, [Operation(OpKind.EDIT, A, text="Likes oolong")])
    assert edited.sections[0].bullets[0].text == "Likes oolong"
    assert edited.sections[0].bullets[0].citations == (TEA,)
    gone, _ = apply_operations(DOC, [Operation(OpKind.DELETE, C, reason=DeleteReason.STALE)])
    assert _ids(gone) == {"Preferences": [A, B]}  # an emptied section disappears
    moved, _ = apply_operations(DOC, [Operation(OpKind.MOVE, B, section="Work", position=0)])
    assert _ids(moved) == {"Preferences": [A], "Work": [B, C]}
    assert DOC.sections[0].bullets[1].id == B  # the input is never modified


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (Operation(OpKind.EDIT, "m_01AAAAAAAAAAAAAAAAAAAAAAAA", text="x"), "no bullet"),
        (Operation(OpKind.EDIT, A), "changes the text"),
        (Operation(OpKind.EDIT, A, text="  "), "empty"),
        (Operation(OpKind.DELETE, A), "needs a reason"),
        (Operation(OpKind.DELETE, A, reason=DeleteReason.SOURCE_DELETED), "needs a reason"),
        (Operation(OpKind.MOVE, A), "destination"),
        (Operation(OpKind.ADD, text="x"), "needs a section"),
        (Operation(OpKind.ADD, A, section="Work", text="x"), "already in the document"),
        (Operation(OpKind.ADD, "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", section="W", text="x"), "item id"),
    ],
)
def test_one_bad_operation_rejects_the_batch(op: Operation, message: str) -> None:
    good = Operation(OpKind.EDIT, C, text="Staff engineer")
    with pytest.raises(OperationError, match=message) as info:
        apply_operations(DOC, [good, op, good])
    assert info.value.index == 1 and "operation 2" in str(info.value)


def test_a_hand_edited_file_becomes_the_right_operations() -> None:
    text = serialize(DOC)
    edited = (
        text.replace("Likes green tea 喜欢绿茶", "Likes oolong tea 喜欢乌龙茶")
        .replace(f"- Backend engineer [^2] <!--{C}-->\n", "")
        .replace(
            "## Work\n",
            f"## Work\n- Backend engineer [^2] <!--{C}-->\n- Leads the dispatch team [^2]\n",
        )
    )
    lines = edited.splitlines()
    b_line = next(line for line in lines if B in line)
    lines.remove(b_line)
    lines.insert(lines.index("## Work") + 1, b_line)
    new = parse("\n".join(lines) + "\n")
    ops = diff_documents(DOC, new)
    kinds = sorted((op.kind.value, op.id) for op in ops)
    assert ("edit", A) in kinds and ("move", B) in kinds
    assert next(op for op in ops if op.kind == OpKind.ADD).text == "Leads the dispatch team"
    assert not [op for op in ops if op.kind == OpKind.DELETE]
    result, _ = apply_operations(DOC, ops)
    assert [b.text for b in result.sections[1].bullets] == [
        "Prefers short answers",
        "Backend engineer",
        "Leads the dispatch team",
    ]
    assert result.sections[0].bullets[0].text == "Likes oolong tea 喜欢乌龙茶"


def test_a_removed_bullet_is_deleted_with_the_given_reason() -> None:
    new = Document("Alice", (DOC.sections[0],))
    [op] = diff_documents(DOC, new, reason=DeleteReason.LOW_SIGNAL)
    assert (op.kind, op.id, op.reason) == (OpKind.DELETE, C, DeleteReason.LOW_SIGNAL)


def test_diff_refuses_a_title_change_and_duplicate_ids() -> None:
    with pytest.raises(InvalidInputError, match="title"):
        diff_documents(DOC, Document("Bob", DOC.sections))
    with pytest.raises(InvalidInputError, match="twice"):  # such a document cannot even be made
        Document("Alice", (DOC.sections[0], Section("Work", (DOC.sections[0].bullets[0],))))


def test_operations_round_trip_through_json() -> None:
    ops = [
        Operation(OpKind.ADD, section="Work", text="x", citations=(WORK,), position=2),
        Operation(OpKind.DELETE, A, reason=DeleteReason.CONTRADICTED),
        Operation(OpKind.MOVE, B, section="Work"),
    ]
    assert [operation_from_json(operation_to_json(op)) for op in ops] == ops
    for bad, message in [
        ({"op": "rename"}, "'op' must be"),
        ({"op": "add", "colour": 1}, "unknown"),
        ({"op": "delete", "reason": "bored"}, "unknown reason"),
        ({"op": "add", "citations": ["nocolon"]}, "citations"),
        ({"op": "move", "position": "2"}, "integer"),
    ]:
        with pytest.raises(InvalidInputError, match=message):
            operation_from_json(bad, 4)
