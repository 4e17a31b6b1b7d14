"""Fixtures the reliability tests share."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.reliability.sqlite_build import secure_delete_off_by_default

ROOT = Path(__file__).resolve().parents[2]
#: two hashing models in a blend: every text is embedded (and cached) twice
BLEND = [{"provider": "fake", "dim": 32}, {"provider": "fake", "dim": 48}]


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The environment of this process and of the CLI: a blend of two models, no user config."""
    secure_delete_off_by_default(monkeypatch)
    config = tmp_path / "config.toml"
    config.write_text("", encoding="utf-8")
    monkeypatch.setenv("MEMSTRATA_CONFIG", str(config))
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "blend")
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PARTS", json.dumps(BLEND))
    return {**os.environ, "PYTHONPATH": str(ROOT)}
