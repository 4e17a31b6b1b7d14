"""Model calls measured and bounded: tokens in and out, time, a per-run token budget.

:class:`MeteredLLM` wraps any :class:`memstrata.ports.LLM`. Each call is recorded as a
:class:`Call` (the step it served, tokens in and out, seconds spent in the model, its outcome)
and told to ``on_call`` (a run turns it into an event). Tokens are the reply's ``usage`` when the
provider reports it (:meth:`memstrata.llm.openai_compat.OpenAIChat.chat`), else counted offline
(:mod:`memstrata.tokens`). Once the calls have spent ``budget`` tokens the model is not called
again: :class:`LLMBudgetError`, and the caller finishes by rules. After
:data:`MAX_FAILURES_IN_A_ROW` calls failing in a row (the model down, not a malformed reply) it
is not called again either (an outage is waited out once per run, not at every step).

:func:`ask` is how curation asks a question: a malformed reply (not JSON, or JSON its parser
refuses) is asked once more, then recorded as a failed step; any other model failure is
recorded at once. It returns None for a step the model could not do.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar, runtime_checkable

from memstrata.errors import LLMBudgetError, LLMError, LLMReplyError
from memstrata.llm.openai_compat import ChatReply, Usage, parse_json_reply
from memstrata.model import JsonValue
from memstrata.ports import LLM, ChatMessage
from memstrata.tokens import HeuristicTokenCounter, TokenCounter

T = TypeVar("T")

Outcome = Literal["ok", "malformed", "failed", "budget", "halted"]

#: calls failing in a row (unreachable, 429 or 5xx after the retries, timeouts) after which a
#: run stops calling the model: an outage is waited out once, not at every step
MAX_FAILURES_IN_A_ROW = 3


@runtime_checkable
class ChatModel(Protocol):
    """A model that also reports each reply's usage (the OpenAI-compatible adapter)."""

    def chat(self, messages: Sequence[ChatMessage], *, temperature: float = 0.0) -> ChatReply: ...


@dataclass(frozen=True, slots=True)
class Call:
    """One model call: ``counted`` when its tokens were counted offline, not reported."""

    step: str
    tokens_in: int
    tokens_out: int
    model_s: float
    outcome: Outcome
    counted: bool
    error: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "step": self.step,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
            "model_s": round(self.model_s, 4),
            "outcome": self.outcome,
            "counted": self.counted,
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass(slots=True)
class MeteredLLM:
    """:class:`memstrata.ports.LLM` that records every call and stops at ``budget`` tokens
    (None: no bound)."""

    inner: LLM
    budget: int | None = None
    counter: TokenCounter = field(default_factory=HeuristicTokenCounter)
    on_call: Callable[[Call], object] | None = None
    clock: Callable[[], float] = time.monotonic
    calls: list[Call] = field(default_factory=list)
    step_name: str = "model"
    max_failures: int = MAX_FAILURES_IN_A_ROW

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def spent(self) -> int:
        return sum(c.tokens_in + c.tokens_out for c in self.calls)

    @property
    def exhausted(self) -> bool:
        return self.budget is not None and self.spent >= self.budget

    @property
    def halted(self) -> bool:
        """Whether the last ``max_failures`` calls all failed: the model is down."""
        tail = [c for c in self.calls if c.outcome not in ("budget", "halted")][
            -self.max_failures :
        ]
        return len(tail) == self.max_failures and all(c.outcome == "failed" for c in tail)

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Calls made inside are recorded under step ``name``."""
        outer, self.step_name = self.step_name, name
        try:
            yield
        finally:
            self.step_name = outer

    def _record(self, call: Call) -> None:
        self.calls.append(call)
        if self.on_call is not None:
            self.on_call(call)

    def complete_json(
        self, messages: Sequence[ChatMessage], *, temperature: float = 0.0
    ) -> dict[str, JsonValue]:
        if self.exhausted:
            if not any(c.outcome == "budget" for c in self.calls):
                self._record(Call(self.step_name, 0, 0, 0.0, "budget", True))
            raise LLMBudgetError(f"the run's token budget ({self.budget}) is spent")
        if self.halted:
            if self.calls[-1].outcome != "halted":
                self._record(Call(self.step_name, 0, 0, 0.0, "halted", True))
            raise LLMError(
                f"the model failed {self.max_failures} times in a row: not called again in this run"
            )
        tokens_in = sum(self.counter.count(m["content"]) for m in messages)
        start = self.clock()
        text, usage = "", None
        try:
            if isinstance(self.inner, ChatModel):
                reply = self.inner.chat(messages, temperature=temperature)
                text = reply.text if isinstance(reply.text, str) else ""
                usage = reply.usage
                content = parse_json_reply(reply.text)
            else:
                content = self.inner.complete_json(messages, temperature=temperature)
                text = json.dumps(content, ensure_ascii=False)
        except LLMReplyError as exc:
            self._done(start, tokens_in, text, usage, "malformed", exc)
            raise
        except LLMError as exc:
            self._done(start, tokens_in, "", None, "failed", exc)
            raise
        self._done(start, tokens_in, text, usage, "ok", None)
        return content

    def _done(
        self,
        start: float,
        tokens_in: int,
        text: str,
        usage: Usage | None,
        outcome: Outcome,
        exc: Exception | None,
    ) -> None:
        elapsed = max(0.0, self.clock() - start)
        if usage is not None:
            call = Call(self.step_name, usage.tokens_in, usage.tokens_out, elapsed, outcome, False)
        else:
            out = self.counter.count(text) if text else 0
            call = Call(self.step_name, tokens_in, out, elapsed, outcome, True)
        if exc is not None:
            call = Call(
                call.step,
                call.tokens_in,
                call.tokens_out,
                call.model_s,
                outcome,
                call.counted,
                f"{type(exc).__name__}: {exc}"[:300],
            )
        self._record(call)

    def totals(self) -> dict[str, JsonValue]:
        """The calls so far, summed: for a run's report."""
        return {
            "calls": len([c for c in self.calls if c.outcome not in ("budget", "halted")]),
            "tokens_in": sum(c.tokens_in for c in self.calls),
            "tokens_out": sum(c.tokens_out for c in self.calls),
            "model_s": round(sum(c.model_s for c in self.calls), 4),
            "failed": len([c for c in self.calls if c.outcome in ("malformed", "failed")]),
            "halted": self.halted,
            "budget": self.budget,
            "budget_spent": self.exhausted,
        }


def ask(
    llm: LLM,
    messages: Sequence[ChatMessage],
    parse: Callable[[dict[str, JsonValue]], T],
    *,
    failures: list[str],
    where: str,
) -> T | None:
    """``parse(reply)`` of the model's reply to ``messages``; a malformed reply (not JSON, or
    ``parse`` raising :class:`LLMReplyError`) is asked once more; a step the model could not
    do is appended to ``failures`` (``where``: what it was) and None returned."""
    for attempt in (1, 2):
        try:
            return parse(llm.complete_json(messages))
        except LLMReplyError as exc:
            if attempt == 2:
                failures.append(f"{where}: malformed reply twice ({exc})")
        except LLMError as exc:
            failures.append(f"{where}: {exc}")
            return None
    return None
