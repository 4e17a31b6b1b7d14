"""Forgetting previewed: a dry run lists what the cascade would remove or rewrite, changes
nothing, and equals what the forget then reports and does (HTTP, facade, CLI, MCP)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.api.forget_preview import ForgetPreview
from memstrata.cli.commands import cli
from memstrata.errors import NotFoundError
from memstrata.model import Category, Scope
from memstrata.server.mcp.tools import TOOLS_BY_NAME, ForgetIn
from tests.keyed import keyed_client

ALICE = Scope("alice")
T1 = Scope("alice", "t1")
SECRET = "I was treated for depression last year"


def _seed(mem: Memory) -> dict[str, str]:
    secret, tea = mem.remember([SECRET, "I love green tea"], T1)
    [other] = mem.remember(["I work on compilers"], Scope("alice", "t2"))
    fact = mem.add_fact(
        "Alice was treated for depression",
        T1,
        category=Category.PERSONAL,
        sources=[secret.id],
        topic="health",
        importance=0.9,  # also a bullet of essentials
    )
    both = mem.add_fact(
        "Alice likes tea and compilers",
        ALICE,
        category=Category.PREFERENCE,
        sources=[tea.id, other.id],
        topic="drinks",
    )
    mem.consolidate(ALICE)
    return {"secret": secret.id, "tea": tea.id, "other": other.id, "fact": fact.id, "both": both.id}


def _snapshot(mem: Memory, data_dir: Path) -> tuple[Any, ...]:
    """Everything a dry run must leave as it was."""
    trace = "".join(p.read_text("utf-8") for p in sorted((data_dir / "trace").glob("*/*.jsonl")))
    records = [json.dumps(r, sort_keys=True) for r in mem.export(ALICE)]
    return (
        mem.stats(ALICE),
        mem.store.generation("alice"),
        mem.store.pending_erasures(),
        trace,
        records,
    )


@pytest.fixture
def seeded(memory: Memory) -> dict[str, str]:
    return _seed(memory)


def test_item_preview_lists_the_cascade_and_equals_the_forget(
    client: TestClient, memory: Memory, seeded: dict[str, str], data_dir: Path
) -> None:
    before = _snapshot(memory, data_dir)
    r = client.post(
        f"/v1/items/{seeded['secret']}/forget", params={"user": "alice", "dry_run": True}
    )
    assert r.status_code == 200, r.text
    preview = r.json()
    assert _snapshot(memory, data_dir) == before  # nothing changed, trace and feed included
    assert preview["dry_run"] is True and preview["pending"] is False
    assert [e["text"] for e in preview["episodes"]] == [SECRET]
    assert {(f["id"], f["how"]) for f in preview["facts"]} == {(seeded["fact"], "cascaded")}
    assert preview["facts"][0]["text"] == "Alice was treated for depression"
    bullets = {(b["document"], b["text"], b["how"]) for b in preview["bullets"]}
    assert ("health", "Alice was treated for depression", "deleted") in bullets
    # the essentials serve it with its date
    assert ("essentials", "Alice was treated for depression (2026-01-01)", "deleted") in bullets
    assert preview["counts"]["trace_lines"] == 1 and preview["index_entries"] >= 4

    done = client.post(f"/v1/items/{seeded['secret']}/forget", params={"user": "alice"}).json()
    assert set(done) == {"deleted", "cascaded", "counts"}
    assert done == {k: preview[k] for k in ("deleted", "cascaded", "counts")}
    for gone in (*preview["deleted"], *(f["id"] for f in preview["facts"])):
        with pytest.raises(NotFoundError):
            memory.get(gone, ALICE)
    curated = json.dumps(
        [
            d.content
            for d in memory.list(ALICE, "document")
            if d.kind.value in ("topic", "essentials")
        ]
    )
    assert preview["bullets"] and all(b["bullet_id"] not in curated for b in preview["bullets"])
    assert "depression" not in json.dumps(list(memory.export(ALICE)), ensure_ascii=False)


def test_a_fact_keeping_other_sources_is_listed_as_rewritten_by_delete_not_forget(
    memory: Memory, seeded: dict[str, str]
) -> None:
    preview = memory.forget(seeded["tea"], ALICE, dry_run=True)
    assert isinstance(preview, ForgetPreview)
    # forgetting: every fact citing the turn goes, even one with other sources
    assert (seeded["both"], "cascaded") in {(f["id"], f["how"]) for f in preview.facts}
    report = memory.forget(seeded["tea"], ALICE)
    assert (preview.deleted, preview.cascaded, dict(preview.counts)) == (
        report.deleted,
        report.cascaded,
        dict(report.counts),
    )


def test_scope_preview_equals_the_forget_and_changes_nothing(
    client: TestClient, memory: Memory, seeded: dict[str, str], data_dir: Path
) -> None:
    before = _snapshot(memory, data_dir)
    params = {"user": "alice", "thread": "t1", "dry_run": "true"}
    r = client.delete("/v1/scopes", params=params)
    assert r.status_code == 200, r.text
    preview = r.json()
    assert _snapshot(memory, data_dir) == before
    assert {e["id"] for e in preview["episodes"]} == {seeded["secret"], seeded["tea"]}
    assert seeded["fact"] in {f["id"] for f in preview["facts"]}
    assert preview["counts"]["episodes"] == 2 and preview["counts"]["trace_lines"] == 2
    done = client.delete("/v1/scopes", params={"user": "alice", "thread": "t1"}).json()
    assert done == {k: preview[k] for k in ("deleted", "cascaded", "counts")}
    assert memory.stats(Scope("alice", "t1")).episodes == 0
    assert memory.stats(Scope("alice", "t2")).episodes == 1  # outside the scope: kept


def test_whole_user_preview_lists_documents_and_their_bullets(
    memory: Memory, seeded: dict[str, str], data_dir: Path
) -> None:
    before = _snapshot(memory, data_dir)
    preview = memory.forget_scope(ALICE, dry_run=True)
    assert isinstance(preview, ForgetPreview)
    assert _snapshot(memory, data_dir) == before
    keys = {d["key"] for d in preview.documents}
    assert {"essentials", "health", "drinks"} <= keys
    assert {b["how"] for b in preview.bullets} == {"document-deleted"}
    report = memory.forget_scope(ALICE)
    assert (preview.deleted, preview.cascaded, dict(preview.counts)) == (
        report.deleted,
        report.cascaded,
        dict(report.counts),
    )
    assert memory.stats(ALICE).episodes == 0


def test_preview_of_what_is_not_there_is_404_and_of_another_user_403(
    client: TestClient, memory: Memory, seeded: dict[str, str]
) -> None:
    r = client.post(
        "/v1/items/ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z/forget", params={"user": "alice", "dry_run": 1}
    )
    assert r.status_code == 404 and r.json()["error"] == "NotFoundError"
    r = client.post(f"/v1/items/{seeded['secret']}/forget", params={"user": "bob", "dry_run": 1})
    assert r.status_code == 404  # bob's scope holds no such item
    r = client.delete("/v1/scopes", params={"user": "nobody", "dry_run": "true"})
    assert r.status_code == 404
    with keyed_client(memory, role="writer", users=["bob"]) as bob:
        r = bob.post(f"/v1/items/{seeded['secret']}/forget", params={"user": "alice", "dry_run": 1})
        assert r.status_code == 403
    with keyed_client(memory, role="reader", users=["alice"]) as reader:
        r = reader.delete("/v1/scopes", params={"thread": "t1", "dry_run": "true"})
        assert r.status_code == 403  # a dry run needs the role the forget needs
    error = client.post(
        f"/v1/items/{seeded['secret']}/forget", params={"dry_run": "perhaps", "user": "alice"}
    )
    assert error.status_code == 422


def test_cli_dry_run_lists_and_changes_nothing(
    memory: Memory, seeded: dict[str, str], data_dir: Path
) -> None:
    before = _snapshot(memory, data_dir)
    runner = CliRunner()
    args = ["--data-dir", str(data_dir), "--user", "alice"]
    shown = runner.invoke(cli, ["forget", seeded["secret"], "--dry-run", *args])
    assert shown.exit_code == 0, shown.output
    assert (
        "nothing was changed" in shown.output and "Alice was treated for depression" in shown.output
    )
    as_json = runner.invoke(cli, ["forget", "--dry-run", "--json", "--thread", "t1", *args])
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.output)["dry_run"] is True  # no confirmation asked for a dry run
    assert _snapshot(memory, data_dir) == before


def test_mcp_forget_dry_run(memory: Memory, seeded: dict[str, str], data_dir: Path) -> None:
    before = _snapshot(memory, data_dir)
    tool = TOOLS_BY_NAME["forget"]
    out = tool.run(memory, ALICE, ForgetIn(item_id=seeded["secret"], dry_run=True))
    body = out.model_dump()
    assert body["dry_run"] is True and seeded["fact"] in body["cascaded"]
    assert _snapshot(memory, data_dir) == before


def test_preview_of_a_pending_forget_says_the_call_finishes_it(
    memory: Memory, seeded: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstrata.errors import StoreError

    def refuse(ids: object, reason: str, texts: object = ()) -> int:
        raise OSError("disk is read-only")

    assert memory.trace is not None
    monkeypatch.setattr(memory.trace, "redact", refuse)
    with pytest.raises(StoreError):
        memory.forget(seeded["secret"], ALICE)
    monkeypatch.undo()
    preview = memory.forget(seeded["secret"], ALICE, dry_run=True)
    assert isinstance(preview, ForgetPreview) and preview.pending
    assert preview.counts["trace_lines"] == 1  # the trace line is still there to erase
    assert memory.store.pending_erasures()  # still pending: the dry run finished nothing
    report = memory.forget(seeded["secret"], ALICE)
    assert (preview.deleted, preview.cascaded, dict(preview.counts)) == (
        report.deleted,
        report.cascaded,
        dict(report.counts),
    )
    assert not memory.store.pending_erasures()
