"""Fakes that ship with the tests: local JSON HTTP servers, e.g. an OpenAI-compatible chat
endpoint with scripted replies."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: (path, JSON body, Authorization header) -> (HTTP status, JSON payload) or
#: (HTTP status, JSON payload, response headers)
JsonHandler = Callable[[str, Any, str | None], tuple[int, object] | tuple[int, object, Any]]


@contextmanager
def serve_json(handle: JsonHandler) -> Iterator[str]:
    """A loopback server answering every POST through ``handle``; yields ``http://.../v1``."""

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
    timeout: a timeout) and the ``usage`` to report."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    usage: tuple[int, int] | None = None


class ScriptedChat:
    """What the fake chat server answers, in order, and what it was asked.

    Each scripted reply is a string (the message content), an ``int`` (an HTTP error status),
    a dict (a raw response body) or a :class:`Reply`; when the script is spent it answers
    ``then`` (default 500) to every request."""

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
            reply = self.replies.pop(0) if self.replies else self.then
        return chat_response(reply)


def chat_response(reply: Any) -> tuple[int, object, dict[str, str]]:
    """What the fake server answers for one scripted reply: a string (the message content),
    an ``int`` (an HTTP error status), a dict (a raw response body) or a :class:`Reply`
    (waited for ``delay_s`` first)."""
    if isinstance(reply, Reply):
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.content is None:
            return reply.status, {"error": {"message": "scripted failure"}}, reply.headers
        payload: dict[str, Any] = {
            "choices": [{"message": {"role": "assistant", "content": reply.content}}]
        }
        if reply.usage is not None:
            payload["usage"] = {
                "prompt_tokens": reply.usage[0],
                "completion_tokens": reply.usage[1],
            }
        return reply.status, payload, reply.headers
    if isinstance(reply, int):
        return reply, {"error": {"message": "scripted failure"}}, {}
    if isinstance(reply, dict):
        return 200, reply, {}
    return 200, {"choices": [{"message": {"role": "assistant", "content": reply}}]}, {}


def fake_openai_server(script: ScriptedChat) -> Any:
    """Serve ``/v1/chat/completions`` with ``script``'s replies; a context manager."""
    return serve_json(script)
