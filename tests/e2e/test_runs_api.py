"""Curation runs over HTTP as an operator sees them: the automatic curation of a quiet thread
is in the runs list beside the runs callers asked for, each says what started it
(``trigger``), a failed one says why, and a report says what the chat model could not do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx2
import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.llm.fake import ByPrompt, fake_openai_server
from memstrata.settings import OpenAILLMSettings, load_settings
from tests.conftest import FixedClock
from tests.e2e.live import live_server
from tests.e2e.test_server_api import wait_run
from tests.keyed import key_headers, keyed_app

ALICE = {"user": "alice"}
T1 = {"user": "alice", "thread": "t1"}


def _remember(http: httpx2.Client, text: str, scope: dict[str, str]) -> None:
    turns = [{"text": text, "speaker": "Alice"}]
    assert http.post("/v1/remember", json={"scope": scope, "turns": turns}).status_code == 201


def _runs(http: httpx2.Client, **scope: str) -> list[dict[str, Any]]:
    page = http.get("/v1/runs", params=scope or ALICE)
    assert page.status_code == 200, page.text
    return list(page.json()["items"])


def test_automatic_runs_are_listed_with_their_trigger_and_a_failure_with_its_error(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(data_dir=data_dir, load_sample=False)
    with (
        Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as mem,
        live_server(keyed_app(mem), key_headers(mem)) as http,
    ):
        queue = mem.start_auto_curation(delay_s=30)
        queue.stop()  # driven by hand with the fixed clock
        _remember(http, "I really love hiking in the mountains.", T1)
        clock.advance(seconds=31)
        assert queue.run_due()
        asked = http.post("/v1/runs", json={"scope": ALICE, "kind": "extract"}).json()
        wait_run(http, asked["id"])
        runs = _runs(http)
        assert [(r["scope"], r["trigger"], r["state"]) for r in runs] == [
            (T1, "auto", "done"),
            (ALICE, "auto", "done"),
            (ALICE, "request", "done"),
        ]
        assert runs[0]["result"]["extraction"]["stored"] and runs[1]["result"]["consolidation"]
        assert [r["trigger"] for r in _runs(http, **T1)] == ["auto"]  # the thread's own
        docs = http.get("/v1/list", params={**ALICE, "kind": "document"}).json()["items"]
        assert docs and {tuple(d["scope"].items()) for d in docs} == {(("user", "alice"),)}

        def broken(*_: Any, **__: Any) -> Any:
            raise RuntimeError("disk on fire")

        monkeypatch.setattr(mem, "consolidate", broken)
        _remember(http, "I work at Alibaba as an engineer.", T1)
        clock.advance(seconds=31)
        assert queue.run_due() == [] and queue.failures == 1
        last = _runs(http)[-1]
        assert (last["trigger"], last["state"], last["error"]) == (
            "auto",
            "failed",
            "RuntimeError: disk on fire",
        )


def test_a_run_report_says_the_model_failed_and_rules_did_the_work(
    data_dir: Path, clock: FixedClock
) -> None:
    script = ByPrompt(fail_after=0)  # the model answers 500 to everything
    with fake_openai_server(script) as url:  # type: ignore[arg-type]
        settings = load_settings(
            data_dir=data_dir,
            load_sample=False,
            llm=OpenAILLMSettings(base_url=url, model="fake", max_retries=0),
        )
        with (
            Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as mem,
            live_server(keyed_app(mem), key_headers(mem)) as http,
        ):
            _remember(http, "I work at Alibaba as an engineer.", ALICE)
            run = http.post("/v1/runs", json={"scope": ALICE, "kind": "consolidate"}).json()
            done = wait_run(http, run["id"])
    assert done["state"] == "done" and done["trigger"] == "request"
    fallback = done["result"]["fallback"]
    assert fallback["steps"][0] == "extract" and len(fallback["steps"]) > 1  # and consolidation
    assert "500" in fallback["error"] and fallback["done_by"] == "rules"
    assert done["result"]["extraction"]["stored"]  # the rules extracted the fact
