"""MemPalace drawers, from the collection's JSON or its markdown room export: verbatim
episodes in the thread of their wing, the room as session, wing/room as topic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata import importers
from memstrata.api import Memory
from memstrata.errors import ImportFormatError
from memstrata.model import Episode, Role, Scope

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "imports"
DRAWERS = FOLDER / "mempalace_drawers.json"
ROOM = FOLDER / "mempalace_room.md"
KAI = Scope("kai")


def _episodes(memory: Memory, scope: Scope) -> list[Episode]:
    return [e for e in memory.list(scope, "episode", limit=100) if isinstance(e, Episode)]


def test_parse_collection_json() -> None:
    batch = importers.load(DRAWERS, "mempalace")
    code, family = batch.conversations
    assert (code.key, family.key) == ("wing_code", "wing_family")
    first = code.turns[0]
    assert first.text.startswith("> We decided to move sessions")  # verbatim, quote mark kept
    assert first.role == Role.OTHER and first.speaker == "mempalace"
    assert first.session_id == "auth-migration"
    assert first.metadata["topic"] == "wing_code/auth-migration"
    assert first.metadata["chunk_index"] == 0
    assert first.metadata["source_file"] == "/home/kai/chats/2025-01-14.jsonl"
    assert family.turns[0].speaker == "claude"
    assert family.turns[0].text == "妈妈说今年春节想去三亚，十二月之前要订好机票。"
    assert [s.reason for s in batch.skipped] == ["empty drawer"]


def test_parse_markdown_room_export() -> None:
    [code] = importers.load(ROOM, "mempalace").conversations
    first, second = code.turns
    assert first.text == (
        "> We decided to move sessions from cookies to short-lived JWTs.\n"
        "Kai: Refresh tokens stay server-side, rotated on every use."
    )
    assert second.text == (
        "Load test: p99 went from 180 ms to 95 ms with JWT validation cached.\n\n"
        "下周在预发环境再压测一次。"
    )
    assert second.speaker == "mempalace" and "source_file" not in second.metadata  # "unknown"
    assert (
        first.metadata["import_key"]
        == importers.load(DRAWERS, "mempalace").conversations[0].turns[0].metadata["import_key"]
    )


def test_the_same_drawer_from_either_file_is_imported_once(memory: Memory) -> None:
    plan = memory.ingest(DRAWERS, "kai", fmt="mempalace", dry_run=True)
    assert (plan.turns, plan.conversations) == (3, 2) and not _episodes(memory, KAI)
    assert memory.ingest(DRAWERS, "kai", fmt="mempalace").turns == 3
    room = memory.ingest(ROOM, "kai", fmt="mempalace")
    assert (room.turns, room.present) == (1, 1)
    assert memory.ingest(DRAWERS, "kai", fmt="mempalace").turns == 0
    stored = _episodes(memory, Scope("kai", "wing_code"))
    assert {e.session_id for e in stored} == {"auth-migration"} and len(stored) == 3
    assert not _episodes(memory, Scope("lena"))


def test_malformed(tmp_path: Path) -> None:
    data = json.loads(DRAWERS.read_text(encoding="utf-8"))
    data["documents"].pop()
    path = tmp_path / "drawers.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"ids \(4\), documents \(3\)"):
        importers.load(path, "mempalace")
    room = tmp_path / "room.md"
    room.write_text("# wing_a / room_b\n\n## drawer_1\n\nplain prose\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"room.md:5.*'plain prose'"):
        importers.load(room, "mempalace")
    room.write_text("just text\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"room\.md:1"):
        importers.load(room, "mempalace")
