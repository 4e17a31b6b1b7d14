"""DeerFlow's memory.json: summaries become bullets of the ``deerflow`` topic document, facts
become facts with their category mapped and confidence kept, each citing an import episode
holding the original record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata import importers
from memstrata.api import Memory
from memstrata.errors import ImportFormatError
from memstrata.model import Category, Fact, Scope

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "deerflow_memory.json"
LI = Scope("li")


def _facts(memory: Memory, scope: Scope) -> list[Fact]:
    return [f for f in memory.list(scope, "fact", limit=100) if isinstance(f, Fact)]


def test_parse_maps_categories_and_records_the_original() -> None:
    batch = importers.load(FIXTURE, "deerflow")
    mapped = {f.key.rsplit(":", 1)[-1]: (f.category, f.category_from) for f in batch.facts}
    assert mapped == {
        "fact_7c1e2a90": (Category.PREFERENCE, None),
        "fact_3b9d0f11": (Category.EXPERTISE, "knowledge"),
        "fact_88aa01bc": (Category.PROFILE, "context"),
        "fact_4d4d2e2e": (Category.PLAN, "goal"),
        "fact_9f9f0000": (Category.OTHER, "avoidance"),  # unknown: the closest is other
        "fact_1a1a5555": (Category.PROFILE, "context"),
    }
    assert [n.section for n in batch.notes] == [
        "Work context",
        "Personal context",
        "Top of mind",
        "Recent months",
        "Long term background",
    ]
    assert {(s.where, s.reason) for s in batch.skipped} == {
        ("history.earlierContext", "empty summary"),
        ("fact fact_empty00", "empty fact"),
    }


def test_import_cites_the_original_records_and_is_idempotent(memory: Memory) -> None:
    plan = memory.ingest(FIXTURE, "li", fmt="deerflow", dry_run=True)
    assert (plan.facts, plan.bullets, plan.turns) == (5, 5, 0)
    assert any("below the 0.8 threshold for profile" in r for _, r in plan.skipped)
    assert not _facts(memory, LI)

    done = memory.ingest(FIXTURE, "li", fmt="deerflow")
    assert (done.facts, done.bullets, done.present) == (5, 5, 0)
    facts = {f.text: f for f in _facts(memory, LI)}
    go = facts["User prefers Go over Java for new services"]
    assert (go.category, go.confidence) == (Category.PREFERENCE, 0.92)
    assert go.valid_from.isoformat() == "2026-03-10T08:00:00+00:00"
    [source] = memory.store.get_episodes(LI, list(go.sources))
    assert source.surface == "import" and source.text == go.text
    assert source.metadata["record"]["source"] == "thread_5a0c"
    orm = facts["User avoids ORMs and writes SQL by hand"]
    [record] = memory.store.get_episodes(LI, list(orm.sources))
    assert record.metadata["category_from"] == "avoidance"
    assert "User might be moving to Hangzhou" not in facts  # below its category's threshold

    markdown, _ = memory.doc_markdown("deerflow", LI)
    assert "## Top of mind" in markdown and "母语中文" in markdown
    assert "[^1]: import:ep_" in markdown

    again = memory.ingest(FIXTURE, "li", fmt="deerflow")
    assert (again.facts, again.bullets, again.present) == (0, 0, 10)
    assert len(_facts(memory, LI)) == 5


def test_an_updated_summary_edits_its_bullet(memory: Memory, tmp_path: Path) -> None:
    memory.ingest(FIXTURE, "li", fmt="deerflow")
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["user"]["topOfMind"] = {
        "summary": "Preparing the Q2 capacity plan for the routing cluster.",
        "updatedAt": "2026-04-02T09:00:00Z",
    }
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    report = memory.ingest(path, "li", fmt="deerflow")
    assert (report.bullets, report.facts, report.present) == (1, 0, 9)
    doc, _ = memory.doc("deerflow", LI)
    [top] = [s for s in doc.sections if s.heading == "Top of mind"]
    assert [b.text for b in top.bullets] == [
        "Preparing the Q2 capacity plan for the routing cluster."
    ]


def test_private_data_in_a_fact_is_scrubbed(memory: Memory, tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["facts"][0]["content"] = "User's e-mail is li.wei@example.com"
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    memory.ingest(path, "li", fmt="deerflow")
    assert all("li.wei@example.com" not in f.text for f in _facts(memory, LI))


def test_isolated_in_the_given_user(memory: Memory) -> None:
    memory.ingest(FIXTURE, "li", fmt="deerflow")
    assert not _facts(memory, Scope("zhang"))
    assert memory.ingest(FIXTURE, "zhang", fmt="deerflow").facts == 5


def test_malformed(tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data["facts"][2]["confidence"] = "high"
    path = tmp_path / "memory.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"fact fact_88aa01bc.*confidence"):
        importers.load(path, "deerflow")
    path.write_text(json.dumps({"facts": [{"content": "x"}]}), encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"facts\[0\].*missing field 'id'"):
        importers.load(path, "deerflow")
    path.write_text(json.dumps([1, 2]), encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"memory\.json object"):
        importers.load(path, "deerflow")
