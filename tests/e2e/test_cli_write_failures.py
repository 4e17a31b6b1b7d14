"""A destination that cannot be written is a one-line error, never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.errors import InvalidInputError
from tests.e2e.cli import Cli


@pytest.mark.parametrize(
    ("fmt", "out"),
    [("markdown", "a-file/sub"), ("markdown", "a-file"), ("jsonl", "a-file/x.jsonl")],
)
def test_export_to_a_path_that_cannot_be_written(
    cli: Cli, tmp_path: Path, fmt: str, out: str
) -> None:
    cli("remember", "I prefer green tea", "--user", "alice")
    (tmp_path / "a-file").write_text("not a directory", encoding="utf-8")
    _, err = cli("export", "--user", "alice", "--format", fmt, "--out", str(tmp_path / out), code=2)
    assert err.startswith("error: ") and "a-file" in err and "Traceback" not in err
    assert (tmp_path / "a-file").read_text(encoding="utf-8") == "not a directory"


def test_export_markdown_from_python_names_the_path(memory: Memory, tmp_path: Path) -> None:
    memory.remember("I prefer green tea", "alice")
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    with pytest.raises(InvalidInputError, match="cannot write"):
        memory.export_markdown("alice", tmp_path / "a-file" / "sub")


def test_a_failed_trace_append_is_one_warning_line_not_a_traceback(data_dir: Path) -> None:
    exe = Path(sys.executable).with_name("memstrata")
    env = {**os.environ, "MEMSTRATA_DATA_DIR": str(data_dir)}
    subprocess.run([exe, "init"], env=env, check=True, capture_output=True)
    (data_dir / "trace").write_text("a file where the trace folder should be", encoding="utf-8")
    done = subprocess.run(
        [exe, "remember", "I prefer green tea", "--user", "alice"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.startswith("ep_")
    assert "Traceback" not in done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("warning: trace append failed") and "Not a directory" in line
