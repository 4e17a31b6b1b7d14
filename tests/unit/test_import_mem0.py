"""mem0 exports: memories become facts citing an import episode that keeps the whole record,
metadata included; one user per export."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata import importers
from memstrata.api import Memory
from memstrata.errors import ImportFormatError
from memstrata.model import Category, Fact, Scope

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "mem0_export.json"
ALEX = Scope("alex")


def _facts(memory: Memory, scope: Scope) -> dict[str, Fact]:
    return {f.text: f for f in memory.list(scope, "fact", limit=100) if isinstance(f, Fact)}


def test_parse(tmp_path: Path) -> None:
    batch = importers.load(FIXTURE, "mem0")
    got = {f.text: (f.category, f.confidence, f.category_from) for f in batch.facts}
    assert got == {
        "Is a vegetarian and allergic to peanuts": (Category.HEALTH, 0.95, None),
        "Prefers window seats on long flights": (
            Category.PREFERENCE,
            0.9,
            "travel,user_preferences",
        ),
        "在上海一家金融科技公司做数据分析师": (Category.PROFILE, 0.9, "professional_details"),
        "Collects vintage film cameras": (Category.OTHER, 0.9, "collectibles"),
    }
    assert [s.reason for s in batch.skipped] == ["empty memory"]
    # a bare list is the older get_all shape
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))["results"]
    assert len(importers.load(_write(tmp_path, data), "mem0").facts) == 4


def _write(folder: Path, data: object) -> Path:
    path = folder / "export.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_import_keeps_metadata_and_is_idempotent(memory: Memory) -> None:
    plan = memory.ingest(FIXTURE, "alex", fmt="mem0", dry_run=True)
    assert (plan.facts, plan.present, plan.dry_run) == (4, 0, True)
    assert [(s.source, s.facts) for s in plan.sources] == [("facts", 4)]
    assert not _facts(memory, ALEX)
    assert memory.ingest(FIXTURE, "alex", fmt="mem0").facts == 4
    seats = _facts(memory, ALEX)["Prefers window seats on long flights"]
    assert seats.valid_from.isoformat() == "2024-08-02T18:40:00+00:00"
    [record] = memory.store.get_episodes(ALEX, list(seats.sources))
    assert record.metadata["record"]["metadata"] == {"app": "travel-agent", "trip": "LIS-2024"}
    assert record.metadata["record"]["categories"] == ["travel", "user_preferences"]
    again = memory.ingest(FIXTURE, "alex", fmt="mem0")
    assert (again.facts, again.present) == (0, 4)
    assert not _facts(memory, Scope("sam"))


def test_an_edited_memory_supersedes_the_fact_of_its_earlier_text(
    memory: Memory, tmp_path: Path
) -> None:
    memory.ingest(FIXTURE, "alex", fmt="mem0")
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["results"][3]["memory"] = "Collects vintage film cameras, mostly Leicas"
    report = memory.ingest(_write(tmp_path, data), "alex", fmt="mem0")
    assert (report.facts, report.present) == (1, 3)
    current = {
        f.text for f in memory.list(ALEX, "fact", limit=100) if isinstance(f, Fact) and f.current
    }
    assert "Collects vintage film cameras, mostly Leicas" in current
    assert "Collects vintage film cameras" not in current  # superseded, still in the history
    old = _facts(memory, ALEX)["Collects vintage film cameras"]
    assert (
        old.superseded_by == _facts(memory, ALEX)["Collects vintage film cameras, mostly Leicas"].id
    )


def test_a_deleted_fact_is_not_imported_again(memory: Memory) -> None:
    memory.ingest(FIXTURE, "alex", fmt="mem0")
    cameras = _facts(memory, ALEX)["Collects vintage film cameras"]
    memory.delete(cameras.id, ALEX)
    report = memory.ingest(FIXTURE, "alex", fmt="mem0")
    assert report.facts == 0 and "Collects vintage film cameras" not in _facts(memory, ALEX)


def test_several_users_in_one_export_are_refused(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["results"][1]["user_id"] = "jordan"
    with pytest.raises(ImportFormatError, match=r"memories of 2 users \(alex, jordan\)"):
        importers.load(_write(tmp_path, data), "mem0")


def test_malformed(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    del data["results"][2]["memory"]
    with pytest.raises(ImportFormatError, match=r"memory a6b7c8d9-.*missing field 'memory'"):
        importers.load(_write(tmp_path, data), "mem0")
    with pytest.raises(ImportFormatError, match="'results' or 'memories'"):
        importers.load(_write(tmp_path, {"items": []}), "mem0")


def test_secrets_in_a_record_are_scrubbed_everywhere(memory: Memory, tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["results"][0]["memory"] = "Wifi password: hunter22x at home"
    data["results"][0]["metadata"]["note"] = "password: hunter22x"
    memory.ingest(_write(tmp_path, data), "alex", fmt="mem0")
    stored = json.dumps(list(memory.export(ALEX)), ensure_ascii=False)
    assert "hunter22x" not in stored


def test_a_fact_forgotten_with_its_record_is_not_imported_again(memory: Memory) -> None:
    memory.ingest(FIXTURE, "alex", fmt="mem0")
    cameras = _facts(memory, ALEX)["Collects vintage film cameras"]
    [record] = cameras.sources
    memory.forget(record, ALEX)  # the import episode, and the fact citing it by cascade
    report = memory.ingest(FIXTURE, "alex", fmt="mem0")
    assert report.facts == 0 and "Collects vintage film cameras" not in _facts(memory, ALEX)
    assert any(where == "facts" and "forgotten earlier" in why for where, why in report.skipped)
