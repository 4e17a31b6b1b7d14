"""A store URL's password is never shown, however the operator wrote it: with a '/', '?' or
'#' left unencoded (a base64 password), with a '%' that starts no escape (which libpq's error
quotes back), or in an ``sslpassword=`` parameter. Checked in the parser's errors, in
:func:`redact`, and in what ``doctor --json``, ``compact``, ``sites list`` and ``migrate``
print. And a SQLite URL with parameters is refused rather than opened as another file."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.cli import main
from memstrata.errors import ConfigError
from memstrata.store.opening import open_store
from memstrata.store.url import parse_store_url, redact

SECRET = "Zq9SECRETk"

LEAKY = [
    f"postgresql://mem:ab/{SECRET}@db.internal:5432/memstrata",  # '/' in the password
    f"postgresql://mem:ab/{SECRET}@db.internal/memstrata",
    f"postgresql://mem:12/{SECRET}@db.internal/memstrata",  # looks like host 'mem', port 12
    f"mysql://mem:ab/{SECRET}@db.internal/memstrata",
    f"postgresql://mem:ab#{SECRET}@db.internal/memstrata",  # '#' and '?' in the password
    f"postgresql://mem:ab?{SECRET}@db.internal/memstrata",
    f"postgresql://mem:p%zz{SECRET}@127.0.0.1:1/memstrata",  # a '%' that starts no escape
    f"mysql://mem:p%zz{SECRET}@127.0.0.1:1/memstrata",
]


@pytest.mark.parametrize("url", LEAKY)
def test_a_url_whose_password_breaks_it_is_refused_without_showing_it(url: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_store_url(url)
    message = str(caught.value)
    assert SECRET not in message and "ab" not in message.split("malformed")[1]
    assert "percent-encode" in message
    assert SECRET not in redact(url)
    assert redact(url).startswith(url.split("://")[0] + "://mem:***@")


def test_password_parameters_are_hidden_whatever_their_name() -> None:
    for param in ("password", "PassWord", "sslpassword", "pass%77ord"):
        shown = redact(f"postgresql://db/mem?user=me&{param}={SECRET}&sslmode=require")
        assert SECRET not in shown and shown.endswith(f"{param}=***&sslmode=require")


def test_well_formed_urls_still_parse() -> None:
    for url in [
        "postgresql://mem:p%40%2F%3Fss@db.internal:5432/memstrata?sslmode=require",
        "postgresql://db.internal/memstrata?options=-csearch_path%3Dx",
        "postgresql:///memstrata?host=/var/run/postgresql",
        "mysql://mem:pw@db/memstrata?unix_socket=/run/mysqld/mysqld.sock",
        "sqlite:///100%.db",
    ]:
        assert parse_store_url(url).raw == url


@pytest.mark.parametrize("url", LEAKY)
@pytest.mark.parametrize(
    "command",
    [
        ["doctor", "--json"],
        ["compact", "--json"],
        ["sites", "list", "--json"],
        ["migrate", "--from", "sqlite:///x.db"],
    ],
    ids=["doctor", "compact", "sites", "migrate"],
)
def test_no_command_prints_the_password(
    url: str,
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMSTRATA_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    migrating = command[0] == "migrate"
    code = main([*command, "--to", url] if migrating else ["--store-url", url, *command])
    out, err = capsys.readouterr()
    assert code != 0
    assert SECRET not in out + err


@pytest.mark.parametrize("suffix", ["?mode=ro", "?timeout=30", "#main", "?"])
def test_a_sqlite_url_with_parameters_is_refused_rather_than_a_new_empty_store(
    suffix: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The rest of a SQLite URL is the file's name: ``m.db?mode=ro`` opened a new, empty store
    in a file of that name, and the operator's memory looked gone."""
    monkeypatch.setenv("MEMSTRATA_DATA_DIR", str(tmp_path / "data"))
    db = tmp_path / "m.db"
    assert main(["--store-url", f"sqlite:///{db}", "remember", "--user", "u", "kept"]) == 0
    capsys.readouterr()
    url = f"sqlite:///{db}{suffix}"
    with pytest.raises(ConfigError, match="takes no parameters"):
        parse_store_url(url)
    code = main(["--store-url", url, "recall", "--user", "u", "kept"])
    out, err = capsys.readouterr()
    assert out == ""
    assert code == 6 and "takes no parameters" in err
    assert not [p.name for p in tmp_path.iterdir() if "?" in p.name or "#" in p.name]
    assert parse_store_url(f"sqlite:///{tmp_path}/a%3Fb.db").sqlite_path.name == "a?b.db"


@pytest.mark.parametrize("path", ["~/memstrata.db", "~root/memstrata.db", "~"])
def test_a_sqlite_path_starting_with_a_tilde_is_refused_rather_than_made_literally(
    path: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``sqlite:///~/memstrata.db`` made a directory named '~' in the working directory and a
    new, empty store in it (and a '~' directory invites a fatal ``rm -rf ~``)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMSTRATA_DATA_DIR", str(tmp_path / "data"))
    with pytest.raises(ConfigError, match="does not expand"):
        parse_store_url(f"sqlite:///{path}")
    code = main(["--store-url", f"sqlite:///{path}", "remember", "--user", "u", "a turn"])
    assert code == 6 and "does not expand" in capsys.readouterr().err
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith("~")]
    assert parse_store_url("sqlite:///a~b/m.db").sqlite_path == Path("a~b/m.db")


@pytest.mark.parametrize("char", ["\x00", "\n", "\t", "\x7f"])
@pytest.mark.parametrize(
    "url", ["sqlite:///{tmp}/a{c}b.db", "postgresql://mem:p{c}" + SECRET + "@127.0.0.1:1/db"]
)
def test_a_control_character_in_a_url_is_a_config_error(
    url: str, char: str, tmp_path: Path
) -> None:
    """A NUL in a SQLite path was a ValueError deep in the file system (a traceback), and in
    a server URL it cut the URL short in the driver."""
    where = tmp_path / "stores"
    where.mkdir()
    url = url.format(tmp=where, c=char)
    with pytest.raises(ConfigError, match="control character") as caught:
        open_store(url)
    assert SECRET not in str(caught.value) and char not in str(caught.value)
    assert not list(where.iterdir())


@pytest.mark.parametrize("empty", ["", "  "])
@pytest.mark.parametrize("command", [["doctor"], ["remember", "--user", "u", "a turn"]])
def test_an_empty_store_url_is_refused_by_every_command(
    empty: str,
    command: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``MEMSTRATA_STORE_URL=`` (set, but empty) was refused by every command but ``doctor``,
    which checked the data directory's own SQLite file instead and could say all is well."""
    monkeypatch.setenv("MEMSTRATA_DATA_DIR", str(tmp_path / "data"))
    assert main(["remember", "--user", "u", "in the default store"]) == 0
    capsys.readouterr()
    monkeypatch.setenv("MEMSTRATA_STORE_URL", empty)
    code = main(command)
    out, err = capsys.readouterr()
    assert code == 6 and out == ""
    assert "store_url" in err and "is empty" in err
