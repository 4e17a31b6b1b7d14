"""Fixtures the end-to-end tests share: the CLI on the test's data directory, and an HTTP
client of the API over the test's memory (behind an admin key)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from tests.e2e.cli import Cli
from tests.keyed import keyed_client


@pytest.fixture
def cli(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    """``memstrata`` on ``data_dir`` (see :class:`tests.e2e.cli.Cli`)."""
    return Cli(data_dir, capsys)


@pytest.fixture
def client(memory: Memory) -> Iterator[TestClient]:
    """The API over ``memory``, in process, with an admin key's headers (a module over
    other records defines its own ``client``, as ``test_workbench_api.py`` does)."""
    with keyed_client(memory) as c:
        yield c
