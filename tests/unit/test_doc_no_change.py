"""A document batch that changes nothing (no operations, an edit to the same text, an
unchanged markdown file) writes nothing: same version, no history row, in Python, the CLI and
HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.model import DocumentKind, Scope
from memstrata.settings import load_settings
from tests.e2e.cli import Cli
from tests.keyed import keyed_client

ALICE = Scope("alice")


def _seed(memory: Memory) -> str:
    ep = memory.remember(["I like green tea"], ALICE)[0]
    doc, _ = memory.apply_doc(
        "essentials",
        ALICE,
        [
            Operation(
                OpKind.ADD,
                section="Tea",
                text="Likes green tea",
                citations=(Citation("chat", ep.id),),
            )
        ],
        expected_version=0,
    )
    return doc.sections[0].bullets[0].id


def _history_rows(memory: Memory) -> int:
    stored = memory.store.get_document(ALICE, DocumentKind.ESSENTIALS, "essentials")
    assert stored is not None
    return len(memory.history(stored.id, ALICE))


def test_an_empty_batch_writes_no_version(memory: Memory) -> None:
    _seed(memory)
    rows = _history_rows(memory)
    doc, version = memory.apply_doc("essentials", ALICE, [], expected_version=1)
    assert version == 1 and [b.text for b in doc.sections[0].bullets] == ["Likes green tea"]
    assert memory.doc("essentials", ALICE)[1] == 1 and _history_rows(memory) == rows


def test_an_empty_batch_on_a_missing_document_creates_nothing(memory: Memory) -> None:
    _, version = memory.apply_doc("travel", ALICE, [], expected_version=0)
    assert version == 0 and memory.list(ALICE, "document", limit=10) == []


def test_an_edit_to_the_same_text_writes_nothing(memory: Memory) -> None:
    bullet = _seed(memory)
    rows = _history_rows(memory)
    same = Operation(OpKind.EDIT, id=bullet, text="Likes green tea")
    _, version = memory.apply_doc("essentials", ALICE, [same], expected_version=1)
    assert version == 1 and _history_rows(memory) == rows
    markdown, _ = memory.doc_markdown("essentials", ALICE)
    preview = memory.preview_doc("essentials", ALICE, markdown, expected_version=1)
    _, version = memory.apply_doc("essentials", ALICE, preview.operations, expected_version=1)
    assert version == 1 and _history_rows(memory) == rows


def test_a_stale_empty_batch_is_still_a_conflict(memory: Memory) -> None:
    from memstrata.errors import ConflictError

    _seed(memory)
    with pytest.raises(ConflictError):
        memory.apply_doc("essentials", ALICE, [], expected_version=0)


def test_http_apply_of_nothing_keeps_the_version(memory: Memory) -> None:
    _seed(memory)
    rows = _history_rows(memory)
    with keyed_client(memory) as client:
        r = client.post(
            "/v1/docs/essentials/apply",
            params={"user": "alice"},
            json={"operations": [], "expected_version": 1},
        )
    assert r.status_code == 200 and r.json()["version"] == 1
    assert _history_rows(memory) == rows


def test_cli_apply_of_an_unchanged_file_says_no_change(
    data_dir: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with Memory.open(settings=load_settings(data_dir=data_dir)) as memory:
        _seed(memory)
        markdown, _ = memory.doc_markdown("essentials", ALICE)
        rows = _history_rows(memory)
    cli = Cli(data_dir, capsys)
    same = tmp_path / "same.md"
    same.write_text(markdown, encoding="utf-8")
    out, _ = cli("doc", "apply", "essentials", str(same), "--user", "alice", "--version", "1")
    assert "no change" in out and "version 1" in out
    empty = tmp_path / "ops.json"
    empty.write_text("[]", encoding="utf-8")
    shown = cli.json("doc", "apply", "essentials", str(empty), "--user", "alice", "--version", "1")
    assert shown == {"key": "essentials", "version": 1, "operations": 0, "changed": False}
    with Memory.open(settings=load_settings(data_dir=data_dir)) as memory:
        assert memory.doc("essentials", ALICE)[1] == 1 and _history_rows(memory) == rows
