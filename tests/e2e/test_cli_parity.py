"""The CLI refuses what HTTP refuses, with exit 2 (bad input) where HTTP answers 422."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.cli import main


def test_a_document_named_identity_and_rerank_without_a_model_are_bad_input(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["remember", "I like tea", "--user", "a", "--data-dir", str(data_dir)]) == 0
    assert main(["doc", "show", "identity", "--user", "a", "--data-dir", str(data_dir)]) == 2
    assert "memstrata identity" in capsys.readouterr().err
    args = ["search", "tea", "--user", "a", "--rerank", "--data-dir", str(data_dir)]
    assert main(args) == 2
    assert "llm" in capsys.readouterr().err


def test_search_takes_every_filter_the_readme_names(
    data_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    base = ["--user", "a", "--data-dir", str(data_dir)]
    assert main(["remember", "green tea in the chat", *base]) == 0
    assert main(["remember", "green tea in my notes", "--surface", "notebook", *base]) == 0
    capsys.readouterr()
    assert main(["search", "green tea", "--surface", "notebook", "--json", *base]) == 0
    [hit] = json.loads(capsys.readouterr().out)
    assert hit["text"].endswith("green tea in my notes")
    for flag in ("--include-archived", "--include-superseded", "--current-only"):
        assert main(["search", "green tea", flag, "--json", *base]) == 0
        assert len(json.loads(capsys.readouterr().out)) == 2
