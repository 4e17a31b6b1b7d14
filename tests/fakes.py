"""Fakes that ship with the tests: a local OpenAI-compatible chat server with scripted replies."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedChat:
    """What the fake server answers, in order, and what it was asked."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []


@contextmanager
def fake_openai_server(script: ScriptedChat) -> Iterator[str]:
    """Serve ``/v1/chat/completions`` on loopback; yields the base URL.

    Each scripted reply is a string (the message content), an ``int`` (an HTTP error status)
    or a dict (a raw response body)."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            script.requests.append(body)
            script.auth.append(self.headers.get("Authorization"))
            reply = script.replies.pop(0) if script.replies else 500
            if isinstance(reply, int):
                self._send(reply, {"error": {"message": "scripted failure"}})
            elif isinstance(reply, dict):
                self._send(200, reply)
            else:
                self._send(200, {"choices": [{"message": {"role": "assistant", "content": reply}}]})

        def _send(self, code: int, payload: object) -> None:
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
