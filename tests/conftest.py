"""Shared fixtures: a fixed clock, a fresh memory in a temporary directory.

``make test`` runs the suite on parallel workers (pytest-xdist, ``--dist loadgroup``): each
worker is a process of its own running any test in any order, beside other workers and other
runs on the same machine. A test must therefore be parallel-safe:

* files: write under ``tmp_path`` / ``tmp_path_factory`` only (never a fixed path under
  ``/tmp`` or the checkout); the one exception, ``build/screenshots``, takes files named after
  the test, which is unique in a run;
* ports: a live server binds port 0 (``tests/e2e/live.py``); a subprocess that needs a port
  number takes one from :func:`tests.ports.free_port`;
* environment: set and delete variables with ``monkeypatch`` (``_isolated_env`` below
  already points config, data and cache directories into ``tmp_path``);
* database servers: take a fresh schema or database per case from
  ``tests/contract/backends.py`` (random names), never a fixed one;
* state shared within a process (module-level caches, the id generator, class attributes)
  is shared by the tests a worker runs one after the other: patch it with ``monkeypatch``;
* a fixture more expensive than a few seconds that many tests share (the workbench's server
  and browser) is scoped to its package, and its tests carry one ``xdist_group`` so that a
  single worker starts it (``tests/e2e/web/conftest.py``).

``make test TEST_WORKERS=0`` runs serially in one process (to debug a failure, or with
``--pdb``); ``.venv/bin/python -m pytest`` without ``-n`` is serial too.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.settings import load_settings

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LOCOMO_DEV = SHARED_DATA / "locomo" / "locomo_dev.json"
#: where the workbench's browser tests write their screenshots (gitignored)
SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"


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
def memory(data_dir: Path, clock: FixedClock, request: pytest.FixtureRequest) -> Iterator[Memory]:
    """A memory in ``data_dir`` on the fixed clock. In a module marked ``light_memory`` it
    loads no model and no sample: the hashing embedder (64 dimensions), ``load_sample`` off."""
    if request.node.get_closest_marker("light_memory") is None:
        with Memory.open(settings=load_settings(data_dir=data_dir), clock=clock) as mem:
            yield mem
        return
    from memstrata.embed.fake import HashingEmbedder

    settings = load_settings(data_dir=data_dir, load_sample=False)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as mem:
        yield mem


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Where the browser tests' screenshots are (here, not in ``tests/e2e/web``: under
    pytest-xdist only the controlling process prints a summary, and it loads this file)."""
    if SCREENSHOTS.is_dir():
        shots = list(SCREENSHOTS.glob("*.png"))
        if shots:
            terminalreporter.write_line(
                f"workbench screenshots: {SCREENSHOTS} ({len(shots)} files)"
            )


#: the loggers the server configures (``requestlog.configure_server_logging``)
SERVER_LOGGERS = ("memstrata", "uvicorn", "uvicorn.error")


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    """The server's log lines as JSON in a buffer, the loggers restored afterwards."""
    from memstrata.server.requestlog import configure_server_logging

    saved = {
        name: (
            logging.getLogger(name).handlers[:],
            logging.getLogger(name).level,
            logging.getLogger(name).propagate,
        )
        for name in SERVER_LOGGERS
    }
    stream = io.StringIO()
    assert configure_server_logging("json", stream) == "json"
    yield stream
    for name, (handlers, level, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate
