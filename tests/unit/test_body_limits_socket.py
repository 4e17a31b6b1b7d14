"""Request bodies over a real socket: a declared length over the limit is refused before any
body is sent (and no ``100 Continue`` invites it), a chunked body is refused as soon as it
passes the limit, a body that takes too long to arrive gets 408, and the access line of a
refused request names its route."""

from __future__ import annotations

import io
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.settings import DEFAULT_MAX_REQUEST_BYTES, load_settings
from tests.conftest import FixedClock
from tests.e2e.live import live_server
from tests.keyed import key_headers, keyed_app

#: a bound on every wait of these tests, far above what any answer takes: a test that waits
#: this long has failed
WAIT_S = 20.0
#: the body deadline of the server under test, in seconds
DEADLINE_S = 1.0


@pytest.fixture
def memory(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    settings = load_settings(data_dir=data_dir, request_body_timeout_s=DEADLINE_S)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder()) as mem:
        yield mem


@pytest.fixture
def served(memory: Memory, log_stream: io.StringIO) -> Iterator[tuple[int, str]]:
    """The port of the app served over a loopback socket, and an API key's header line."""
    del log_stream  # configured before the server starts
    key = key_headers(memory)["Authorization"]
    with live_server(keyed_app(memory, max_request_bytes=8192)) as client:
        port = client.base_url.port
        assert port is not None
        yield port, f"Authorization: {key}"


@pytest.fixture
def served_default_limit(memory: Memory, log_stream: io.StringIO) -> Iterator[tuple[int, str]]:
    """As :func:`served`, with the default body limit of the settings."""
    del log_stream
    key = key_headers(memory)["Authorization"]
    with live_server(keyed_app(memory)) as client:
        port = client.base_url.port
        assert port is not None
        yield port, f"Authorization: {key}"


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_S)
    sock.settimeout(WAIT_S)
    return sock


def head(path: str, auth: str, *lines: str) -> bytes:
    start = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", auth, "Content-Type: application/json"]
    text = "\r\n".join([*start, *lines])
    return (text + "\r\n\r\n").encode()


def read_answer(sock: socket.socket) -> tuple[list[str], dict[str, str], Any]:
    """Every status line the server sent before its final answer's body (1xx included), the
    final answer's headers and its JSON body."""
    data = b""
    statuses: list[str] = []
    while True:
        while b"\r\n\r\n" not in data:
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                raise AssertionError(
                    f"no answer in {WAIT_S} s; status lines before: {statuses}, then {data!r}"
                ) from None
            if not chunk:
                raise AssertionError(f"the connection closed before an answer: {data!r}")
            data += chunk
        top, _, data = data.partition(b"\r\n\r\n")
        status, *header_lines = top.decode("latin-1").split("\r\n")
        statuses.append(status)
        if not status.split()[1].startswith("1"):
            break
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
    length = int(headers["content-length"])
    while len(data) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"the connection closed within the answer: {data!r}")
        data += chunk
    return statuses, headers, json.loads(data[:length])


def closes(sock: socket.socket) -> bool:
    """Whether the server ends the connection (without the client sending anything more)."""
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass
    return True


def access_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    found = [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    return [line for line in found if line["logger"] == "memstrata.access"]


def test_a_declared_length_over_the_limit_is_refused_without_100_continue(
    served_default_limit: tuple[int, str], memory: Memory, log_stream: io.StringIO
) -> None:
    port, auth = served_default_limit
    with connect(port) as sock:
        declared = 10_000_000
        assert declared > DEFAULT_MAX_REQUEST_BYTES
        sock.sendall(
            head("/v1/remember", auth, f"Content-Length: {declared}", "Expect: 100-continue")
        )
        # not a byte of the body is sent: the answer cannot have waited for one
        statuses, headers, body = read_answer(sock)
        assert statuses == ["HTTP/1.1 413 Request Entity Too Large"], statuses
        assert body["error"] == "TooLargeError" and "max_request_bytes" in body["message"]
        assert headers["connection"] == "close"
        assert closes(sock)
    assert memory.stats("a").episodes == 0
    line = access_lines(log_stream)[-1]
    assert (line["method"], line["route"], line["status"]) == ("POST", "/v1/remember", 413)


def test_a_declared_length_over_the_limit_is_answered_while_the_body_trickles(
    served: tuple[int, str], log_stream: io.StringIO
) -> None:
    port, auth = served
    with connect(port) as sock:
        sock.sendall(head("/v1/docs/essentials/apply", auth, "Content-Length: 10000000"))
        sock.sendall(b'{"text": "' + b"x" * 100)  # a start, and then nothing for a while
        statuses, headers, body = read_answer(sock)
        assert statuses[0].startswith("HTTP/1.1 413"), statuses
        assert body["error"] == "TooLargeError"
        assert headers["connection"] == "close"
        assert closes(sock)
    # the route template, as for an answered request, not "unmatched" nor the raw path
    line = access_lines(log_stream)[-1]
    assert (line["route"], line["status"]) == ("/v1/docs/{key}/apply", 413)


def test_a_chunked_body_is_refused_as_it_passes_the_limit(
    served: tuple[int, str], memory: Memory, log_stream: io.StringIO
) -> None:
    port, auth = served
    with connect(port) as sock:
        sock.sendall(head("/v1/remember", auth, "Transfer-Encoding: chunked"))
        piece = b"x" * 4096
        for _ in range(3):  # 12 KiB of a limit of 8 KiB, and the body never ends
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
        statuses, headers, body = read_answer(sock)
        assert statuses[0].startswith("HTTP/1.1 413"), statuses
        assert body["error"] == "TooLargeError" and "8192" in body["message"]
        assert headers["connection"] == "close"
        assert closes(sock)
    assert memory.stats("a").episodes == 0
    line = access_lines(log_stream)[-1]
    assert (line["route"], line["status"]) == ("/v1/remember", 413)


def test_a_body_that_trickles_past_the_deadline_gets_408(
    served: tuple[int, str], memory: Memory, log_stream: io.StringIO
) -> None:
    port, auth = served
    body = json.dumps({"scope": {"user": "a"}, "turns": [{"text": "hi"}]}).encode()
    answered = threading.Event()
    with connect(port) as sock:
        sock.sendall(head("/v1/remember", auth, f"Content-Length: {len(body)}"))

        def trickle() -> None:  # one byte every 0.1 s: the whole body would take seconds
            for i in range(len(body) - 1):  # never the last byte
                if answered.wait(0.1):
                    return
                try:
                    sock.sendall(body[i : i + 1])
                except OSError:
                    return

        sender = threading.Thread(target=trickle, daemon=True)
        sender.start()
        try:
            statuses, headers, answer = read_answer(sock)
        finally:
            answered.set()
            sender.join(WAIT_S)
        assert statuses[0].startswith("HTTP/1.1 408"), statuses
        assert answer["error"] == "RequestTimeoutError"
        assert "request_body_timeout_s" in answer["message"]
        assert headers["connection"] == "close"
        assert closes(sock)
    assert memory.stats("a").episodes == 0
    line = access_lines(log_stream)[-1]
    assert (line["route"], line["status"]) == ("/v1/remember", 408)


def test_a_body_in_pieces_within_the_deadline_is_served(
    served: tuple[int, str], memory: Memory
) -> None:
    port, auth = served
    body = json.dumps({"scope": {"user": "a"}, "turns": [{"text": "hi"}]}).encode()
    with connect(port) as sock:
        sock.sendall(
            head("/v1/remember", auth, f"Content-Length: {len(body)}", "Expect: 100-continue")
        )
        sock.sendall(body[:10])
        threading.Event().wait(0.1)
        sock.sendall(body[10:])
        statuses, _, answer = read_answer(sock)
        assert statuses[-1].startswith("HTTP/1.1 201"), statuses
        assert answer[0]["text"] == "hi"
    assert memory.stats("a").episodes == 1
