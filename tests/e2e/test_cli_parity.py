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
