"""A fake chat model for tests: an OpenAI-compatible chat server on the loopback that answers
from a script and records what it was asked.

A supported test double, as :class:`memstrata.embed.fake.HashingEmbedder` is for embeddings:
memstrata's own tests use it, and your tests may too. Point the chat model at it
(``OpenAILLMSettings(base_url=url, model="fake")``) and script what the model says, in order
(:class:`ScriptedChat`) or per step of memstrata's curation (:class:`ByPrompt`): good answers,
malformed JSON, HTTP errors, rate limits with ``Retry-After``, answers too slow for the
client's timeout. No network, no model, the standard library only; nothing in memstrata
imports this module::

    from memstrata.llm.fake import ByPrompt, fake_openai_server, reply
    from memstrata.settings import OpenAILLMSettings, load_settings

    script = ByPrompt({"extract": [reply(facts=[])]})
    with fake_openai_server(script) as url:
        settings = load_settings(llm=OpenAILLMSettings(base_url=url, model="fake"))
        ...  # Memory.open(settings=settings) and curate
    assert script.count("extract") == 1

A scripted reply is a string (the message content), an ``int`` (an HTTP error status), a
dict (a raw response body) or a :class:`Reply` (headers, a delay, token usage).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from functools import cache
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "STEP_PROMPTS",
    "ByPrompt",
    "JsonHandler",
    "Reply",
    "ScriptedChat",
    "chat_response",
    "fake_openai_server",
    "reply",
    "serve_json",
]

#: (path, JSON body, Authorization header) -> (HTTP status, JSON payload) or
#: (HTTP status, JSON payload, response headers)
JsonHandler = Callable[[str, Any, str | None], tuple[int, object] | tuple[int, object, Any]]


@contextmanager
def serve_json(handle: JsonHandler) -> Iterator[str]:
    """A loopback server answering every POST through ``handle``; yields ``http://.../v1``
    (any JSON endpoint: a chat model's, or an embedding provider's ``/embeddings``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            answer = handle(self.path, body, self.headers.get("Authorization"))
            code, payload = answer[0], answer[1]
            headers: Mapping[str, str] = answer[2] if len(answer) > 2 else {}
            raw = json.dumps(payload).encode()
            try:
                self.send_response(code)
            except OSError:  # the client gave up waiting (a scripted timeout)
                return
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Reply:
    """A scripted answer with more to it: ``content`` (None: an error ``status``), extra
    ``headers`` (e.g. ``Retry-After``), a ``delay_s`` before answering (past the client's
    timeout: a timeout) and the ``usage`` to report (prompt and completion tokens)."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: tuple[int, int] | None = None


def reply(**payload: object) -> str:
    """A reply's content: ``payload`` as the JSON object the model answers."""
    return json.dumps(payload, ensure_ascii=False)


def chat_response(answer: Any) -> tuple[int, object, dict[str, str]]:
    """What the fake server answers for one scripted reply: a string (the message content),
    an ``int`` (an HTTP error status), a dict (a raw response body) or a :class:`Reply`
    (waited for ``delay_s`` first)."""
    if isinstance(answer, Reply):
        if answer.delay_s:
            time.sleep(answer.delay_s)
        if answer.content is None:
            return answer.status, {"error": {"message": "scripted failure"}}, answer.headers
        payload: dict[str, Any] = {
            "choices": [{"message": {"role": "assistant", "content": answer.content}}]
        }
        if answer.usage is not None:
            payload["usage"] = {
                "prompt_tokens": answer.usage[0],
                "completion_tokens": answer.usage[1],
            }
        return answer.status, payload, answer.headers
    if isinstance(answer, int):
        return answer, {"error": {"message": "scripted failure"}}, {}
    if isinstance(answer, dict):
        return 200, answer, {}
    return 200, {"choices": [{"message": {"role": "assistant", "content": answer}}]}, {}


class ScriptedChat:
    """What the fake chat server answers, in order, and what it was asked (``requests``: the
    request bodies; ``auth``: their ``Authorization`` headers). When the script is spent it
    answers ``then`` (default 500) to every request."""

    def __init__(self, replies: list[Any], *, then: Any = 500) -> None:
        self.replies = list(replies)
        self.then = then
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self._lock = threading.Lock()

    def __call__(self, path: str, body: Any, auth: str | None) -> tuple[int, object, Any]:
        with self._lock:
            self.requests.append(body)
            self.auth.append(auth)
            answer = self.replies.pop(0) if self.replies else self.then
        return chat_response(answer)


#: the steps :class:`ByPrompt` tells apart, and the prompt (``memstrata/llm/prompts``) each
#: sends as its system message
STEP_PROMPTS: Mapping[str, str] = {
    "extract": "extract",
    "consolidate": "consolidate",
    "contradict": "contradict",
    "merge_topics": "merge_topics",
    "profile": "profile",
    "audit": "audit",
    "dedup": "dedup",
    "rerank": "rerank",
    "route": "route",
    "answer": "qa_answer",
    "judge": "qa_judge",
}

#: the key of the empty list a step answers when its script has no reply left
_EMPTY_KEYS: Mapping[str, str] = {
    "extract": "facts",
    "consolidate": "bullets",
    "contradict": "contradictions",
    "merge_topics": "merges",
    "profile": "slots",
    "audit": "verdicts",
    "dedup": "same",
}


@cache
def _openings() -> tuple[tuple[str, str], ...]:
    """Each step and the first sentence of its prompt (read when first needed)."""
    from memstrata.llm.prompting import load_prompt

    return tuple((step, load_prompt(name).split(". ", 1)[0]) for step, name in STEP_PROMPTS.items())


class ByPrompt:
    """Replies per step (``extract``, ``consolidate``, ``audit`` ...: :data:`STEP_PROMPTS`),
    each step's in order, told apart by the prompt in the system message. A step with no
    reply left answers ``then`` (a scripted reply; ``None``: the step's empty answer, such as
    ``{"facts": []}``). ``fail_after``: every request after that many is answered ``failure``
    (an outage midway). ``asked`` records each request as (step, body)."""

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
        """The step a request body comes from (``unknown`` for a prompt not memstrata's)."""
        system = body["messages"][0]["content"]
        for step, opening in _openings():
            if system.startswith(opening):
                return step
        return "unknown"

    def data(self, step: str, index: int = -1) -> dict[str, Any]:
        """The JSON data the ``index``-th request of ``step`` showed the model."""
        bodies = [b for s, b in self.asked if s == step]
        content = bodies[index]["messages"][1]["content"]
        return dict(json.loads(content.removeprefix("<input>\n").removesuffix("\n</input>")))

    def count(self, step: str) -> int:
        """How many requests ``step`` made."""
        return sum(s == step for s, _ in self.asked)

    def __call__(self, path: str, body: Any, auth: str | None) -> tuple[int, object, Any]:
        step = self.step_of(body)
        with self._lock:
            self.asked.append((step, body))
            late = self.fail_after is not None and len(self.asked) > self.fail_after
            queue = self.replies.get(step, [])
            answer = self.failure if late else (queue.pop(0) if queue else self.then)
        if answer is None:
            answer = json.dumps({_EMPTY_KEYS.get(step, "x"): []})
        return chat_response(answer)


def fake_openai_server(script: JsonHandler) -> AbstractContextManager[str]:
    """Serve ``/v1/chat/completions`` with ``script``'s replies (a :class:`ScriptedChat`, a
    :class:`ByPrompt` or any :data:`JsonHandler`); a context manager yielding the base URL
    to configure (``http://127.0.0.1:PORT/v1``)."""
    return serve_json(script)
