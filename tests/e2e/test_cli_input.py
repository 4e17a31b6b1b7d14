"""Bad input through the CLI: a clear one-line error, the right exit code, nothing lost and
nothing created by mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.cli import main
from tests.e2e.cli import Cli


def _one_line_error(err: str, *needles: str) -> None:
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err


READS = [
    ["list", "--user", "a"],
    ["search", "tea", "--user", "a"],
    ["stats", "--user", "a"],
    ["get", "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", "--user", "a"],
    ["history", "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", "--user", "a"],
    ["export", "--user", "a"],
    ["doc", "show", "essentials", "--user", "a"],
    ["identity", "show", "--user", "a"],
    ["wake-up", "--user", "a"],
    ["recall", "tea", "--user", "a"],
    ["context", "tea", "--user", "a"],
    ["delete", "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", "--user", "a"],
    ["forget", "ep_01AAAAAAAAAAAAAAAAAAAAAAAA", "--user", "a"],
    ["consolidate", "--user", "a"],
]


@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a[:2]))
def test_a_read_of_a_missing_data_dir_is_not_found_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    missing = tmp_path / "typo"
    assert main([*args, "--data-dir", str(missing)]) == 3
    _one_line_error(capsys.readouterr().err, str(missing))
    assert not missing.exists()


def test_writing_commands_create_the_data_dir(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh"
    assert main(["remember", "hello", "--user", "a", "--data-dir", str(fresh)]) == 0
    assert main(["list", "--user", "a", "--data-dir", str(fresh)]) == 0


def test_a_named_config_file_that_does_not_exist_is_a_config_error(
    data_dir: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    missing = tmp_path / "nope.toml"
    monkeypatch.setenv("MEMSTRATA_CONFIG", str(missing))
    assert main(["remember", "hi", "--user", "a", "--data-dir", str(data_dir)]) == 6
    _one_line_error(capsys.readouterr().err, str(missing))
    assert not data_dir.exists()


def _bad_utf8(path: Path, prefix: bytes = b"hello ") -> Path:
    path.write_bytes(prefix + b"\xff\xfe world\n")
    return path


@pytest.mark.parametrize(
    "command",
    [
        ["ingest", "{file}", "--format", "jsonl", "--user", "a"],
        ["ingest", "{file}", "--format", "locomo", "--user", "a"],
        ["doc", "apply", "essentials", "{file}", "--user", "a", "--version", "0"],
        ["doc", "diff", "essentials", "{file}", "--user", "a"],
        ["identity", "edit", "--user", "a", "--file", "{file}"],
    ],
    ids=lambda c: " ".join(c[:2]),
)
def test_a_file_that_is_not_utf8_is_a_clear_error(
    cli: Cli, tmp_path: Path, command: list[str]
) -> None:
    cli("remember", "keep me", "--user", "a")
    bad = _bad_utf8(tmp_path / "bad.txt")
    _, err = cli(*(str(bad) if arg == "{file}" else arg for arg in command), code=2)
    _one_line_error(err, "bad.txt", "UTF-8", "byte 6")
    assert [e["text"] for e in cli.json("list", "--user", "a")] == ["keep me"]  # type: ignore[union-attr]


def test_an_import_directory_with_a_file_that_is_not_utf8_is_a_clear_error(
    cli: Cli, tmp_path: Path
) -> None:
    cli("remember", "keep me", "--user", "a")
    out = tmp_path / "export"
    cli("export", "--user", "a", "--format", "markdown", "--out", str(out))
    _bad_utf8(out / "episodes.jsonl", (out / "episodes.jsonl").read_bytes())
    _, err = cli("import", str(out), "--user", "b", code=2)
    _one_line_error(err, "episodes.jsonl", "UTF-8")
    cli("stats", "--user", "b")
    assert cli.json("list", "--user", "b") == []


def test_stdin_that_is_not_utf8_is_a_clear_error(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    cli("init")
    stdin = io.TextIOWrapper(
        io.BytesIO(b"fine\nbad \xff line\n"), encoding="utf-8", errors="surrogateescape"
    )
    monkeypatch.setattr(sys, "stdin", stdin)
    _, err = cli("remember", "-", "--user", "a", code=2)
    _one_line_error(err, "stdin", "UTF-8", "byte 9")
    assert cli.json("list", "--user", "a") == []


@pytest.mark.parametrize(
    "args",
    [
        ["remember", "bad \udcff text", "--user", "a"],
        ["remember", "text", "--user", "\udcff"],
        ["search", "\ud800", "--user", "a"],
    ],
)
def test_lone_surrogates_on_the_command_line_are_a_clear_error(cli: Cli, args: list[str]) -> None:
    cli("init")
    _, err = cli(*args, code=2)
    _one_line_error(err, "UTF-8")


def test_lone_surrogates_in_an_ingest_file_are_refused_with_the_line(
    cli: Cli, tmp_path: Path
) -> None:
    cli("init")
    source = tmp_path / "turns.jsonl"
    source.write_text('{"text": "fine"}\n{"text": "bad \\ud800"}\n', encoding="utf-8")
    _, err = cli("ingest", str(source), "--format", "jsonl", "--user", "a", code=2)
    _one_line_error(err, "turns.jsonl:2", "surrogate")
    assert cli.json("list", "--user", "a") == []


def test_an_oversized_turn_is_exit_2_and_stores_nothing(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_MAX_TURN_CHARS", "20")
    _, err = cli("remember", "x" * 21, "--user", "a", code=2)
    _one_line_error(err, "21 characters", "max_turn_chars")
    source = tmp_path / "big.jsonl"
    source.write_text('{"text": "ok"}\n{"text": "' + "y" * 30 + '"}\n', encoding="utf-8")
    _, err = cli("ingest", str(source), "--format", "jsonl", "--user", "a", code=2)
    _one_line_error(err, "big.jsonl", "turn 2")
    assert cli.json("list", "--user", "a") == []


def test_export_markdown_onto_a_file_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    cli("remember", "keep me", "--user", "a")
    target = tmp_path / "a-file.md"
    target.write_text("mine\n", encoding="utf-8")
    _, err = cli("export", "--user", "a", "--format", "markdown", "--out", str(target), code=2)
    _one_line_error(err, "a-file.md", "not a directory")
    assert target.read_text(encoding="utf-8") == "mine\n"


def test_export_jsonl_onto_a_directory_is_a_clear_error(cli: Cli, tmp_path: Path) -> None:
    cli("remember", "keep me", "--user", "a")
    _, err = cli("export", "--user", "a", "--out", str(tmp_path), code=2)
    _one_line_error(err, str(tmp_path), "is a directory")


@pytest.mark.parametrize("since", ["0001-01-01", "9999-12-31"])
def test_search_since_any_year_answers(
    cli: Cli, monkeypatch: pytest.MonkeyPatch, since: str
) -> None:
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    cli("remember", "I drink tea", "--user", "a")
    hits = cli.json("search", "tea", "--user", "a", "--since", since)
    assert isinstance(hits, list) and len(hits) == (1 if since.startswith("0001") else 0)
    hits = cli.json("search", "tea", "--user", "a", "--until", since)
    assert isinstance(hits, list) and len(hits) == (0 if since.startswith("0001") else 1)


@pytest.mark.parametrize("content", ["", "\n\n", "[]"])
def test_an_ingest_file_without_turns_is_refused(cli: Cli, tmp_path: Path, content: str) -> None:
    cli("init")
    empty = tmp_path / "empty.jsonl"
    empty.write_text(content, encoding="utf-8")
    fmt = "locomo" if content == "[]" else "jsonl"
    _, err = cli("ingest", str(empty), "--format", fmt, "--user", "a", code=2)
    _one_line_error(err, "empty.jsonl", "no turns")


@pytest.mark.parametrize("option", ["--session", "--speaker", "--surface"])
def test_oversized_turn_labels_are_refused(cli: Cli, option: str) -> None:
    _, err = cli("remember", "hi", "--user", "a", option, "s" * 10_000, code=2)
    _one_line_error(err, option.lstrip("-"))
    assert cli.json("list", "--user", "a") == []


def test_export_into_a_fifo_writes_through_it_and_leaves_it_a_fifo(
    cli: Cli, tmp_path: Path
) -> None:
    import os
    import stat
    import threading

    cli("remember", "keep me", "--user", "a")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    cli("export", "--user", "a", "--out", str(fifo))
    reader.join(timeout=30)
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert b"keep me" in received[0]


def test_remember_from_a_closed_stdin_is_a_clear_error(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    cli("init")
    monkeypatch.setattr(sys, "stdin", None)
    _, err = cli("remember", "-", "--user", "a", code=2)
    _one_line_error(err, "stdin")


def test_output_that_cannot_be_written_is_an_error(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full here")
    exe = Path(sys.executable).with_name("memstrata")
    env = {**os.environ, "MEMSTRATA_DATA_DIR": str(tmp_path / "d")}
    subprocess.run(
        [str(exe), "remember", "hello", "--user", "u"],
        env=env,
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
    )
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [str(exe), "export", "--user", "u"],
            env=env,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    assert done.returncode != 0
    assert done.stderr.startswith("error: ") and "Traceback" not in done.stderr


def test_config_option_names_the_config_file(
    data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "memstrata.toml"
    config.write_text("max_turn_chars = 10\n", encoding="utf-8")
    args = ["remember", "x" * 11, "--user", "a", "--data-dir", str(data_dir)]
    assert main(["--config", str(config), *args]) == 2
    assert "max_turn_chars 10" in capsys.readouterr().err
    assert main(args) == 0  # without it, the default limit
    missing = tmp_path / "missing.toml"
    assert main(["--config", str(missing), *args]) == 6
    _one_line_error(capsys.readouterr().err, str(missing))


@pytest.mark.parametrize(
    "command", [["identity", "edit"], ["doc", "edit", "essentials"]], ids=lambda c: c[0]
)
def test_an_editor_that_saves_non_utf8_is_a_clear_error(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    import stat

    cli("remember", "keep me", "--user", "a")
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "bad \\377 text\\n" > "$1"\n', encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    _, err = cli(*command, "--user", "a", code=2)
    _one_line_error(err, "UTF-8", "byte 4")
    assert cli.json("identity", "show", "--user", "a") == {"text": "", "version": 0}


@pytest.mark.parametrize(
    "args",
    [
        ["get", "x" * 100_000, "--user", "a"],
        ["list", "--user", "u" * 100_000],
        ["doc", "show", "k" * 100_000, "--user", "a"],
    ],
    ids=["id", "user", "doc key"],
)
def test_a_huge_bad_argument_is_not_echoed_whole(cli: Cli, args: list[str]) -> None:
    cli("init")
    _, err = cli(*args, code=2)
    _one_line_error(err)
    assert len(err) < 500


def test_an_empty_data_dir_setting_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEMSTRATA_DATA_DIR", "")
    assert main(["remember", "hi", "--user", "a"]) == 6
    _one_line_error(capsys.readouterr().err, "data_dir")
    assert not (tmp_path / "memstrata.db").exists()
