"""A fake chat model for curation tests: replies scripted per prompt (the system message says
which step is asking), served by the local OpenAI-compatible fake server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memstrata.api import Memory
from memstrata.settings import OpenAILLMSettings, load_settings
from tests.fakes import chat_response, fake_openai_server

#: the first words of each prompt in memstrata/llm/prompts
STEPS = {
    "extract": "You extract long-term memories",
    "consolidate": "You maintain one topic document",
    "contradict": "You check an assistant's long-term memory for contradictions",
    "merge_topics": "You tidy the topic documents",
    "profile": "You keep the profile",
    "audit": "You audit an assistant's long-term memory",
    "dedup": "You find repeats",
    "answer": "You answer a question",
    "judge": "You grade an answer",
}


def reply(**payload: object) -> str:
    return json.dumps(payload, ensure_ascii=False)


class ByPrompt:
    """Replies per step, in order; a step with no reply left answers ``then`` (a JSON text,
    an HTTP status or a :class:`Reply`). ``fail_after``: every request after that many is
    answered ``failure`` (an outage midway)."""

    def __init__(
        self,
        replies: dict[str, list[Any]] | None = None,
        *,
        then: Any = None,
        fail_after: int | None = None,
        failure: Any = 500,
    ) -> None:
        self.replies = {k: list(v) for k, v in (replies or {}).items()}
        self.then = then
        self.fail_after = fail_after
        self.failure = failure
        self.asked: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def step_of(self, body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        for step, opening in STEPS.items():
            if system.startswith(opening):
                return step
        return "unknown"

    def data(self, step: str, index: int = -1) -> dict[str, Any]:
        """The JSON data the ``index``-th request of ``step`` showed the model."""
        bodies = [b for s, b in self.asked if s == step]
        content = bodies[index]["messages"][1]["content"]
        return dict(json.loads(content.removeprefix("<input>\n").removesuffix("\n</input>")))

    def count(self, step: str) -> int:
        return sum(s == step for s, _ in self.asked)

    def __call__(self, path: str, body: Any, auth: str | None) -> tuple[int, object, Any]:
        step = self.step_of(body)
        with self._lock:
            self.asked.append((step, body))
            late = self.fail_after is not None and len(self.asked) > self.fail_after
            queue = self.replies.get(step, [])
            answer = self.failure if late else (queue.pop(0) if queue else self.then)
        if answer is None:
            answer = _empty(step)
        return chat_response(answer)


def _empty(step: str) -> str:
    key = {
        "extract": "facts",
        "consolidate": "bullets",
        "contradict": "contradictions",
        "merge_topics": "merges",
        "profile": "slots",
        "audit": "verdicts",
        "dedup": "same",
    }.get(step, "x")
    return json.dumps({key: []})


@contextmanager
def model_memory(
    data_dir: Path, script: ByPrompt, clock: Any = None, **llm: Any
) -> Iterator[Memory]:
    """A memory whose configured chat model is the fake server answering ``script``."""
    with fake_openai_server(script) as url:  # type: ignore[arg-type]
        settings = load_settings(
            data_dir=data_dir,
            load_sample=False,
            llm=OpenAILLMSettings(base_url=url, model="fake", **{"max_retries": 0, **llm}),
        )
        with Memory.open(settings=settings, clock=clock) as mem:
            yield mem
