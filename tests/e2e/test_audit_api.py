"""Audit flags over HTTP and the CLI: the consolidator's audit shown with each bullet's text
and citations, and resolved by keep (acknowledged in the store), delete or edit (through the
documents' compare-and-swap apply)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.api.kept import fingerprint
from memstrata.cli.commands import cli
from memstrata.model import DocumentKind, Scope
from tests.keyed import keyed_client

ALICE = Scope("alice")
UNSUPPORTED = "Alice owns a red spaceship"


@pytest.fixture
def seeded(memory: Memory) -> dict[str, Any]:
    tea, oolong = memory.remember(["I like oolong tea", "Oolong tea every morning"], ALICE)
    markdown = (
        "# tea\n## Drinks\n"
        f"- Alice likes oolong tea [^1]\n- {UNSUPPORTED} [^2]\n---\n"
        f"[^1]: chat:{tea.id}\n[^2]: chat:{oolong.id}\n"
    )
    preview = memory.preview_doc("tea", ALICE, markdown, expected_version=0)
    doc, version = memory.apply_doc("tea", ALICE, preview.operations, expected_version=0)
    bullets = {b.text: b.id for s in doc.sections for b in s.bullets}
    return {"version": version, "bad": bullets[UNSUPPORTED], "oolong": oolong.id}


def _flags(client: TestClient) -> list[dict[str, Any]]:
    r = client.get("/v1/audit", params={"user": "alice"})
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


def _resolve(client: TestClient, **body: Any) -> Any:
    return client.post("/v1/audit/resolve", params={"user": "alice"}, json={"key": "tea", **body})


def test_audit_lists_flags_with_text_and_citations(
    client: TestClient, seeded: dict[str, Any]
) -> None:
    [flag] = _flags(client)
    assert flag["key"] == "tea" and flag["version"] == seeded["version"]
    assert flag["bullet_id"] == seeded["bad"] and flag["text"] == UNSUPPORTED
    assert flag["problem"] == "unsupported" and 0 <= flag["support"] < 1
    [citation] = flag["citations"]
    assert citation["episode_id"] == seeded["oolong"] and citation["exists"] is True
    assert citation["text"] == "Oolong tea every morning"
    assert citation["citation"] == f"chat:{seeded['oolong']}"
    assert flag["by"] == "rules"  # no chat model configured


def test_keep_is_remembered_until_the_bullet_changes(
    client: TestClient, memory: Memory, seeded: dict[str, Any]
) -> None:
    r = _resolve(client, bullet_id=seeded["bad"], action="keep", expected_version=seeded["version"])
    assert r.status_code == 200, r.text
    assert r.json() == {
        "key": "tea",
        "bullet_id": seeded["bad"],
        "action": "keep",
        "version": seeded["version"],  # the document is not written
        "diff": None,
    }
    assert _flags(client) == []
    state = memory.store.get_document(ALICE, DocumentKind.STATE, "audit")
    assert state is not None and UNSUPPORTED not in json.dumps(state.content)  # a hash, no text
    # the bullet's text changes: judged afresh
    from memstrata.document.ops import Operation, OpKind

    memory.apply_doc(
        "tea",
        ALICE,
        [Operation(OpKind.EDIT, seeded["bad"], text="Alice owns a blue spaceship")],
        expected_version=seeded["version"],
    )
    [flag] = _flags(client)
    assert flag["text"] == "Alice owns a blue spaceship"


def test_delete_and_edit_go_through_the_document(
    client: TestClient, memory: Memory, seeded: dict[str, Any]
) -> None:
    edited = _resolve(
        client,
        bullet_id=seeded["bad"],
        action="edit",
        text="Alice drinks oolong tea every morning",
        expected_version=seeded["version"],
    )
    assert edited.status_code == 200, edited.text
    body = edited.json()
    assert body["version"] == seeded["version"] + 1 and "spaceship" in body["diff"]
    markdown, version = memory.doc_markdown("tea", ALICE)
    assert "Alice drinks oolong tea every morning" in markdown and "spaceship" not in markdown
    assert _flags(client) == []  # now supported
    deleted = _resolve(client, bullet_id=seeded["bad"], action="delete", expected_version=version)
    assert deleted.status_code == 200, deleted.text
    assert deleted.json()["version"] == version + 1
    doc, _ = memory.doc("tea", ALICE)
    assert seeded["bad"] not in {b.id for s in doc.sections for b in s.bullets}
    [entry] = [h for h in memory.history(seeded["bad"], ALICE) if h.op.value == "delete"]
    assert entry.reason == "low-signal"  # its cited turn still exists


def test_a_stale_version_is_409_and_changes_nothing(
    client: TestClient, memory: Memory, seeded: dict[str, Any]
) -> None:
    before = memory.doc_markdown("tea", ALICE)
    for action in ("keep", "delete", "edit"):
        extra = {"text": "new words"} if action == "edit" else {}
        r = _resolve(client, bullet_id=seeded["bad"], action=action, expected_version=0, **extra)
        assert r.status_code == 409, r.text
        assert r.json()["details"] == [
            {
                "type": "conflict",
                "item_id": "tea",
                "expected_version": 0,
                "current_version": seeded["version"],
            }
        ]
    assert memory.doc_markdown("tea", ALICE) == before
    assert memory.store.get_document(ALICE, DocumentKind.STATE, "audit") is None
    assert len(_flags(client)) == 1


def test_bad_resolutions_are_clear_4xx(
    client: TestClient, memory: Memory, seeded: dict[str, Any]
) -> None:
    v = seeded["version"]
    bad = seeded["bad"]
    cases = [
        ({"bullet_id": bad, "action": "shred", "expected_version": v}, 422),
        ({"bullet_id": bad, "action": "keep", "text": "x", "expected_version": v}, 422),
        ({"bullet_id": bad, "action": "edit", "expected_version": v}, 422),
        ({"bullet_id": bad, "action": "edit", "text": "  ", "expected_version": v}, 422),
        ({"bullet_id": bad, "action": "keep", "reason": "stale", "expected_version": v}, 422),
        ({"bullet_id": bad, "action": "keep"}, 422),
        (
            {"bullet_id": "m_01JD3M8V4Q5R6S7T8V9W0X1Y2Z", "action": "keep", "expected_version": v},
            404,
        ),
        ({"bullet_id": "nope", "action": "keep", "expected_version": v}, 422),
    ]
    for body, status in cases:
        r = _resolve(client, **body)
        assert r.status_code == status, (body, r.text)
        assert set(r.json()) <= {"error", "message", "details"}
    with keyed_client(memory, role="writer", users=["bob"]) as bob:
        r = bob.post(
            "/v1/audit/resolve",
            params={"user": "alice"},
            json={"key": "tea", "bullet_id": bad, "action": "keep", "expected_version": v},
        )
        assert r.status_code == 403
        assert bob.get("/v1/audit", params={"user": "alice"}).status_code == 403
    with keyed_client(memory, role="reader", users=["alice"]) as reader:
        assert reader.get("/v1/audit").status_code == 200
        r = reader.post(
            "/v1/audit/resolve",
            json={"key": "tea", "bullet_id": bad, "action": "keep", "expected_version": v},
        )
        assert r.status_code == 403


def _everything(memory: Memory, text: str) -> bool:
    rows = memory.store._read(  # type: ignore[attr-defined]
        "SELECT data FROM item_history WHERE user = ?", ["alice"]
    )
    stored = [json.dumps(r, ensure_ascii=False) for r in memory.export(ALICE)]
    return any(text in part for part in [*stored, *(r["data"] for r in rows)])


def test_a_keep_is_erased_by_forget(
    client: TestClient, memory: Memory, seeded: dict[str, Any]
) -> None:
    doc, _ = memory.doc("tea", ALICE)
    bullet = next(b for s in doc.sections for b in s.bullets if b.id == seeded["bad"])
    mark = fingerprint(bullet)
    _resolve(client, bullet_id=seeded["bad"], action="keep", expected_version=seeded["version"])
    assert _everything(memory, mark)
    memory.forget(seeded["oolong"], ALICE)  # the bullet's only cited turn
    assert not _everything(memory, mark)
    state = memory.store.get_document(ALICE, DocumentKind.STATE, "audit")
    assert state is not None and state.content["kept"] == {}
    doc, version = memory.doc("tea", ALICE)
    [left] = [b.id for s in doc.sections for b in s.bullets]
    r = _resolve(client, bullet_id=left, action="keep", expected_version=version)
    assert r.status_code == 200, r.text
    memory.forget_scope(ALICE)
    assert memory.store.get_document(ALICE, DocumentKind.STATE, "audit") is None


def test_cli_audit_and_resolve(memory: Memory, seeded: dict[str, Any], data_dir: Path) -> None:
    runner = CliRunner()
    args = ["--user", "alice", "--data-dir", str(data_dir)]
    listed = runner.invoke(cli, ["audit", "list", "--json", *args])
    assert listed.exit_code == 0, listed.output
    [flag] = json.loads(listed.output)
    assert flag["bullet_id"] == seeded["bad"]
    kept = runner.invoke(
        cli,
        [
            "audit",
            "resolve",
            "tea",
            seeded["bad"],
            "--action",
            "keep",
            "--expected-version",
            str(flag["version"]),
            *args,
        ],
    )
    assert kept.exit_code == 0, kept.output
    again = runner.invoke(cli, ["audit", "list", *args])
    assert again.exit_code == 0 and "no flags" in again.output


def test_an_audit_that_removes_spares_a_kept_bullet_until_it_changes(
    client: TestClient, memory: Memory, seeded: dict[str, Any]
) -> None:
    r = _resolve(client, bullet_id=seeded["bad"], action="keep", expected_version=seeded["version"])
    assert r.status_code == 200, r.text
    report = memory.consolidate(ALICE, mode="audit", remove=True, use_llm=False)
    assert report.removed == 0 and report.findings == []
    doc, version = memory.doc("tea", ALICE)
    assert UNSUPPORTED in [b.text for s in doc.sections for b in s.bullets]
    # once the kept bullet's text changes, the audit judges it afresh, and removes it
    markdown, _ = memory.doc_markdown("tea", ALICE)
    edited = markdown.replace(UNSUPPORTED, "Alice owns a blue spaceship")
    preview = memory.preview_doc("tea", ALICE, edited, expected_version=version)
    memory.apply_doc("tea", ALICE, preview.operations, expected_version=version)
    report = memory.consolidate(ALICE, mode="audit", remove=True, use_llm=False)
    assert report.removed == 1
    doc, _ = memory.doc("tea", ALICE)
    assert [b.text for s in doc.sections for b in s.bullets] == ["Alice likes oolong tea"]
