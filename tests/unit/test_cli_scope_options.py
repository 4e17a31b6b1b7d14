"""``--user``, ``--thread`` and ``--agent`` reach every scoped command as one value, checked
where the command builds its scope, so a data directory without a memory is still named first."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from memstrata.cli import main
from memstrata.cli.base import ScopeArgs, scope_options
from memstrata.errors import InvalidInputError
from memstrata.model import Scope


def test_the_options_arrive_as_scope_args() -> None:
    got: list[ScopeArgs] = []

    @click.command()
    @scope_options
    def command(scope_args: ScopeArgs) -> None:
        got.append(scope_args)

    command.main(["--user", "alice", "--thread", "t1"], standalone_mode=False)
    assert got == [ScopeArgs("alice", "t1", None)]
    assert got[0].scope() == Scope("alice", "t1")
    assert [p.name for p in command.params] == ["user", "thread", "agent"]


def test_a_bad_scope_is_refused_when_the_scope_is_built() -> None:
    with pytest.raises(InvalidInputError):
        ScopeArgs("", None, None).scope()


def test_a_missing_memory_is_named_before_a_bad_scope(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nowhere"
    assert main(["get", "ep_x", "--user", "", "--data-dir", str(missing)]) == 3
    assert "no memory in" in capsys.readouterr().err
    assert not missing.exists()
