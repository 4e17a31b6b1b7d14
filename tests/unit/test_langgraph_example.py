"""The example LangGraph agent remembers a user across threads (scripted model, no network)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("langgraph")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langgraph_agent.py"


def load_example(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("langgraph_agent", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(
        sys.modules, spec.name, module
    )  # pydantic resolves the model's annotations through it
    spec.loader.exec_module(module)
    return module


def test_the_agent_recalls_in_a_new_thread_what_it_was_told_in_another(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    example = load_example(monkeypatch)
    model = example.ScriptedChatModel(replies=["Noted.", "Rice crackers."])
    answers = example.run(data_dir, model)
    assert answers == ["Noted.", "Rice crackers."]
    first, second = model.prompts
    assert "(nothing yet)" in first[0].content
    # thread 2 shares no messages with thread 1: what it knows came from the store
    assert [m.content for m in second[1:]] == ["Which snack should I buy for the train?"]
    assert "- Remember that I am allergic to peanuts." in second[0].content

    from memstrata import Memory

    with Memory.open(data_dir) as memory:  # the memory outlives the agent, as episodes
        kept = memory.list("alice", "episode")
    assert [e.text for e in kept] == ["Remember that I am allergic to peanuts."]  # type: ignore[union-attr]


def test_the_langgraph_example_in_the_docs_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = (EXAMPLE.parents[1] / "docs" / "integrations.md").read_text(encoding="utf-8")
    section = docs.split("## LangGraph", 1)[1].split("\n## ", 1)[0]
    code = section.split("```python", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    exec(compile(code, "docs/integrations.md", "exec"), {})
    assert capsys.readouterr().out.startswith("diet ")
