"""A mistyped ``--from`` leaves no litter: ``memstrata migrate`` from a SQLite path that does
not exist creates neither that file (nor its directories) nor the target, and a source that
holds no records is refused before the target is opened, so no empty target store is made."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.cli import main
from memstrata.errors import InvalidInputError
from memstrata.store.copy import migrate_store
from memstrata.store.opening import open_store


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
