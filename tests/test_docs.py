"""Tests that keep the docs honest: commands documented, exports pinned, README example runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import memstrata
from memstrata.cli import main
from memstrata.cli.commands import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _commands() -> list[str]:
    names = []
    for name, command in sorted(cli.commands.items()):
        names.append(name)
        for sub in sorted(getattr(command, "commands", {})):
            names.append(f"{name} {sub}")
    return names


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help_and_is_in_the_readme(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command.split(), "--help"]) == 0
    assert "Usage: memstrata" in capsys.readouterr().out
    assert f"memstrata {command}" in README


def test_quick_start_has_exactly_the_two_commands() -> None:
    quick = README.split("## Quick start", 1)[1].split("##", 1)[0]
    commands = re.findall(r"^(make \w+)", quick, re.M)
    assert commands == ["make run", "make test"]


def test_exported_names_are_pinned() -> None:
    assert memstrata.__all__ == [
        "AgentMemory",
        "BusyError",
        "Category",
        "ConfigError",
        "ConflictError",
        "DamagedStoreError",
        "DeleteReason",
        "DeleteReport",
        "Document",
        "DocumentKind",
        "EmbeddingError",
        "Episode",
        "EpisodeFilter",
        "Fact",
        "FactFilter",
        "ForbiddenError",
        "Granularity",
        "Identity",
        "ImportFormatError",
        "IngestReport",
        "InvalidInputError",
        "ItemVersion",
        "Memory",
        "MemstrataError",
        "MigrationError",
        "NotFoundError",
        "Profile",
        "RemoteError",
        "RemoteMemory",
        "Role",
        "Scope",
        "SearchFilter",
        "SearchHit",
        "Settings",
        "Slot",
        "Stats",
        "StoreError",
        "TooLargeError",
        "TopicDocument",
        "Turn",
        "UnauthenticatedError",
        "When",
        "__version__",
        "connect",
        "load_settings",
    ]
    for name in memstrata.__all__:
        assert getattr(memstrata, name) is not None


def test_every_error_derives_from_the_root() -> None:
    import memstrata.errors as errors

    classes = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, Exception)]
    assert all(issubclass(c, errors.MemstrataError) for c in classes)


def test_readme_python_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = README.split("## Python", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert (tmp_path / "memdata" / "memstrata.db").exists()


def test_import_memstrata_is_cheap() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, memstrata; heavy = [m for m in ('pydantic', 'fastapi', 'click', "
        "'sqlite3', 'uvicorn') if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
