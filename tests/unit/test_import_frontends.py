"""The CLI and the HTTP ingest route name every format and offer the dry run: what they
print and return, and that a dry run writes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memstrata import importers
from memstrata.api import Memory
from memstrata.cli import main
from memstrata.model import Fact, Scope
from memstrata.server.auth import LocalAuth
from memstrata.server.http import create_app

FOLDER = Path(__file__).resolve().parents[1] / "fixtures" / "imports"


Capture = pytest.CaptureFixture[str]


def _run(capsys: Capture, *args: str) -> tuple[int, str]:
    """Run the console entry point; its exit code and everything it printed."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out + err


def test_help_names_every_format(capsys: Capture) -> None:
    code, out = _run(capsys, "ingest", "--help")
    assert code == 0
    for name in importers.FORMATS:
        assert f"  {name} " in out, name
    assert "--dry-run" in out and "--all-branches" in out


def test_cli_dry_run_then_import(capsys: Capture, data_dir: Path) -> None:
    path = str(FOLDER / "mem0_export.json")
    common = ("--format", "mem0", "--user", "alex", "--data-dir", str(data_dir))
    code, out = _run(capsys, "ingest", path, *common, "--dry-run")
    assert code == 0, out
    assert "would import into user alex: 0 turn(s), 4 fact(s)" in out
    assert "skipped memory c0ffee00-0000-4000-8000-000000000000: empty memory" in out
    assert out.rstrip().endswith("dry run: nothing was written")
    code, out = _run(capsys, "ingest", path, *common, "--no-index", "--json")
    assert code == 0, out
    first = json.loads(out)
    assert (first["facts"], first["present"], first["dry_run"]) == (4, 0, False)
    code, out = _run(capsys, "ingest", path, *common, "--no-index", "--json")
    assert (json.loads(out)["facts"], json.loads(out)["present"]) == (0, 4)


def test_cli_refuses_options_that_do_not_apply(
    capsys: Capture, data_dir: Path, tmp_path: Path
) -> None:
    path = str(FOLDER / "claude_conversations.json")
    code, out = _run(
        capsys, "ingest", path, "--format", "claude", "--user", "u", "--all-branches",
        "--data-dir", str(data_dir),
    )  # fmt: skip
    assert code == 2 and "chatgpt format only" in out
    turns = tmp_path / "turns.jsonl"
    turns.write_text('{"text": "hello"}\n', encoding="utf-8")
    code, out = _run(
        capsys, "ingest", str(turns), "--format", "jsonl", "--user", "u", "--dry-run",
        "--data-dir", str(data_dir),
    )  # fmt: skip
    assert code == 2 and "--dry-run is offered for chatgpt, claude" in out


def test_cli_malformed_file_names_the_place(
    capsys: Capture, data_dir: Path, tmp_path: Path
) -> None:
    bad = tmp_path / "memory.json"
    bad.write_text('{"facts": [{"id": "f1", "content": 3}]}', encoding="utf-8")
    code, out = _run(
        capsys,
        "ingest",
        str(bad),
        "--format",
        "deerflow",
        "--user",
        "u",
        "--data-dir",
        str(data_dir),
    )
    assert code == 2 and "memory.json (fact f1): field 'content' should be str" in out


@pytest.fixture
def http(memory: Memory) -> Iterator[TestClient]:
    with TestClient(create_app(memory, auth=LocalAuth()), base_url="http://127.0.0.1:8765") as c:
        yield c


def test_http_ingest_takes_the_new_formats_and_a_dry_run(http: TestClient, memory: Memory) -> None:
    upload = {"file": ("memory.json", (FOLDER / "deerflow_memory.json").read_bytes())}
    form = {"format": "deerflow", "dry_run": "true"}
    r = http.post("/v1/ingest", params={"user": "li"}, data=form, files=upload)
    assert r.status_code == 201, r.text
    assert (r.json()["dry_run"], r.json()["facts"], r.json()["bullets"]) == (True, 5, 5)
    assert not memory.list(Scope("li"), "fact")
    r = http.post("/v1/ingest", params={"user": "li"}, data={"format": "deerflow"}, files=upload)
    assert (r.json()["facts"], r.json()["present"]) == (5, 0)
    assert len([f for f in memory.list(Scope("li"), "fact") if isinstance(f, Fact)]) == 5
    upload = {"file": ("c.json", (FOLDER / "chatgpt_conversations.json").read_bytes())}
    form = {"format": "chatgpt", "all_branches": "true"}
    r = http.post("/v1/ingest", params={"user": "li"}, data=form, files=upload)
    assert r.json()["turns"] == 12
    bad = {"file": ("c.json", b'[{"conversation_id": "x", "mapping": 3}]')}
    r = http.post("/v1/ingest", params={"user": "li"}, data={"format": "chatgpt"}, files=bad)
    assert r.status_code == 422 and "c.json (conversation x)" in r.json()["message"]


def test_the_integrations_doc_has_a_command_per_format() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "integrations.md").read_text("utf-8")
    section = doc.split("## Importers", 1)[1].split("\n## ", 1)[0]
    for name in importers.KEYED:
        assert f"--format {name} --user ana --dry-run" in section, name
        assert f"--format {name} --user ana\n" in section, name
