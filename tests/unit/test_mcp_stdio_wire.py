"""MCP over stdio answers every request line, whatever it holds: a line that is not JSON gets
a parse error (-32700, id null), a request the SDK's reader would refuse (a lone surrogate,
an invalid UTF-8 byte, nesting too deep, a line over the size limit) an error with its own id,
and the server reads on. Over HTTP ``/mcp`` the same line gets the same error."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.settings import DEFAULT_MAX_REQUEST_BYTES, load_settings
from tests.keyed import keyed_client
from tests.mcp_stdio import StdioServer

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602

#: a tools/call whose argument ``q`` is a lone surrogate, escaped as JSON spells it
SURROGATE_CALL = (
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    b'"params":{"name":"search","arguments":{"q":"\\ud800"}}}'
)
SURROGATE_URI = (
    b'{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"memstrata://\\udc00x"}}'
)
TRUNCATED = b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","argu'
INVALID_UTF8 = (
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call",'
    b'"params":{"name":"search","arguments":{"q":"caf\xe9"}}}'
)


def _deep(request_id: int, depth: int) -> bytes:
    head = f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
    head += '"params":{"name":"search","arguments":{"q":"x","deep":'
    return (head + "[" * depth + "]" * depth + "}}}").encode("ascii")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioServer]:
    served = StdioServer(tmp_path_factory.mktemp("stdio"))
    try:
        yield served
    finally:
        assert served.close() == 0
        assert "Traceback" not in served.stderr()


@pytest.fixture(autouse=True)
def _reads_on(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test the server still answers a valid call, and only that call."""
    yield
    if "server" not in request.fixturenames:
        return
    served: StdioServer = request.getfixturevalue("server")
    assert served.alive()
    answer = served.ask(served.call("after", "search", {"q": "anything"}))
    assert answer["id"] == "after" and "result" in answer, answer


def _expect_error(answer: dict[str, Any], request_id: int | str | None, code: int) -> str:
    assert answer["id"] == request_id, answer
    error = answer["error"]
    assert error["code"] == code, answer
    assert error["data"]["error"] in {"InvalidInputError", "TooLargeError"}, answer
    message: str = error["message"]
    assert message == error["data"]["message"]
    return message


def test_a_lone_surrogate_in_tool_arguments_is_invalid_params(server: StdioServer) -> None:
    message = _expect_error(server.ask(SURROGATE_CALL), 2, INVALID_PARAMS)
    assert "params.arguments.q" in message and "lone surrogate" in message


def test_a_lone_surrogate_in_a_resource_uri_is_invalid_params(server: StdioServer) -> None:
    message = _expect_error(server.ask(SURROGATE_URI), 3, INVALID_PARAMS)
    assert "params.uri" in message and "lone surrogate" in message


def test_an_invalid_utf8_byte_is_invalid_params(server: StdioServer) -> None:
    message = _expect_error(server.ask(INVALID_UTF8), 5, INVALID_PARAMS)
    assert "params.arguments.q" in message and "UTF-8" in message


@pytest.mark.parametrize("depth", [300, 100_000], ids=["past-the-sdk-reader", "past-recursion"])
def test_nesting_too_deep_is_answered_with_the_requests_id(server: StdioServer, depth: int) -> None:
    message = _expect_error(server.ask(_deep(6, depth)), 6, INVALID_PARAMS)
    assert "nest deeper than" in message and "params" in message


def test_a_truncated_line_is_a_parse_error_with_id_null(server: StdioServer) -> None:
    answer = server.ask(TRUNCATED)
    assert answer["id"] is None and answer["error"]["code"] == PARSE_ERROR, answer


@pytest.mark.parametrize(
    "text",
    [b"[]", b"42", b'{"jsonrpc":"2.0","id":7}', b'{"jsonrpc":"1.0","id":7,"method":"ping"}'],
    ids=["array", "number", "no-method", "wrong-version"],
)
def test_json_that_is_no_request_is_an_invalid_request(server: StdioServer, text: bytes) -> None:
    answer = server.ask(text)
    expected = 7 if b'"id":7' in text else None
    _expect_error(answer, expected, INVALID_REQUEST)


def test_a_notification_that_cannot_be_read_gets_no_answer(server: StdioServer) -> None:
    server.send(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"x":"\\ud800"}}')
    # the next answer is the one to the next request: nothing came for the notification
    answer = server.ask(b'{"jsonrpc":"2.0","id":8,"method":"ping"}')
    assert answer == {"jsonrpc": "2.0", "id": 8, "result": {}}


def test_a_line_over_the_size_limit_is_refused_naming_the_limit(server: StdioServer) -> None:
    blob = "x" * 5_000_000
    turn = {"text": "I keep a very large blob", "metadata": {"blob": blob}}
    message = _expect_error(
        server.ask(server.call(9, "remember", {"turns": [turn]})), 9, INVALID_REQUEST
    )
    assert str(DEFAULT_MAX_REQUEST_BYTES) in message and "max_request_bytes" in message
    found = server.ask(server.call(10, "search", {"q": "very large blob"}))
    assert found["result"]["structuredContent"]["items"] == []  # nothing was stored


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_huge_line_is_not_held_in_memory(server: StdioServer) -> None:
    before = server.peak_rss()
    filler = b"y" * (96 * 1024 * 1024)
    huge = b'{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"search",'
    huge += b'"arguments":{"q":"' + filler + b'"}}}'
    _expect_error(server.ask(huge, timeout=60), 11, INVALID_REQUEST)
    grown = server.peak_rss() - before
    assert grown < 32 * 1024 * 1024, f"the peak memory grew by {grown} bytes"


@pytest.fixture
def http(tmp_path: Path) -> Iterator[TestClient]:
    settings = load_settings(data_dir=tmp_path / "mem")
    with (
        Memory.open(settings=settings, embedder=HashingEmbedder()) as memory,
        keyed_client(memory, users=["alice"], role="writer", base_url="http://127.0.0.1") as c,
    ):
        yield c


@pytest.mark.parametrize(
    "text",
    [SURROGATE_CALL, SURROGATE_URI, INVALID_UTF8, TRUNCATED, _deep(6, 300), _deep(6, 100_000)],
    ids=["surrogate-arguments", "surrogate-uri", "invalid-utf8", "truncated", "deep", "deeper"],
)
def test_http_answers_the_same_error_as_stdio(
    server: StdioServer, http: TestClient, text: bytes
) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-06-18",
    }
    over_http = http.post("/mcp", content=text, headers=headers)
    assert over_http.status_code == 400
    assert over_http.json() == server.ask(text)
