"""The Python facade refuses values of the wrong type with InvalidInputError, never a TypeError."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.errors import InvalidInputError

CASES: dict[str, Callable[[Memory, Path], Any]] = {
    "remember None": lambda m, _: m.remember(None, "u"),  # type: ignore[arg-type]
    "remember int": lambda m, _: m.remember(5, "u"),  # type: ignore[arg-type]
    "metadata list": lambda m, _: m.remember({"text": "x", "metadata": [1]}, "u"),
    "speaker int": lambda m, _: m.remember({"text": "x", "speaker": 5}, "u"),
    "session int": lambda m, _: m.remember({"text": "x", "session_id": 5}, "u"),
    "get None": lambda m, _: m.get(None, "u"),  # type: ignore[arg-type]
    "history None": lambda m, _: m.history(None, "u"),  # type: ignore[arg-type]
    "identity int": lambda m, _: m.set_identity(5, "u"),  # type: ignore[arg-type]
    "fact topic int": lambda m, _: m.add_fact("x y z", "u", topic=5),  # type: ignore[arg-type]
    "search filters str": lambda m, _: m.search("tea", "u", filters="x"),  # type: ignore[arg-type]
    "context budget str": lambda m, _: m.context("tea", "u", budget="5"),  # type: ignore[arg-type]
    "export onto a file": lambda m, tmp: m.export_markdown("u", tmp / "file.txt"),
    "metadata NaN": lambda m, _: m.remember({"text": "x", "metadata": {"a": float("nan")}}, "u"),
    "metadata object": lambda m, _: m.remember({"text": "x", "metadata": {"a": object()}}, "u"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_wrong_types_are_invalid_input(memory: Memory, tmp_path: Path, case: str) -> None:
    memory.remember("I like tea", "u")
    (tmp_path / "file.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(InvalidInputError):
        CASES[case](memory, tmp_path)
    assert memory.identity("u").text == ""
    assert [e.text for e in memory.list("u")] == ["I like tea"]
    assert (tmp_path / "file.txt").read_text(encoding="utf-8") == "mine"


SURROGATE_CASES: dict[str, Callable[[Memory, str], Any]] = {
    "search": lambda m, _: m.search("tea \ud800", "u"),
    "context": lambda m, _: m.context("tea \ud800", "u"),
    "identity": lambda m, _: m.set_identity("I serve \ud800", "u"),
    "fact": lambda m, ep: m.add_fact("Likes \ud800 tea", "u", sources=[ep]),
    "fact update": lambda m, ep: m.update(
        m.add_fact("Likes tea", "u", sources=[ep]).id, "u", text="\udcff"
    ),
}


@pytest.mark.parametrize("case", sorted(SURROGATE_CASES))
def test_lone_surrogates_in_any_text_are_invalid_input(memory: Memory, case: str) -> None:
    [ep] = memory.remember("I like tea", "u")
    with pytest.raises(InvalidInputError, match="surrogate"):
        SURROGATE_CASES[case](memory, ep.id)
    assert memory.identity("u").text == ""
