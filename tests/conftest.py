"""Shared fixtures: a fixed clock, a fresh memory in a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.settings import load_settings

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LOCOMO_DEV = SHARED_DATA / "locomo" / "locomo_dev.json"


class FixedClock:
    """A clock that only moves when told to."""

    def __init__(self, start: datetime | None = None) -> None:
        self.value = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.value

    def advance(self, **delta: float) -> None:
        self.value += timedelta(**delta)


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock()


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test reads the developer's config or writes to their data directory."""
    for var in (
        "MEMSTRATA_DATA_DIR",
        "MEMSTRATA_HOST",
        "MEMSTRATA_AUTH",
        "MEMSTRATA_PORT",
        "MEMSTRATA_TRACE",
        "MEMSTRATA_LOAD_SAMPLE",
        "MEMSTRATA_SAMPLE_USER",
        "MEMSTRATA_STORE_URL",
    ):
        monkeypatch.delenv(var, raising=False)
    empty_config = tmp_path / "empty-config.toml"
    empty_config.write_text("", encoding="utf-8")
    monkeypatch.setenv("MEMSTRATA_CONFIG", str(empty_config))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(autouse=True)
def backoff_waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The waits remote calls' backoff asked for (:func:`memstrata.retry.retry_remote`),
    recorded instead of slept: no test waits out a scripted 429 or 500."""
    import memstrata.retry

    waits: list[float] = []
    monkeypatch.setattr(memstrata.retry, "transient_wait", waits.append)
    return waits


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "mem"


@pytest.fixture
def memory(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    with Memory.open(settings=load_settings(data_dir=data_dir), clock=clock) as mem:
        yield mem
