"""Bad input through the CLI: a clear one-line error, the right exit code, nothing lost and
nothing created by mistake."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.cli import main
from tests.e2e.test_cli import Cli


@pytest.fixture
def cli(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(data_dir, capsys)


def _one_line_error(err: str, *needles: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


READS = [
    ["list", "--user", "a"],
    ["search", "tea", "--user", "a"],
    ["stats", "--user", "a"],
    ["get", "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", "--user", "a"],
    ["history", "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", "--user", "a"],
    ["export", "--user", "a"],
    ["doc", "show", "essentials", "--user", "a"],
    ["identity", "show", "--user", "a"],
    ["wake-up", "--user", "a"],
    ["recall", "tea", "--user", "a"],
    ["context", "tea", "--user", "a"],
    ["delete", "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", "--user", "a"],
    ["forget", "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", "--user", "a"],
    ["consolidate", "--user", "a"],
]


@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a[:2]))
def test_a_read_of_a_missing_data_dir_is_not_found_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    missing = tmp_path / "typo"
    assert main([*args, "--data-dir", str(missing)]) == 3
    _one_line_error(capsys.readouterr().err, str(missing))
    assert not missing.exists()


def test_writing_commands_create_the_data_dir(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    assert main(["remember", "hello", "--user", "a", "--data-dir", str(fresh)]) == 0
    assert main(["list", "--user", "a", "--data-dir", str(fresh)]) == 0


def test_a_named_config_file_that_does_not_exist_is_a_config_error(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "nope.toml"
    monkeypatch.setenv("MEMSTRATA_CONFIG", str(missing))
    assert main(["remember", "hi", "--user", "a", "--data-dir", str(data_dir)]) == 6
    _one_line_error(capsys.readouterr().err, str(missing))
    assert not data_dir.exists()
