"""``memstrata migrate`` with one store named two ways (``postgres://`` and ``postgresql://``,
a host name and its address, a relative and an absolute path) is refused (exit 2) and changes
nothing: reported as "already holds an identical copy, verified", it would invite the operator
to retire the source, which is the only copy. A true copy is still told apart from its source.
SQLite always; PostgreSQL and MariaDB/MySQL when their test servers are set."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from memstrata.errors import InvalidInputError
from memstrata.store.copy import migrate_store
from memstrata.store.opening import open_store
from memstrata.store.sql.copying import CopyTables
from tests.conftest import FixedClock
from tests.contract.backends import fresh_url
from tests.integration.test_store_migrate import _fill

ENGINES = ("sqlite", "postgresql", "mysql")
TIMEOUT_S = 120.0


def _other_spelling(url: str, cwd: Path) -> str:
    """The same store's URL written another way."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        return f"sqlite:///{os.path.relpath(path, cwd)}"  # relative to where the command runs
    parts = urlsplit(url)
    scheme = {"postgresql": "postgres", "mysql": "mariadb"}[parts.scheme]
    netloc = parts.netloc.replace("127.0.0.1", "localhost")
    assert netloc != parts.netloc or scheme != parts.scheme
    return urlunsplit(parts._replace(scheme=scheme, netloc=netloc))


def _digests(url: str) -> dict[str, dict[str, object]]:
    store = open_store(url)
    try:
        assert isinstance(store, CopyTables)
        return store.table_digests()
    finally:
        store.close()


@pytest.mark.parametrize("engine", ENGINES)
def test_migrating_a_store_into_itself_named_another_way_is_refused(
    engine: str, tmp_path: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    with fresh_url(engine, tmp_path) as url:
        _fill(url, clock)
        before = _digests(url)
        monkeypatch.chdir(tmp_path)
        alias = _other_spelling(url, tmp_path)
        assert alias.strip() != url.strip()
        with pytest.raises(InvalidInputError, match="same store"):
            migrate_store(url, alias)
        exe = str(Path(sys.executable).with_name("memstrata"))
        done = subprocess.run(
            [exe, "migrate", "--from", alias, "--to", url, "--json"],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            cwd=tmp_path,
            env={**os.environ, "MEMSTRATA_DATA_DIR": str(tmp_path / "data")},
            stdin=subprocess.DEVNULL,
        )
        assert done.returncode == 2, done.stdout + done.stderr
        assert done.stdout == ""
        assert "same store" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert _digests(url) == before


@pytest.mark.parametrize("engine", ENGINES)
def test_a_true_copy_on_the_same_engine_is_still_verified_as_a_copy(
    engine: str, tmp_path: Path, clock: FixedClock
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with fresh_url(engine, tmp_path / "a") as src, fresh_url(engine, tmp_path / "b") as dst:
        _fill(src, clock)
        assert migrate_store(src, dst).copied
        again = migrate_store(src, dst)
        assert not again.copied
        assert again.tables == _digests(src) == _digests(dst)
