"""Privacy at the points of persistence: secrets out of verbatim capture, all private data
out of curated memory, and an audit log that names kinds, never text."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.model import Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice")
KEY = "sk-proj-" + "Ab3xYz9Q" * 4


def test_secrets_are_scrubbed_from_capture_and_logged_without_text(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="memstrata.privacy")
    ep = memory.remember(f"my OpenAI key is {KEY}, call me at +44 20 7946 0958", ALICE)[0]
    assert KEY not in ep.text and "[REDACTED:api_key]" in ep.text
    assert "+44 20 7946 0958" in ep.text  # phone numbers stay in the verbatim archive
    stored = memory.get(ep.id, ALICE)
    assert KEY not in stored.text  # type: ignore[union-attr]
    assert memory.trace is not None
    assert all(KEY not in str(e) for e in memory.trace.read())  # type: ignore[attr-defined]
    assert "api_key" in caplog.text and KEY not in caplog.text and "user=alice" in caplog.text


def test_secrets_are_scrubbed_from_a_turns_metadata_too(memory: Memory) -> None:
    """Metadata is stored verbatim like the text (an imported record, a LangGraph value), so
    capture scrubs secrets from every string in it; the rest comes back as it was sent."""
    metadata = {
        "note": f"token {KEY}",
        "nested": {"items": [f"key={KEY}", 3, None, "plain 中文"]},
        "count": 2,
    }
    [ep] = memory.remember({"text": "saved a value", "metadata": metadata}, ALICE)
    stored = memory.get(ep.id, ALICE)
    assert KEY not in str(stored.metadata) and KEY not in str(ep.metadata)  # type: ignore[union-attr]
    assert stored.metadata["count"] == 2  # type: ignore[union-attr]
    assert stored.metadata["nested"]["items"][1:] == [3, None, "plain 中文"]  # type: ignore[union-attr,index]
    assert "[REDACTED:api_key]" in stored.metadata["note"]  # type: ignore[union-attr]
    assert memory.trace is not None
    assert all(KEY not in str(e) for e in memory.trace.read())  # type: ignore[attr-defined]


def test_capture_scrubbing_can_be_turned_off(tmp_path: Path, clock: FixedClock) -> None:
    settings = load_settings(data_dir=tmp_path / "m", scrub_capture=False)
    with Memory.open(settings=settings, clock=clock) as mem:
        assert KEY in mem.remember(f"key {KEY}", ALICE)[0].text


def test_ingest_scrubs_secrets(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"text": "密码是 Tr0ub4dor&3 别告诉别人"}\n', encoding="utf-8")
    memory.ingest(path, "alice", fmt="jsonl")
    [ep] = memory.list("alice")
    assert "Tr0ub4dor&3" not in ep.text and "[REDACTED:password]" in ep.text  # type: ignore[union-attr]


def test_curated_memory_loses_every_kind(memory: Memory) -> None:
    ep = memory.remember("I moved; new number 138-1234-5678", ALICE)[0]
    fact = memory.add_fact(
        "Alice's phone is 138-1234-5678, mail alice@example.com", ALICE, sources=[ep.id]
    )
    assert "138-1234-5678" not in fact.text and "alice@example.com" not in fact.text
    doc, _ = memory.apply_doc(
        "essentials",
        ALICE,
        [
            Operation(
                OpKind.ADD,
                section="Contact",
                text="Email: alice@example.com",
                citations=(Citation("chat", ep.id),),
            )
        ],
        expected_version=0,
    )
    assert doc.sections[0].bullets[0].text == "Email: [REDACTED:email]"


def test_extracted_facts_are_scrubbed(memory: Memory) -> None:
    memory.remember("I just moved to 88 Baker Street, and I love it there.", ALICE)
    report = memory.extract(ALICE, extractor=RuleExtractor())
    assert report.stored and all("88 Baker Street" not in f.text for f in report.stored)
