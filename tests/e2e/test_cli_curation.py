"""The CLI's curation as a person at a terminal sees it: a configured chat model that cannot
be reached is said in plain text on stderr (the work was done by rules: exit 0)."""

from __future__ import annotations

import json
import re
import socket

import pytest

from tests.e2e.cli import Cli


def _unreachable(monkeypatch: pytest.MonkeyPatch) -> str:
    """A configured chat model at a port where nothing listens."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    monkeypatch.setenv("MEMSTRATA_LLM__BASE_URL", url)
    monkeypatch.setenv("MEMSTRATA_LLM__MODEL", "qwen2.5")
    monkeypatch.setenv("MEMSTRATA_LLM__MAX_RETRIES", "0")
    return url


def _extracted(out: str) -> int:
    """How many facts the one-line report of ``memstrata consolidate`` says were extracted."""
    found = re.match(r"update: extracted (\d+) fact\(s\);", out)
    assert found is not None, out
    return int(found[1])


def test_an_unreachable_model_is_said_on_stderr_and_rules_do_the_work(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = _unreachable(monkeypatch)
    cli("remember", "I work at Alibaba as an engineer.", "--user", "alice", "--speaker", "Alice")
    out, err = cli("consolidate", "--user", "alice")
    assert _extracted(out) >= 1  # by the rules: the job and the employer
    [warning] = err.splitlines()
    assert warning.startswith("warning: the chat model failed at extract, ")
    assert f"cannot reach {url}" in warning and warning.endswith("rules did that work instead")
    cli("remember", "I love Longjing tea.", "--user", "alice", "--speaker", "Alice")
    out, err = cli("consolidate", "--user", "alice", "--json")
    assert "rules did that work instead" in err
    result = json.loads(out)
    assert result["extracted"] == 1 and result["run"]["trigger"] == "request"
    assert result["fallback"]["steps"][0] == "extract"
    assert result["fallback"]["done_by"] == "rules" and url in result["fallback"]["error"]


def test_without_a_model_or_with_no_llm_nothing_is_said(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("remember", "I work at Alibaba as an engineer.", "--user", "alice", "--speaker", "Alice")
    out, err = cli("consolidate", "--user", "alice")
    assert _extracted(out) >= 1 and err == ""
    _unreachable(monkeypatch)
    cli("remember", "I love Longjing tea.", "--user", "alice", "--speaker", "Alice")
    out, err = cli("consolidate", "--user", "alice", "--no-llm")
    assert _extracted(out) == 1 and err == ""


def test_a_thread_s_documents_are_listed_apart_from_the_user_s(cli: Cli) -> None:
    """A consolidation asked for on a thread (or one the automatic curation of an older
    version wrote) makes the thread's own documents: the listing says whose each is."""
    for thread in ("t1", ""):
        where = ["--thread", thread] if thread else []
        cli("remember", "I love Longjing tea.", "--user", "alice", *where, "--speaker", "Alice")
        cli("consolidate", "--user", "alice", *where)
    out, _ = cli("list", "--user", "alice", "--kind", "document", "--limit", "100")
    heads = [line for line in out.splitlines() if line.startswith("doc_")]
    essentials = [line for line in heads if " essentials/essentials " in line]
    assert sorted(line.rsplit("  ", 1)[1] for line in essentials) == [
        "(user=alice thread=t1)",
        "(user=alice)",
    ]
    listed = cli.json("list", "--user", "alice", "--kind", "document", "--limit", "100")
    assert isinstance(listed, list)
    assert {(d["doc_kind"], d["scope"].get("thread")) for d in listed} >= {
        ("essentials", "t1"),
        ("essentials", None),
    }


def test_an_audit_with_an_unreachable_model_says_so_on_stderr(
    cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli("remember", "I work at Alibaba as an engineer.", "--user", "alice", "--speaker", "Alice")
    cli("consolidate", "--user", "alice")
    url = _unreachable(monkeypatch)
    out, err = cli("audit", "list", "--user", "alice")
    assert out == "no flags\n"
    [warning] = err.splitlines()
    assert warning.startswith("warning: audit of user=alice: the chat model failed at audit")
    assert url in warning and warning.endswith("rules did that work instead")
    _, quiet = cli("audit", "list", "--user", "alice", "--no-llm")
    assert quiet == ""
