"""Fakes that ship with the tests: local JSON HTTP servers, e.g. an OpenAI-compatible chat
endpoint with scripted replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: (path, JSON body, Authorization header) -> (HTTP status, JSON payload)
JsonHandler = Callable[[str, Any, str | None], tuple[int, object]]


@contextmanager
def serve_json(handle: JsonHandler) -> Iterator[str]:
    """A loopback server answering every POST through ``handle``; yields ``http://.../v1``."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            code, payload = handle(self.path, body, self.headers.get("Authorization"))
            raw = json.dumps(payload).encode()
            self.send_response(code)
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


class ScriptedChat:
    """What the fake chat server answers, in order, and what it was asked.

    Each scripted reply is a string (the message content), an ``int`` (an HTTP error status)
    or a dict (a raw response body)."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []

    def __call__(self, path: str, body: Any, auth: str | None) -> tuple[int, object]:
        self.requests.append(body)
        self.auth.append(auth)
        reply = self.replies.pop(0) if self.replies else 500
        if isinstance(reply, int):
            return reply, {"error": {"message": "scripted failure"}}
        if isinstance(reply, dict):
            return 200, reply
        return 200, {"choices": [{"message": {"role": "assistant", "content": reply}}]}


def fake_openai_server(script: ScriptedChat) -> Any:
    """Serve ``/v1/chat/completions`` with ``script``'s replies; a context manager."""
    return serve_json(script)
