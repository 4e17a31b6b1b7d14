"""The memory proxy in process: its app over a memory, behind API keys as ``memstrata proxy``
serves it, with a scripted OpenAI-compatible upstream in place of the network (an httpx2
``MockTransport``) that records every request that reached it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
from fastapi import FastAPI
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.model import EpisodeFilter, Scope
from memstrata.server.auth import KeyAuth
from memstrata.server.proxy import SURFACE, create_proxy_app
from memstrata.settings import ProxySettings
from tests.keyed import key_headers

#: the upstream's base URL as the proxy is configured with it (never resolved: no network)
UPSTREAM_URL = "http://upstream.invalid/v1"


def completion(text: str) -> bytes:
    """An OpenAI-compatible chat completion answering ``text``, as the upstream sends it."""
    body = {
        "id": "c1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }
    return json.dumps(body, ensure_ascii=False).encode()


class _Chunks(httpx2.AsyncByteStream):
    """A body sent in pieces, as a server streams it (a body given whole is read at once and
    could not be relayed as it arrives)."""

    def __init__(self, content: bytes, size: int = 7) -> None:
        self.content = content
        self.size = size

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.content), self.size):
            yield self.content[start : start + self.size]


def events(*deltas: str) -> bytes:
    """The server-sent events an OpenAI-compatible server streams for an answer made of
    ``deltas``."""
    chunks = [{"index": 0, "delta": {"role": "assistant", "content": ""}}]
    chunks += [{"index": 0, "delta": {"content": word}} for word in deltas]
    chunks.append({"index": 0, "delta": {}, "finish_reason": "stop"})
    lines = [
        "data: " + json.dumps({"object": "chat.completion.chunk", "choices": [c]}) + "\n\n"
        for c in chunks
    ]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


@dataclass
class ScriptedUpstream:
    """An upstream answering every chat completion with ``answer`` (a JSON completion, or
    for ``"stream": true`` the same words as server-sent events, in two deltas); the bodies
    it was sent are in ``requests``, parsed, and as sent in ``raw``."""

    answer: bytes = field(default_factory=lambda: completion("Noted."))
    streamed: bytes = field(default_factory=lambda: events("Noted", "."))
    requests: list[Any] = field(default_factory=list)
    raw: list[bytes] = field(default_factory=list)

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.path.endswith("/models"):
            return httpx2.Response(200, content=b'{"object":"list","data":[]}')
        body = json.loads(request.content)
        self.raw.append(request.content)
        self.requests.append(body)
        if isinstance(body, dict) and body.get("stream") is True:
            return httpx2.Response(
                200, stream=_Chunks(self.streamed), headers={"content-type": "text/event-stream"}
            )
        return httpx2.Response(
            200, stream=_Chunks(self.answer), headers={"content-type": "application/json"}
        )

    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)


@contextmanager
def proxy_client(
    memory: Memory,
    upstream: ScriptedUpstream,
    *,
    role: str = "writer",
    users: Sequence[str] | None = None,
    max_request_bytes: int | None = None,
    **config: Any,
) -> Iterator[tuple[TestClient, FastAPI]]:
    """A client of the proxy over ``memory`` (its lifespan run: exchanges in hand are stored
    when it stops), sending a new key with ``role`` for ``users`` (None: all users)."""
    app = create_proxy_app(
        memory,
        auth=KeyAuth(memory.keys),
        config=ProxySettings(upstream=UPSTREAM_URL, **config),
        max_request_bytes=max_request_bytes,
        transport=upstream.transport(),
    )
    headers = key_headers(memory, role, users)
    with TestClient(app, headers=headers, raise_server_exceptions=False) as client:
        yield client, app


def captured(memory: Memory, user: str) -> list[tuple[str, str | None, str]]:
    """The turns the proxy stored for ``user``: (role, speaker, text), oldest first."""
    turns: list[tuple[str, str | None, str]] = []
    after: str | None = None
    while True:
        page = memory.list(
            Scope(user),
            "episode",
            episode_filter=EpisodeFilter(surface=SURFACE),
            after=after,
            limit=1000,
        )
        turns += [(e.role.value, e.speaker, e.text) for e in page]  # type: ignore[union-attr]
        if len(page) < 1000:
            return turns
        after = page[-1].id
