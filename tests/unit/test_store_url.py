"""Store URLs: parsed, shown without their password, and opened into the right store."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.cli import main
from memstrata.errors import ConfigError, StoreError
from memstrata.model import Scope
from memstrata.settings import load_settings
from memstrata.store.opening import open_store
from memstrata.store.sqlite import SqliteStore
from memstrata.store.url import parse_store_url, redact

SECRET = "s3cr%40t"


@pytest.mark.parametrize(
    ("url", "engine"),
    [
        ("sqlite:////var/lib/m.db", "sqlite"),
        ("sqlite:///m.db", "sqlite"),
        ("postgresql://u:p@db:5432/mem", "postgresql"),
        ("postgres://u@db/mem", "postgresql"),
        ("postgresql+psycopg://u@db/mem", "postgresql"),
        ("mysql://u:p@db:3306/mem", "mysql"),
        ("mariadb://u:p@db/mem", "mysql"),
    ],
)
def test_each_engine_is_named_by_its_scheme(url: str, engine: str) -> None:
    assert parse_store_url(url).engine == engine


def test_sqlite_paths_are_absolute_or_relative() -> None:
    assert parse_store_url("sqlite:////var/lib/m.db").sqlite_path == Path("/var/lib/m.db")
    assert parse_store_url("sqlite:///data/m.db").sqlite_path == Path("data/m.db")


@pytest.mark.parametrize(
    "url",
    [
        f"oracle://u:{SECRET}@db/mem",
        "not a url",
        "sqlite://",
        "sqlite://host/m.db",
        f"postgresql://u:{SECRET}@db:notaport/mem",
    ],
)
def test_a_wrong_url_is_a_config_error_without_the_password(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_store_url(url)
    assert SECRET not in str(caught.value) and "s3cr" not in str(caught.value)


def test_redact_hides_passwords_in_the_user_part_and_the_query() -> None:
    assert redact("postgresql://me:pw@db:5432/mem") == "postgresql://me:***@db:5432/mem"
    assert redact("mysql://me@db/mem") == "mysql://me@db/mem"
    assert redact("postgresql://db/mem?user=me&password=pw&x=1") == (
        "postgresql://db/mem?user=me&password=***&x=1"
    )
    assert "pw" not in redact("postgresql://me:p@w@db/mem")


def test_a_sqlite_url_opens_that_file(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path / 'here.db'}")
    try:
        assert isinstance(store, SqliteStore)
        assert (tmp_path / "here.db").exists()
    finally:
        store.close()


@pytest.mark.parametrize("scheme", ["postgresql", "mysql"])
def test_an_unreachable_server_is_a_store_error_without_the_password(scheme: str) -> None:
    url = f"{scheme}://me:{SECRET}@127.0.0.1:1/mem"
    with pytest.raises(StoreError) as caught:
        open_store(url)
    message = str(caught.value)
    assert "cannot connect" in message and "me:***@127.0.0.1:1" in message
    assert "s3cr" not in message


def test_memory_open_takes_a_store_url(tmp_path: Path) -> None:
    db = tmp_path / "elsewhere" / "records.db"
    with Memory.open(tmp_path / "data", store_url=f"sqlite:///{db}") as mem:
        mem.remember("I like green tea", Scope("u"))
        assert mem.stats(Scope("u")).episodes == 1
    assert db.exists() and not (tmp_path / "data" / "memstrata.db").exists()


def test_the_setting_comes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_STORE_URL", f"mysql://me:{SECRET}@db/mem")
    settings = load_settings(data_dir=tmp_path)
    assert settings.server_store and SECRET not in repr(settings)


def test_the_cli_says_what_is_wrong_with_a_store_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--data-dir", str(tmp_path)]
    code = main(["--store-url", f"nosuch://me:{SECRET}@h/db", "stats", "--user", "u", *data])
    err = capsys.readouterr().err
    assert code == 6 and "names no known engine" in err and "s3cr" not in err
    assert "Traceback" not in err
    url = f"postgresql://me:{SECRET}@127.0.0.1:1/mem"
    code = main(["--store-url", url, "stats", "--user", "u", *data])
    err = capsys.readouterr().err
    assert code == 7 and "cannot connect" in err and "s3cr" not in err
    assert "Traceback" not in err
