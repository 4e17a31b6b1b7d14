"""The CLI in process, as the e2e tests drive it (the ``cli`` fixture, ``tests/e2e/conftest.py``):
a command's output and its exit code, asserted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.cli import main


class Cli:
    """``memstrata`` on one data directory: ``cli(*args, code=0)`` runs a command, asserts it
    exited ``code`` and returns its stdout and stderr; ``cli.json(*args)`` runs it with
    ``--json`` (exit 0) and parses what it printed."""

    def __init__(self, data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.data_dir = data_dir
        self.capsys = capsys

    def __call__(self, *args: str, code: int = 0) -> tuple[str, str]:
        self.capsys.readouterr()
        assert main([*args, "--data-dir", str(self.data_dir)]) == code
        out = self.capsys.readouterr()
        return out.out, out.err

    def json(self, *args: str) -> object:
        out, _ = self(*args, "--json")
        return json.loads(out)
