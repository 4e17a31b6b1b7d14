"""A model outage midway through a run leaves memory consistent and the run resumable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.document.coverage import topic_key
from memstrata.document.service import DocumentService
from memstrata.errors import StoreError
from memstrata.llm.fake import ByPrompt, Reply, reply
from memstrata.model import DocumentKind, FactFilter
from tests.conftest import FixedClock
from tests.unit.llm_script import model_memory
from tests.unit.test_curate_llm import WEI, _bullets, _consistent, _turns, _wait

TOPICS = {
    "food": (
        "I like green tea.",
        "Wei likes green tea",
        "I also like oolong tea.",
        "Wei also likes oolong tea",
    ),
    "music": (
        "I play the violin.",
        "Wei plays the violin",
        "I play the piano too.",
        "Wei plays the piano too",
    ),
    "work": (
        "I work at Alibaba.",
        "Wei works at Alibaba",
        "I lead a team of five.",
        "Wei leads a team of five",
    ),
}
REWRITE = reply(
    bullets=[
        {
            "section": "Notes",
            "text": "Wei likes green tea and also oolong tea",
            "cites": [1, 2],
            "replaces": [1],
            "facts": [1],
        }
    ]
)


def _seed(mem: Memory, clock: FixedClock) -> list[str]:
    """One consolidated fact per topic, then one new fact per topic; the new facts' ids."""
    new = []
    for key, (turn, fact, _, _) in TOPICS.items():
        [episode] = _turns(mem, clock, turn)
        mem.add_fact(fact, WEI, topic=key, sources=[episode])
    mem.consolidate(WEI, use_llm=False)
    for key, (_, _, turn, fact) in TOPICS.items():
        [episode] = _turns(mem, clock, turn)
        new.append(mem.add_fact(fact, WEI, topic=key, sources=[episode]).id)
    return new


def _every_fact_filed_once(mem: Memory) -> None:
    for fact in mem.store.iter_facts(WEI, FactFilter(current_only=True)):
        bullets = _bullets(mem, topic_key(fact))
        citing = [t for _, t, cites in bullets if set(cites) & set(fact.sources)]
        assert len(citing) == 1, (fact.text, bullets)


def _versions(mem: Memory) -> dict[str, int]:
    return {d.key: d.version for d in mem.store.list_documents(WEI)}


@pytest.mark.parametrize(
    "failure", [500, Reply('{"late": 1}', delay_s=1.0)], ids=["5xx", "timeout"]
)
def test_an_outage_midway_leaves_memory_consistent_and_resumable(
    data_dir: Path, clock: FixedClock, failure: Any
) -> None:
    # the contradiction check and the first topic succeed; every later call fails
    script = ByPrompt({"consolidate": [REWRITE]}, fail_after=2, failure=failure)
    with model_memory(data_dir, script, clock, timeout_s=0.3) as mem:
        _seed(mem, clock)
        run = mem.start_run(WEI, extract=False)
        _wait(mem, run.id)
        assert run.state == "done" and run.result is not None
        food = [t for _, t, _ in _bullets(mem, "food")]
        music = [t for _, t, _ in _bullets(mem, "music")]
        _consistent(mem)
        _every_fact_filed_once(mem)
        before = _versions(mem)
        failed = [e for e in mem.runs.replay(run_id=run.id).events if e.kind == "model"]
        # the model is back: a second run finds nothing left to do and duplicates nothing
        script.fail_after = None
        again = mem.consolidate(WEI)
        after = _versions(mem)
        _every_fact_filed_once(mem)
    assert food == ["Wei likes green tea and also oolong tea"]  # the model's batch, whole
    assert music == ["Wei plays the violin", "Wei plays the piano too"]  # rules
    consolidation = run.result["consolidation"]
    assert isinstance(consolidation, dict)
    model = consolidation["model"]
    assert isinstance(model, dict) and model["facts_by_rules"] == 2 and model["failures"]
    assert [e.data["outcome"] for e in failed][:2] == ["ok", "ok"]
    outcomes = [e.data["outcome"] for e in failed[2:]]
    assert outcomes[:3] == ["failed"] * 3 and set(outcomes[3:]) <= {"halted"}
    assert again.added == 0 and again.removed == 0 and before == after


def test_a_run_stopped_between_batches_resumes_without_duplicating(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = ByPrompt({"consolidate": [REWRITE]})
    with model_memory(data_dir, script, clock) as mem:
        _seed(mem, clock)
        apply = DocumentService.apply
        calls = {"n": 0}

        def failing(service: DocumentService, *args: Any, **kwargs: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 2:  # the second topic's batch: the disk fails
                raise StoreError("disk I/O error")
            return apply(service, *args, **kwargs)

        monkeypatch.setattr(DocumentService, "apply", failing)
        with pytest.raises(StoreError):
            mem.consolidate(WEI)
        _consistent(mem)
        monkeypatch.setattr(DocumentService, "apply", apply)
        state = mem.store.get_document(WEI, DocumentKind.STATE, "consolidation")
        assert state is not None and len(state.content["filed"]) == 1  # type: ignore[arg-type]
        asked = script.count("consolidate")
        report = mem.consolidate(WEI)
        food = [t for _, t, _ in _bullets(mem, "food")]
        _consistent(mem)
        _every_fact_filed_once(mem)
        state = mem.store.get_document(WEI, DocumentKind.STATE, "consolidation")
    assert food == ["Wei likes green tea and also oolong tea"]  # not folded in twice
    assert script.count("consolidate") == asked + 2  # only music and work asked again
    assert report.facts_read == 3 and state is not None and "filed" not in state.content
