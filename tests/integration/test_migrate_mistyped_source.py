"""A mistyped ``--from`` leaves no litter: ``memstrata migrate`` from a SQLite path that does
not exist creates neither that file (nor its directories) nor the target, and a source that
holds no records is refused before the target is opened, so no empty target store is made.
A store whose schema is a newer memstrata's is named as the source or the target (exit 7)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from memstrata.cli import main
from memstrata.errors import InvalidInputError
from memstrata.store.copy import migrate_store
from memstrata.store.opening import open_store
from tests.contract.backends import fresh_url
from tests.contract.test_store_contract import ALICE, episode


def test_a_missing_sqlite_source_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_DATA_DIR", str(tmp_path / "data"))
    typo = tmp_path / "typo" / "dir" / "memstrata.db"
    target = tmp_path / "new.db"
    code = main(["migrate", "--from", f"sqlite:///{typo}", "--to", f"sqlite:///{target}"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "does not exist" in err and str(typo) in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "typo").exists()
    assert not target.exists()


def test_an_empty_source_is_refused_before_the_target_is_made(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    open_store(f"sqlite:///{empty}").close()
    target = tmp_path / "new.db"
    with pytest.raises(InvalidInputError, match="holds no records"):
        migrate_store(f"sqlite:///{empty}", f"sqlite:///{target}")
    assert not target.exists()


@pytest.mark.parametrize("newer", ["source", "target"])
def test_a_store_of_a_newer_memstrata_is_named_as_the_source_or_the_target(
    newer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_DATA_DIR", str(tmp_path / "data"))
    src, dst = tmp_path / "src.db", tmp_path / "dst.db"
    store = open_store(f"sqlite:///{src}")
    try:
        store.add_episodes(ALICE, [episode(ALICE, "a turn to move")])
    finally:
        store.close()
    open_store(f"sqlite:///{dst}").close()
    future = src if newer == "source" else dst
    with sqlite3.connect(future) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('9999_future', 'x')")
    conn.close()
    before = {p: p.read_bytes() for p in (src, dst)}
    code = main(["migrate", "--from", f"sqlite:///{src}", "--to", f"sqlite:///{dst}"])
    err = capsys.readouterr().err
    assert code == 7
    assert f"the {newer} sqlite:///{future}: " in err and "9999_future" in err
    assert len(err.strip().splitlines()) == 1
    assert {p: p.read_bytes() for p in (src, dst)} == before


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_a_server_source_without_a_schema_is_left_without_one(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mistyped database name on a server: opening it as the source made memstrata's schema
    in that database before the empty source was refused."""
    from memstrata.doctor.server import read_schema
    from memstrata.store.url import parse_store_url

    monkeypatch.setenv("MEMSTRATA_DATA_DIR", str(tmp_path / "data"))
    target = tmp_path / "new.db"
    with fresh_url(engine, tmp_path) as src:
        code = main(["migrate", "--from", src, "--to", f"sqlite:///{target}", "--json"])
        out, err = capsys.readouterr()
        assert code == 2 and out == ""
        assert "holds no memstrata schema" in err and len(err.strip().splitlines()) == 1
        assert read_schema(parse_store_url(src)).applied == ()
    assert not target.exists()
