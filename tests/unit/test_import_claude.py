"""Claude's conversations.json: text blocks, skipped tool and thinking blocks, attachments
named, dry run, idempotent import into the given user."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memstrata import importers
from memstrata.api import Memory
from memstrata.errors import ImportFormatError
from memstrata.model import Role, Scope

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "claude_conversations.json"
PG = "0b5d2f9e-6c1a-4e0b-9a53-2f8d9c1e7a10"
BOOKS = "7f3c9a21-5b8e-4d2f-b6c4-9e0a1b2c3d4e"


def _texts(memory: Memory, scope: Scope) -> list[str]:
    return [e.text for e in memory.list(scope, "episode", limit=100)]  # type: ignore[union-attr]


def test_parse() -> None:
    batch = importers.load(FIXTURE, "claude")
    pg, books = batch.conversations
    assert (pg.key, books.key) == (PG, BOOKS)
    assert pg.metadata["title"] == "Postgres index tuning"
    asked, answered, thanks = pg.turns
    assert asked.role == Role.USER and asked.speaker == "human"
    assert asked.text.endswith("\n[attached file: explain_analyze.txt]")
    assert "Seq Scan" not in asked.text  # attachments are named, not inlined
    assert answered.role == Role.ASSISTANT
    assert answered.text == (
        "A composite B-tree index on (customer_id, created_at DESC) turns that sequential scan "
        "into an index range scan.\n\nCreate it CONCURRENTLY so writes are not blocked."
    )
    assert thanks.text.endswith("[attached file: schema.png]")  # the legacy text field
    assert asked.time is not None and asked.time.isoformat() == "2025-02-11T09:14:03.934201+00:00"
    assert books.turns[1].text == "可以围绕“黑暗森林”法则展开：先讲猜疑链，再讲技术爆炸。"
    reasons = sorted(s.reason for s in batch.skipped)
    assert reasons == [
        "empty message",
        "no messages",
        "non-text block (thinking)",
        "non-text block (tool_result)",
        "non-text block (tool_use)",
    ]


def test_dry_run_import_and_second_import(memory: Memory) -> None:
    plan = memory.ingest(FIXTURE, "mei", fmt="claude", dry_run=True)
    assert (plan.turns, plan.conversations, plan.dry_run) == (5, 2, True)
    assert not _texts(memory, Scope("mei"))
    first = memory.ingest(FIXTURE, "mei", fmt="claude")
    assert (first.turns, first.present) == (5, 0)
    assert [s.thread for s in first.scopes] == [PG, BOOKS]
    second = memory.ingest(FIXTURE, "mei", fmt="claude")
    assert (second.turns, second.present) == (0, 5)
    assert len(_texts(memory, Scope("mei", BOOKS))) == 2
    assert not _texts(memory, Scope("other"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d[0]["chat_messages"][0].update(sender="system"), "unknown sender 'system'"),
        (lambda d: d[0]["chat_messages"][1]["content"][1].pop("text"), "text block 1 has no text"),
        (lambda d: d[0].update(created_at="yesterday"), "not ISO 8601"),
        (lambda d: d[0]["chat_messages"][2].pop("uuid"), "missing field 'uuid'"),
    ],
)
def test_malformed_files_name_the_place(tmp_path: Path, change: Any, message: str) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ImportFormatError, match=message) as info:
        importers.load(path, "claude")
    assert f"conversation {PG}" in str(info.value)
