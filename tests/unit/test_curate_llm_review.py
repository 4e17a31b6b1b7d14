"""Audit and dedup with a chat model (a local fake server), and by rules without one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.llm.fake import ByPrompt, reply
from memstrata.model import Scope
from tests.conftest import FixedClock
from tests.unit.llm_script import model_memory

WEI = Scope("wei")


def _seed(mem: Memory, clock: FixedClock, bullets: list[tuple[str, str]]) -> list[str]:
    """A topic document "notes" with one bullet per (bullet text, turn text)."""
    ops = []
    for text, turn in bullets:
        clock.advance(minutes=1)
        [episode] = mem.remember([{"text": turn, "speaker": "Wei"}], WEI)
        ops.append(
            Operation(
                OpKind.ADD, section="Notes", text=text, citations=(Citation("chat", episode.id),)
            )
        )
    doc, _ = mem.documents.apply(WEI, "notes", ops, expected_version=0)
    return [b.id for s in doc.sections for b in s.bullets]


AUDITED = [
    ("林伟喜欢绿茶", "I really like green tea."),  # a translation: few shared terms
    ("Wei plays the violin in an orchestra", "I play the violin in an orchestra? No, piano."),
    ("Wei lives in Hangzhou", "I live in Hangzhou."),
]


def test_audit_by_model_judges_what_term_overlap_cannot(data_dir: Path, clock: FixedClock) -> None:
    verdicts = [
        {"i": 1, "supported": True},
        {"i": 2, "supported": False},
        {"i": 3, "supported": True},
    ]
    script = ByPrompt({"audit": [reply(verdicts=verdicts)]})
    with model_memory(data_dir, script, clock) as mem:
        ids = _seed(mem, clock, AUDITED)
        by_rules = mem.consolidate(WEI, mode="audit", use_llm=False)
        by_model = mem.consolidate(WEI, mode="audit", remove=True)
        doc, _ = mem.documents.get(WEI, "notes")
    assert [(f.bullet_id, f.by) for f in by_rules.findings] == [(ids[0], "rules")]
    assert [(f.bullet_id, f.problem, f.by) for f in by_model.findings] == [
        (ids[1], "unsupported", "model")
    ]
    assert [b.id for s in doc.sections for b in s.bullets] == [ids[0], ids[2]]
    shown = script.data("audit")["items"]
    assert shown[0] == {"i": 1, "text": "林伟喜欢绿茶", "evidence": ["I really like green tea."]}


def test_audit_falls_back_to_rules_when_the_model_fails(data_dir: Path, clock: FixedClock) -> None:
    script = ByPrompt({"audit": [503, 503]}, then=503)
    with model_memory(data_dir, script, clock) as mem:
        ids = _seed(mem, clock, AUDITED)
        report = mem.consolidate(WEI, mode="audit")
    assert [(f.bullet_id, f.by) for f in report.findings] == [(ids[0], "rules")]
    assert report.model_failures and "503" in report.model_failures[0]


def test_a_verdict_for_an_item_not_shown_is_ignored(data_dir: Path, clock: FixedClock) -> None:
    script = ByPrompt({"audit": [reply(verdicts=[{"i": 7, "supported": False}])]})
    with model_memory(data_dir, script, clock) as mem:
        ids = _seed(mem, clock, AUDITED)
        report = mem.consolidate(WEI, mode="audit")
    assert [(f.bullet_id, f.by) for f in report.findings] == [(ids[0], "rules")]


DUPLICATES = [
    ("Wei likes green tea", "I like green tea."),
    ("Wei enjoys drinking green tea every morning", "Green tea every morning, I enjoy it."),
    ("Wei has a dog named Max", "My dog is called Max."),
]


def test_dedup_by_model_merges_the_same_claim_worded_differently(
    data_dir: Path, clock: FixedClock
) -> None:
    script = ByPrompt({"dedup": [reply(same=[1, 5])]})
    with model_memory(data_dir, script, clock) as mem:
        ids = _seed(mem, clock, DUPLICATES)
        by_rules = mem.consolidate(WEI, mode="dedup", use_llm=False)
        by_model = mem.consolidate(WEI, mode="dedup")
        doc, _ = mem.documents.get(WEI, "notes")
    assert by_rules.merged == 0 and by_model.merged == 1
    bullets = [b for s in doc.sections for b in s.bullets]
    assert [b.id for b in bullets] == [ids[0], ids[2]]
    assert len(bullets[0].citations) == 2  # the citations united
    pairs = script.data("dedup")["pairs"]
    assert pairs == [
        {"p": 1, "a": "Wei likes green tea", "b": "Wei enjoys drinking green tea every morning"}
    ]


def test_consolidate_cli_rules_only_with_a_model_configured(
    data_dir: Path,
    clock: FixedClock,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memstrata.cli import main

    script = ByPrompt({"audit": [reply(verdicts=[{"i": 1, "supported": True}])]})
    with model_memory(data_dir, script, clock) as mem:
        _seed(mem, clock, AUDITED[:1])
        assert mem.settings is not None and mem.settings.llm is not None
        monkeypatch.setenv("MEMSTRATA_LLM__BASE_URL", mem.settings.llm.base_url)
        monkeypatch.setenv("MEMSTRATA_LLM__MODEL", "fake")
        monkeypatch.setenv("MEMSTRATA_LLM__MAX_RETRIES", "0")
        args = ["consolidate", "--user", "wei", "--mode", "audit", "--json"]
        capsys.readouterr()
        assert main([*args, "--no-llm", "--data-dir", str(data_dir)]) == 0
        rules = json.loads(capsys.readouterr().out)["findings"]
        assert script.count("audit") == 0
        assert main([*args, "--data-dir", str(data_dir)]) == 0
        model = json.loads(capsys.readouterr().out)["findings"]
    assert [f["by"] for f in rules] == ["rules"] and model == []
    assert script.count("audit") == 1
