"""Every file and directory holding a user's text is the owner's alone, whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.bench.handed import hashing_embedder, offline_settings
from memstrata.model import Role, Turn


@pytest.fixture
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)  # what most systems give: files 0644, directories 0755
    try:
        yield
    finally:
        os.umask(old)


def _open_to_others(root: Path) -> list[str]:
    paths = [root, *root.rglob("*")]
    return [
        f"{oct(stat.S_IMODE(p.lstat().st_mode))} {p.relative_to(root)}"
        for p in paths
        if stat.S_IMODE(p.lstat().st_mode) & 0o077
    ]


def test_a_data_directory_is_made_owner_only(tmp_path: Path, usual_umask: None) -> None:
    data = tmp_path / "memory"
    memory = Memory.open(settings=offline_settings(data), embedder=hashing_embedder())
    try:
        memory.remember([Turn(text="我对花生过敏。 I live in Cairo.", role=Role.USER)], "u")
        memory.search("Cairo", "u", wait=True)
        memory.extract("u")
        memory.consolidate("u", use_llm=False)
    finally:
        memory.close()
    held = {p.name for p in data.rglob("*")}
    assert {"memstrata.db", "index.npz", "CURRENT"} <= held  # the store and a saved index
    assert _open_to_others(data) == []


def test_a_data_directory_made_before_is_made_owner_only_when_opened(
    tmp_path: Path, usual_umask: None
) -> None:
    data = tmp_path / "old"
    (data / "index" / "x").mkdir(parents=True)
    (data / "index" / "x" / "index.npz").write_bytes(b"old")
    os.chmod(data, 0o755)
    Memory.open(settings=offline_settings(data), embedder=hashing_embedder()).close()
    assert _open_to_others(data) == []
