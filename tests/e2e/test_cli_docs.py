"""CLI for curated documents and identity: doc show|diff|apply|edit, identity show|edit,
export --format markdown and import."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.e2e.cli import Cli


def _editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\n" + script + "\n")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)


def _seed(cli: Cli, tmp_path: Path) -> str:
    [ep] = cli.json("remember", "I love green tea", "--user", "alice")  # type: ignore[misc]
    ops = tmp_path / "ops.json"
    ops.write_text(
        json.dumps(
            [
                {
                    "op": "add",
                    "section": "Preferences",
                    "text": "Likes green tea",
                    "citations": [f"chat:{ep['id']}"],
                }
            ]
        )
    )
    cli("doc", "apply", "essentials", str(ops), "--user", "alice", "--version", "0")
    return str(ep["id"])


def test_show_diff_apply(cli: Cli, tmp_path: Path) -> None:
    ep = _seed(cli, tmp_path)
    shown = cli.json("doc", "show", "essentials", "--user", "alice")
    assert isinstance(shown, dict) and shown["version"] == 1
    assert f"[^1]: chat:{ep}" in shown["markdown"]
    edited = tmp_path / "edited.md"
    edited.write_text(
        shown["markdown"].replace("Likes green tea", "Likes oolong 乌龙茶"), encoding="utf-8"
    )
    preview = cli.json("doc", "diff", "essentials", str(edited), "--user", "alice")
    assert isinstance(preview, dict) and [o["op"] for o in preview["operations"]] == ["edit"]
    assert cli.json("doc", "show", "essentials", "--user", "alice")["version"] == 1  # type: ignore[index]
    _, err = cli(
        "doc", "apply", "essentials", str(edited), "--user", "alice", "--version", "0", code=4
    )
    assert err.startswith("error: ") and "changed since version 0" in err
    out, _ = cli("doc", "apply", "essentials", str(edited), "--user", "alice", "--version", "1")
    assert "version 2" in out
    out, _ = cli("doc", "show", "essentials", "--user", "alice")
    assert "Likes oolong 乌龙茶" in out


def test_bad_inputs_are_one_line_errors(cli: Cli, tmp_path: Path) -> None:
    _seed(cli, tmp_path)
    bad = tmp_path / "bad.md"
    bad.write_text("# Essentials\n\n## Preferences\n- orphan [^9]\n")
    _, err = cli("doc", "diff", "essentials", str(bad), "--user", "alice", code=2)
    assert "line 4" in err and err.count("\n") == 1
    ops = tmp_path / "ops.json"
    ops.write_text('[{"op": "delete", "id": "m_01AAAAAAAAAAAAAAAAAAAAAAAA", "reason": "stale"}]')
    _, err = cli(
        "doc", "apply", "essentials", str(ops), "--user", "alice", "--version", "1", code=2
    )
    assert "no bullet" in err
    _, err = cli("doc", "show", "../etc", "--user", "alice", code=2)
    assert "document key" in err


def test_edit_in_the_editor(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _seed(cli, tmp_path)
    _editor(tmp_path, monkeypatch, "sed -i 's/Likes green tea/Likes jasmine tea/' \"$1\"")
    out, _ = cli("doc", "edit", "essentials", "--user", "alice", "--yes")
    assert "applied" in out and "jasmine" in out
    shown = cli.json("doc", "show", "essentials", "--user", "alice")
    assert isinstance(shown, dict) and "Likes jasmine tea" in shown["markdown"]


def test_identity_show_and_edit(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "identity.md"
    source.write_text("I help Alice, a backend engineer.\n我用中文和英文回答。\n", encoding="utf-8")
    out, _ = cli("identity", "edit", "--user", "alice", "--file", str(source))
    assert "version 1" in out
    shown = cli.json("identity", "show", "--user", "alice")
    assert shown == {
        "text": "I help Alice, a backend engineer.\n我用中文和英文回答。",
        "version": 1,
    }
    _editor(tmp_path, monkeypatch, "printf 'A new identity\\n' > \"$1\"")
    out, _ = cli("identity", "edit", "--user", "alice")
    assert "version 2" in out
    out, _ = cli("identity", "show", "--user", "alice")
    assert out == "A new identity\n"


def test_export_markdown_and_import(
    cli: Cli, tmp_path: Path, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _seed(cli, tmp_path)
    out_dir = tmp_path / "exported"
    cli("export", "--user", "alice", "--format", "markdown", "--out", str(out_dir))
    assert (out_dir / "essentials.md").read_text(encoding="utf-8").startswith("# Essentials")
    _, err = cli("export", "--user", "alice", "--format", "markdown", "--out", str(out_dir), code=2)
    assert "not empty" in err
    other = Cli(tmp_path / "other-store", capsys)
    result = other.json("import", str(out_dir))
    assert isinstance(result, dict) and result["stats"]["episodes"] == 1
    shown = other.json("doc", "show", "essentials", "--user", "alice")
    assert (
        isinstance(shown, dict) and shown["version"] == 1 and "Likes green tea" in shown["markdown"]
    )


def test_export_destination_as_an_argument(cli: Cli, tmp_path: Path) -> None:
    _seed(cli, tmp_path)
    cli("export", str(tmp_path / "as-arg"), "--user", "alice", "--format", "markdown")
    assert (tmp_path / "as-arg" / "manifest.json").exists()
    _, err = cli(
        "export",
        str(tmp_path / "x"),
        "--user",
        "alice",
        "--format",
        "markdown",
        "--out",
        str(tmp_path / "y"),
        code=2,
    )
    assert "destination once" in err


def test_consolidate_command(cli: Cli) -> None:
    cli(
        "remember",
        "I really love hiking in the mountains.",
        "--user",
        "alice",
        "--speaker",
        "Alice",
    )
    result = cli.json("consolidate", "--user", "alice")
    assert isinstance(result, dict) and result["extracted"] == 1
    assert result["bullets_added"] == 2 and set(result["documents"]) == {
        "preferences",
        "essentials",
    }
    shown = cli.json("doc", "show", "preferences", "--user", "alice")
    assert isinstance(shown, dict) and "Alice really loves hiking" in shown["markdown"]
    again = cli.json("consolidate", "--user", "alice")
    assert again == {**again, "extracted": 0, "bullets_added": 0}


def test_consolidate_follow_and_modes(cli: Cli) -> None:
    cli(
        "remember",
        "I really love hiking in the mountains.",
        "--user",
        "alice",
        "--speaker",
        "Alice",
    )
    _, err = cli("consolidate", "--user", "alice", "--follow")
    assert "started" in err and "applied" in err and "done" in err
    audit = cli.json("consolidate", "--user", "alice", "--mode", "audit")
    assert isinstance(audit, dict) and audit["findings"] == []
    dedup = cli.json("consolidate", "--user", "alice", "--mode", "dedup")
    assert isinstance(dedup, dict) and dedup["bullets_merged"] == 0


def test_consolidate_names_the_user_per_run(cli: Cli) -> None:
    for text, who in [("I'm from Sweden.", "Caroline"), ("My husband cooks.", "Melanie")]:
        cli("remember", text, "--user", "alice", "--speaker", who)
    cli("consolidate", "--user", "alice", "--user-speaker", "Melanie")
    woke = cli.json("wake-up", "--user", "alice")
    assert isinstance(woke, dict)
    text = str(woke["text"])
    assert "- name: Melanie" in text and "- partner: husband" in text
    assert "People: Caroline" in text
