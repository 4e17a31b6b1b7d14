"""The memory proxy end to end: a real proxy and a fake OpenAI-compatible upstream, both
served by uvicorn on loopback ports, talking over sockets."""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse

from memstrata.api import Memory
from memstrata.cli import main
from memstrata.errors import StoreError
from memstrata.model import EpisodeFilter, Scope
from memstrata.server.auth import KeyAuth, LocalAuth
from memstrata.server.proxy import create_proxy_app
from memstrata.settings import ProxySettings
from tests.e2e.live import live_server
from tests.inert import HOSTILE, assert_inert
from tests.keyed import key_headers

#: the memory fixture with the hashing embedder and no sample (tests/conftest.py)
pytestmark = pytest.mark.light_memory


def sse(*deltas: str) -> list[bytes]:
    """The chunks an OpenAI-compatible server streams for an answer made of ``deltas``."""

    def event(choice: dict[str, Any]) -> bytes:
        payload = {"id": "c1", "object": "chat.completion.chunk", "choices": [choice]}
        return b"data: " + json.dumps(payload, ensure_ascii=False).encode() + b"\n\n"

    chunks = [event({"index": 0, "delta": {"role": "assistant", "content": ""}})]
    chunks += [event({"index": 0, "delta": {"content": d}}) for d in deltas]
    chunks.append(event({"index": 0, "delta": {}, "finish_reason": "stop"}))
    chunks.append(b"data: [DONE]\n\n")
    return chunks


def completion(text: str) -> bytes:
    body = {
        "id": "c2",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
    }
    return json.dumps(body, ensure_ascii=False, indent=1).encode()


@dataclass
class FakeUpstream:
    """An OpenAI-compatible server answering from a script; it records what it was sent.

    A script entry is a list of SSE chunks (streamed; None breaks the stream off there), or
    (status, bytes) (one JSON body).
    With ``hold`` set, a stream stops after its first chunk until the event is set or the
    proxy goes away (``closed`` is then set)."""

    script: list[Any] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    hold: threading.Event | None = None
    closed: threading.Event = field(default_factory=threading.Event)

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Response:
            self.requests.append(json.loads(await request.body()))
            self.headers.append(dict(request.headers))
            step = self.script.pop(0)
            if isinstance(step, tuple):
                return Response(step[1], step[0], media_type="application/json")
            return StreamingResponse(self._stream(step), media_type="text/event-stream")

        @app.get("/v1/models")
        async def models(request: Request) -> Response:
            self.headers.append(dict(request.headers))
            return Response(b'{"object":"list","data":[{"id":"m1"}]}', 200)

        return app

    async def _stream(self, chunks: list[bytes | None]) -> AsyncIterator[bytes]:
        try:
            for number, chunk in enumerate(chunks):
                if chunk is None:  # the server breaks off here, mid-answer
                    raise ConnectionAbortedError("scripted break")
                yield chunk
                if number == 0 and self.hold is not None:
                    while not self.hold.is_set():
                        await asyncio.sleep(0.01)
        finally:
            self.closed.set()


@pytest.fixture
def upstream() -> Iterator[tuple[FakeUpstream, str]]:
    fake = FakeUpstream()
    with live_server(fake.app()) as client:
        yield fake, str(client.base_url).rstrip("/") + "/v1"
    if fake.hold is not None:
        fake.hold.set()


@contextmanager
def live_app(app: FastAPI, headers: dict[str, str] | None = None) -> Iterator[httpx2.Client]:
    """``app`` under uvicorn on a loopback port with its lifespan run (the proxy closes its
    upstream client and stores what it holds when it stops), and a client of it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30  # a bound so a broken start cannot hang the suite
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the proxy did not start")
            time.sleep(0.01)
        base = f"http://127.0.0.1:{sock.getsockname()[1]}"
        with httpx2.Client(base_url=base, timeout=30, headers=headers) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


@contextmanager
def serving(
    memory: Memory,
    upstream_url: str,
    *,
    auth: KeyAuth | LocalAuth | None = None,
    headers: dict[str, str] | None = None,
    max_request_bytes: int | None = None,
    **config: Any,
) -> Iterator[tuple[httpx2.Client, FastAPI]]:
    """The proxy over ``memory`` forwarding to ``upstream_url``, served on a loopback port."""
    app = create_proxy_app(
        memory,
        auth=auth if auth is not None else KeyAuth(memory.keys),
        config=ProxySettings(upstream=upstream_url, **config),
        max_request_bytes=max_request_bytes,
    )
    with live_app(app, headers=headers) as client:
        yield client, app


def captured(memory: Memory, scope: Scope) -> list[tuple[str, str, dict[str, Any]]]:
    found = memory.list(scope, "episode", episode_filter=EpisodeFilter(surface="proxy"))
    return [(e.role.value, e.text, dict(e.metadata)) for e in found]  # type: ignore[union-attr]


def chat(text: str, *, stream: bool = False, system: str | None = None) -> dict[str, Any]:
    messages: list[dict[str, Any]] = (
        [] if system is None else [{"role": "system", "content": system}]
    )
    messages.append({"role": "user", "content": text})
    return {"model": "m1", "messages": messages, "stream": stream}


def system_of(request: dict[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def test_a_stream_comes_back_byte_for_byte_with_the_memory_injected_and_is_captured(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    alice = Scope("alice")
    memory.remember(["My cat is called Miso.", *HOSTILE], alice)
    chunks = sse("Your cat ", "is Miso", " 🐱.")
    fake.script.append(chunks)
    with serving(memory, url, headers=key_headers(memory, "writer", ["alice"])) as (client, app):
        body = chat("what is my cat called?", stream=True, system="Be brief.")
        with client.stream("POST", "/v1/chat/completions", json=body) as answer:
            received = b"".join(answer.iter_raw())
            assert answer.status_code == 200
            assert answer.headers["content-type"].startswith("text/event-stream")
        app.state.captures.drain(30)
    assert received == b"".join(chunks)
    assert received.endswith(b"data: [DONE]\n\n")
    system = system_of(fake.requests[0])
    block, rest = system.split("\n</memory>\n\n")
    assert rest == "Be brief."
    assert "Miso" in block
    assert_inert(block + "\n</memory>")
    assert fake.requests[0]["messages"][1:] == body["messages"][1:]  # the rest untouched
    assert "authorization" not in fake.headers[0]  # the memstrata key never leaves
    assert captured(memory, alice) == [
        ("user", "what is my cat called?", {}),
        ("assistant", "Your cat is Miso 🐱.", {}),
    ]


def test_a_json_answer_comes_back_unchanged_and_a_system_message_is_prepended(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    memory.remember("I live in Hangzhou.", "bob")
    raw = completion("You live in Hangzhou.")
    fake.script.append((200, raw))
    with serving(memory, url, headers=key_headers(memory, "admin")) as (client, app):
        answer = client.post(
            "/v1/chat/completions",
            json=chat("where do I live?"),
            headers={"X-Memstrata-User": "bob"},
        )
        app.state.captures.drain(30)
    assert answer.status_code == 200
    assert answer.content == raw
    sent = fake.requests[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "user"]
    assert "Hangzhou" in sent[0]["content"]
    assert sent[0]["content"].startswith("<memory>\n") and sent[0]["content"].endswith("</memory>")
    assert captured(memory, Scope("bob"))[-2:] == [
        ("user", "where do I live?", {}),
        ("assistant", "You live in Hangzhou.", {}),
    ]


def test_a_request_sent_again_with_its_memory_block_gets_one_block(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    memory.remember("I prefer green tea.", "alice")
    fake.script += [(200, completion("ok")), (200, completion("ok"))]
    reader = key_headers(memory, "reader", ["alice"])  # enough when nothing is captured
    with serving(memory, url, headers=reader, capture=False) as (client, app):
        client.post("/v1/chat/completions", json=chat("tea?", system="Be kind."))
        again = chat("tea?", system=system_of(fake.requests[0]))  # what the model was given
        client.post("/v1/chat/completions", json=again)
        app.state.captures.drain(30)
    first, second = (system_of(r) for r in fake.requests)
    assert second == first
    assert second.count("<memory>") == 1 and second.endswith("\n\nBe kind.")
    assert captured(memory, Scope("alice")) == []


def test_the_user_comes_from_the_header_or_the_body_within_the_keys_tenant(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    memory.remember("Carol plays the cello.", "carol")
    fake.script += [(200, completion("cello")), (200, completion("?"))]
    with serving(memory, url, headers=key_headers(memory, "writer", ["carol"])) as (client, app):
        by_body = client.post(
            "/v1/chat/completions", json={**chat("my instrument?"), "user": "carol"}
        )
        other = client.post("/v1/chat/completions", json={**chat("x"), "user": "dave"})
        app.state.captures.drain(30)
    assert by_body.status_code == 200
    assert "cello" in system_of(fake.requests[0])
    assert fake.requests[0]["user"] == "carol"  # the request goes on as it was sent
    assert other.status_code == 403 and other.json()["error"] == "ForbiddenError"
    assert len(fake.requests) == 1
    with serving(memory, url, headers=key_headers(memory, "admin")) as (client, _):
        unnamed = client.post("/v1/chat/completions", json=chat("x"))
        bad = client.post("/v1/chat/completions", json={**chat("x"), "user": "a/b"})
    assert unnamed.status_code == 422 and "X-Memstrata-User" in unnamed.json()["message"]
    assert bad.status_code == 422 and bad.json()["error"] == "InvalidInputError"
    with serving(memory, url, headers=key_headers(memory, "reader", ["carol"])) as (client, _):
        reader = client.post("/v1/chat/completions", json=chat("x"))
    assert reader.status_code == 403  # a proxied exchange is stored: a writer's
    assert len(fake.requests) == 1


def test_upstream_errors_pass_through_with_their_status_and_nothing_is_captured(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    raw = b'{"error": {"message": "slow down", "type": "rate_limit"}}'
    fake.script.append((429, raw))
    with serving(memory, url, headers=key_headers(memory, "writer", ["erin"])) as (client, app):
        answer = client.post("/v1/chat/completions", json=chat("hello"))
        app.state.captures.drain(30)
    assert answer.status_code == 429
    assert answer.content == raw
    assert captured(memory, Scope("erin")) == []


def test_an_upstream_that_cannot_be_reached_is_502_in_the_error_shape(memory: Memory) -> None:
    # a port bound and never listened on, held to the end: connections to it are refused, and
    # no other process (a parallel worker's server) can be given it meanwhile
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
        with serving(memory, url, headers=key_headers(memory, "writer", ["fay"])) as (client, _):
            answer = client.post("/v1/chat/completions", json=chat("hello"))
            models = client.get("/v1/models")
    assert answer.status_code == 502
    body = answer.json()
    assert body["error"] == "UpstreamError" and url in body["message"]
    assert models.status_code == 502


def test_a_client_gone_mid_stream_leaves_the_proxy_serving(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    fake.hold = threading.Event()
    fake.script += [sse("first", " never sent"), (200, completion("still here"))]
    headers = key_headers(memory, "writer", ["gus"])
    with serving(memory, url, headers=headers) as (client, app):
        with client.stream(
            "POST", "/v1/chat/completions", json=chat("tell me a story", stream=True)
        ) as answer:
            first = next(answer.iter_raw())
            assert first.startswith(b"data: ")
        # the client went away: the proxy lets go of the upstream's stream
        assert fake.closed.wait(30)
        later = client.post("/v1/chat/completions", json=chat("still there?"))
        app.state.captures.drain(30)
    assert later.status_code == 200 and later.content == completion("still here")
    turns = captured(memory, Scope("gus"))
    assert ("user", "tell me a story", {}) in turns
    assert ("user", "still there?", {}) in turns


def test_a_huge_request_is_refused_before_it_reaches_the_upstream(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    headers = key_headers(memory, "writer", ["hal"])
    with serving(memory, url, headers=headers, max_request_bytes=4096) as (client, _):
        answer = client.post("/v1/chat/completions", json=chat("x" * 100_000))
        not_json = client.post("/v1/chat/completions", content=b"{not json")
        no_messages = client.post("/v1/chat/completions", json={"model": "m1"})
    assert answer.status_code == 413
    assert answer.json()["error"] == "TooLargeError"
    assert "4096" in answer.json()["message"]
    assert not_json.status_code == 422 and not_json.json()["error"] == "InvalidInputError"
    assert no_messages.status_code == 422 and "messages" in no_messages.json()["message"]
    assert fake.requests == []


def test_the_upstream_key_is_the_setting_or_in_local_mode_the_clients(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    fake.script += [(200, completion("a")), (200, completion("b"))]
    key = key_headers(memory, "writer", ["ivy"])
    with serving(memory, url, headers=key, upstream_api_key="sk-upstream") as (client, app):
        client.post("/v1/chat/completions", json=chat("hi"))
        models = client.get("/v1/models")
        app.state.captures.drain(30)
    assert fake.headers[0]["authorization"] == "Bearer sk-upstream"
    assert models.status_code == 200 and models.json()["data"] == [{"id": "m1"}]
    assert fake.headers[1]["authorization"] == "Bearer sk-upstream"
    local = {"Authorization": "Bearer sk-client", "X-Memstrata-User": "ivy"}
    with serving(memory, url, auth=LocalAuth(), headers=local) as (client, app):
        client.post("/v1/chat/completions", json=chat("hi"))
        app.state.captures.drain(30)
    assert fake.headers[2]["authorization"] == "Bearer sk-client"


def test_a_capture_that_fails_is_logged_and_the_answer_is_whole(
    memory: Memory,
    upstream: tuple[FakeUpstream, str],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake, url = upstream
    chunks = sse("fine")
    fake.script.append(chunks)

    def broken(*args: object, **kwargs: object) -> None:
        raise StoreError("the disk is full")

    monkeypatch.setattr(memory, "remember", broken)
    headers = key_headers(memory, "writer", ["jo"])
    with (
        caplog.at_level(logging.WARNING, logger="memstrata.server.proxy"),
        serving(memory, url, headers=headers) as (client, app),
    ):
        with client.stream("POST", "/v1/chat/completions", json=chat("hi", stream=True)) as r:
            received = b"".join(r.iter_raw())
        app.state.captures.drain(30)
    assert received == b"".join(chunks)
    assert any("could not capture" in r.getMessage() for r in caplog.records)


def test_the_cli_names_the_proxy_and_refuses_it_without_an_upstream(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["proxy", "--help"]) == 0
    assert "--upstream" in capsys.readouterr().out
    assert main(["proxy", "--data-dir", str(data_dir)]) == 2
    assert "--upstream" in capsys.readouterr().err
    assert main(["proxy", "--upstream", "ftp://x", "--data-dir", str(data_dir), "--local"]) == 2


def test_an_exchange_ending_after_the_proxy_stopped_is_logged_not_raised(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    from memstrata.server.proxy import Captures

    captures = Captures(memory)
    captures.close()
    with caplog.at_level(logging.WARNING, logger="memstrata.server.proxy"):
        captures.submit(Scope("kim"), "hi", "hello", complete=True)
    assert any("not stored" in r.getMessage() for r in caplog.records)
    assert captured(memory, Scope("kim")) == []


def test_an_answer_the_upstream_breaks_off_is_relayed_as_far_as_it_went_and_marked(
    memory: Memory, upstream: tuple[FakeUpstream, str]
) -> None:
    fake, url = upstream
    whole = sse("Half an ", "answer", "never sent")
    fake.script.append([*whole[:3], None])
    headers = key_headers(memory, "writer", ["lee"])
    with serving(memory, url, headers=headers) as (client, app):
        with client.stream("POST", "/v1/chat/completions", json=chat("go", stream=True)) as r:
            received = b""
            try:
                for chunk in r.iter_raw():
                    received += chunk
            except httpx2.HTTPError:
                pass  # the proxy may end the broken stream abruptly too
        later = client.get("/healthz")
        app.state.captures.drain(30)
    assert received == b"".join(whole[:3])
    assert later.status_code == 200
    assert captured(memory, Scope("lee")) == [
        ("user", "go", {}),
        ("assistant", "Half an answer", {"interrupted": True}),
    ]
