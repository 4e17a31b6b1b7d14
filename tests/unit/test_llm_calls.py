"""Robust model calls against a local fake server: retries of 429 and 5xx (Retry-After
honoured), timeouts, malformed replies, tokens and time per call, a run's token budget."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from memstrata.api import Memory
from memstrata.curate.extract_llm import LLMExtractor
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.errors import LLMBudgetError, LLMReplyError, LLMTimeoutError, LLMUnavailableError
from memstrata.httpjson import retry_after_seconds
from memstrata.llm.fake import Reply, ScriptedChat, fake_openai_server
from memstrata.llm.metered import Call, MeteredLLM, ask
from memstrata.llm.openai_compat import OpenAIChat
from memstrata.model import Scope
from memstrata.retry import RETRY_AFTER_CAP_S
from memstrata.settings import OpenAILLMSettings, load_settings

ASK = [{"role": "user", "content": "answer in JSON"}]


def test_429_waits_as_long_as_retry_after_says(backoff_waits: list[float]) -> None:
    script = ScriptedChat([Reply(status=429, headers={"Retry-After": "7"}), '{"ok": 1}'])
    with fake_openai_server(script) as url:
        assert OpenAIChat(base_url=url, model="m").complete_json(ASK) == {"ok": 1}
    assert backoff_waits == [7.0] and len(script.requests) == 2


def test_5xx_is_retried_with_growing_backoff_then_raised(backoff_waits: list[float]) -> None:
    script = ScriptedChat([500, 502, 503, 504, '{"late": true}'])
    with (
        fake_openai_server(script) as url,
        pytest.raises(LLMUnavailableError, match="answered 504") as caught,
    ):
        OpenAIChat(base_url=url, model="m", max_retries=3).complete_json(ASK)
    assert caught.value.status == 504 and len(script.requests) == 4
    assert len(backoff_waits) == 3
    assert 0.5 <= backoff_waits[0] <= 1.0 and 1.0 <= backoff_waits[1] <= 2.0
    assert 2.0 <= backoff_waits[2] <= 4.0  # doubling, jittered between half and all


def test_a_retry_after_past_the_cap_is_not_waited_for(backoff_waits: list[float]) -> None:
    far = str(int(RETRY_AFTER_CAP_S) + 1)
    script = ScriptedChat([Reply(status=429, headers={"Retry-After": far}), '{"ok": 1}'])
    with fake_openai_server(script) as url, pytest.raises(LLMUnavailableError, match="429"):
        OpenAIChat(base_url=url, model="m").complete_json(ASK)
    assert backoff_waits == [] and len(script.requests) == 1


def test_client_errors_are_not_retried(backoff_waits: list[float]) -> None:
    script = ScriptedChat([400, '{"ok": 1}'])
    with fake_openai_server(script) as url, pytest.raises(Exception, match="answered 400") as e:
        OpenAIChat(base_url=url, model="m").complete_json(ASK)
    assert not isinstance(e.value, LLMUnavailableError) and len(script.requests) == 1


def test_a_timeout_is_an_llm_error_and_not_retried(backoff_waits: list[float]) -> None:
    script = ScriptedChat([Reply('{"slow": 1}', delay_s=1.5), '{"ok": 1}'])
    with fake_openai_server(script) as url, pytest.raises(LLMTimeoutError, match="within"):
        OpenAIChat(base_url=url, model="m", timeout_s=0.2).complete_json(ASK)
    assert backoff_waits == [] and len(script.requests) == 1


def test_retry_after_as_seconds_or_http_date() -> None:
    now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
    assert retry_after_seconds("3", now=now) == 3.0
    assert retry_after_seconds("Mon, 30 Nov 2026 12:00:09 GMT", now=now) == 9.0
    assert retry_after_seconds("Mon, 30 Nov 2026 11:00:00 GMT", now=now) == 0.0
    assert retry_after_seconds("soon", now=now) is None and retry_after_seconds(None) is None


def test_tokens_from_usage_else_counted_offline() -> None:
    told: list[Call] = []
    ticks = iter([10.0, 10.5, 20.0, 20.25])
    script = ScriptedChat([Reply('{"a": 1}', usage=(120, 8)), '{"b": "一个很长的回答"}'])
    with fake_openai_server(script) as url:
        metered = MeteredLLM(
            OpenAIChat(base_url=url, model="m"), on_call=told.append, clock=lambda: next(ticks)
        )
        with metered.step("topic:work"):
            metered.complete_json(ASK)
        metered.complete_json(ASK)
    first, second = metered.calls
    assert (first.step, first.tokens_in, first.tokens_out, first.counted) == (
        "topic:work",
        120,
        8,
        False,
    )
    assert first.model_s == 0.5 and second.model_s == 0.25
    assert second.step == "model" and second.counted and second.tokens_in > 0
    assert second.tokens_out > 0 and told == metered.calls
    totals = metered.totals()
    assert totals["calls"] == 2 and totals["tokens_in"] == 120 + second.tokens_in


def test_malformed_reply_is_asked_again_once_then_recorded() -> None:
    script = ScriptedChat(["not json", '{"answer": 2}', "again not", "[1]"])
    failures: list[str] = []
    with fake_openai_server(script) as url:
        metered = MeteredLLM(OpenAIChat(base_url=url, model="m"))
        first = ask(metered, ASK, lambda r: r["answer"], failures=failures, where="one")
        second = ask(metered, ASK, lambda r: r["answer"], failures=failures, where="two")
    assert first == 2 and second is None
    assert failures == [failures[0]] and failures[0].startswith("two: malformed reply twice")
    assert [c.outcome for c in metered.calls] == ["malformed", "ok", "malformed", "malformed"]
    assert metered.totals()["failed"] == 3


def test_a_reply_its_parser_refuses_counts_as_malformed() -> None:
    def parse(reply: dict[str, object]) -> int:
        n = reply.get("n")
        if not isinstance(n, int):
            raise LLMReplyError("no n")
        return n

    failures: list[str] = []
    with fake_openai_server(ScriptedChat(['{"m": 1}', '{"n": 4}'])) as url:
        assert ask(OpenAIChat(base_url=url, model="m"), ASK, parse, failures=failures, where="x")
    assert failures == []


def test_the_budget_stops_calls_before_they_are_made() -> None:
    script = ScriptedChat([Reply('{"a": 1}', usage=(40, 20)), '{"b": 2}'])
    with fake_openai_server(script) as url:
        metered = MeteredLLM(OpenAIChat(base_url=url, model="m"), budget=50)
        metered.complete_json(ASK)
        for _ in range(2):
            with pytest.raises(LLMBudgetError, match="budget"):
                metered.complete_json(ASK)
    assert len(script.requests) == 1 and metered.exhausted
    assert [c.outcome for c in metered.calls] == ["ok", "budget"]


def test_extraction_falls_back_to_rules_for_what_the_model_could_not_do() -> None:
    from tests.unit.test_llm import _episode

    eps = [_episode("I love green tea and I live in Hangzhou.")]
    with fake_openai_server(ScriptedChat([503], then=503)) as url:
        model = OpenAIChat(base_url=url, model="m", max_retries=1)
        result = LLMExtractor(model, fallback=RuleExtractor()).extract(eps)
    assert result.candidates and all(c.rule != "llm" for c in result.candidates)
    assert any("extracted by rules" in f for f in result.failures)


def test_run_events_carry_tokens_and_model_time_per_step(data_dir: object) -> None:
    scope = Scope("u")
    reply = json.dumps(
        {
            "facts": [
                {
                    "text": "The user lives in Hangzhou",
                    "category": "personal",
                    "confidence": 0.95,
                    "topic": "home",
                    "cites": [1],
                }
            ]
        }
    )
    script = ScriptedChat([Reply(reply, usage=(300, 25))], then='{"bullets": []}')
    with fake_openai_server(script) as url:
        settings = load_settings(
            data_dir=data_dir,
            load_sample=False,
            llm=OpenAILLMSettings(base_url=url, model="m", max_retries=0),
        )
        with Memory.open(settings=settings) as mem:
            mem.remember(["I live in Hangzhou."], scope)
            run = mem.start_run(scope, "extract")
            _wait(mem, run.id)
            events = [e for e in mem.runs.replay(run_id=run.id).events if e.kind == "model"]
    assert events and events[0].data["step"] == "extract"
    assert events[0].data["tokens_in"] == 300 and events[0].data["tokens_out"] == 25
    assert isinstance(events[0].data["model_s"], float)
    assert run.result is not None
    model = run.result["model"]
    assert isinstance(model, dict) and model["tokens_in"] == 300


def _wait(mem: Memory, run_id: str) -> None:
    import time

    for _ in range(600):
        if mem.runs.get(run_id).finished_at is not None:
            return
        time.sleep(0.02)
    raise AssertionError("the run did not finish")


def test_after_three_failures_in_a_row_the_model_is_not_called_again() -> None:
    script = ScriptedChat(["not json", 503, 503, 503, '{"ok": 1}'])
    failures: list[str] = []
    with fake_openai_server(script) as url:
        metered = MeteredLLM(OpenAIChat(base_url=url, model="m", max_retries=0))
        for _ in range(5):
            ask(metered, ASK, lambda r: r, failures=failures, where="step")
    outcomes = [c.outcome for c in metered.calls]
    assert outcomes == ["malformed", "failed", "failed", "failed", "halted"]
    assert len(script.requests) == 4 and metered.totals()["halted"] is True
    assert "not called again" in failures[-1] and len(failures) == 5
