"""Tests that need a real mount (a small tmpfs, a read-only bind mount) run their commands in
a private mount namespace, so the mounts vanish with the process; without root and
``unshare -m`` they are skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _can_mount() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "true"], capture_output=True, check=False
    )
    return probe.returncode == 0


needs_mounts = pytest.mark.skipif(
    not _can_mount(), reason="needs root and mount namespaces (unshare -m)"
)


def small_disk(directory: Path, size: str) -> str:
    """The shell command that mounts a tmpfs of ``size`` (``400k``, ``2m``) on ``directory``,
    made here if missing."""
    directory.mkdir(parents=True, exist_ok=True)
    return f'mount -t tmpfs -o size={size} tmpfs "{directory}"'


def read_only(directory: Path) -> str:
    """The shell command that makes ``directory`` a read-only mount of itself."""
    return f'mount --bind "{directory}" "{directory}" && mount -o remount,bind,ro "{directory}"'


def run_unshared(
    shell: str, *, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """Run the ``shell`` command line in a private mount namespace."""
    return subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", shell],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )


def run_in_mount_namespace(
    mount: str, script: str, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    """Run ``script`` (Python, with memstrata and the tests importable) in a private mount
    namespace after the shell ``mount`` commands."""
    code = tmp_path / "script.py"
    code.write_text(textwrap.dedent(script), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": f"{SRC}{os.pathsep}{SRC.parent}"}
    return run_unshared(f'{mount} && exec "{sys.executable}" "{code}"', env=env)


def fill_disk(directory: Path, *, leave: int = 0) -> None:
    """Fill the file system of ``directory`` (a small disk) until ``leave`` bytes are free."""
    stat = os.statvfs(directory)
    free = stat.f_bavail * stat.f_frsize
    (directory.parent / "filler").write_bytes(b"x" * max(0, free - leave))
