"""Request ids and log lines: an id per request in X-Request-ID and on every log line of the
request, one access line per request, as JSON or text, without keys, queries or bodies."""

from __future__ import annotations

import io
import json
import logging
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.server.requestlog import configure_server_logging, resolve_format
from tests.conftest import SERVER_LOGGERS
from tests.keyed import keyed_client


def lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def access_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [line for line in lines(stream) if line["logger"] == "memstrata.access"]


def test_each_request_gets_an_id_in_the_header_and_the_access_line(
    client: TestClient, log_stream: io.StringIO
) -> None:
    first = client.get("/healthz")
    second = client.get("/healthz")
    ids = [first.headers["x-request-id"], second.headers["x-request-id"]]
    assert all(ids) and ids[0] != ids[1]
    access = access_lines(log_stream)
    assert [a["request_id"] for a in access] == ids
    line = access[0]
    assert (line["method"], line["route"], line["status"], line["level"]) == (
        "GET",
        "/healthz",
        200,
        "info",
    )
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0
    assert line["message"] == "GET /healthz 200"


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("abc-123_x.y:z", True),
        ("a" * 128, True),
        ("a" * 129, False),
        ("has space", False),
        ("", False),
        ("id\u00e9", False),
        ('x"}{"level":"forged', False),
    ],
)
def test_a_client_request_id_is_kept_only_when_sane(
    client: TestClient, log_stream: io.StringIO, sent: str, kept: bool
) -> None:
    r = client.get("/healthz", headers={"X-Request-ID": sent.encode()})
    got = r.headers["x-request-id"]
    assert (got == sent) is kept
    if not kept:
        assert len(got) == 32 and got.isalnum()
    assert access_lines(log_stream)[-1]["request_id"] == got
    assert r.headers.get_list("x-request-id") == [got]


def test_lines_logged_inside_a_route_carry_its_request_id(
    client: TestClient, log_stream: io.StringIO
) -> None:
    # a secret in a turn is scrubbed, and the scrub is logged from the route's worker thread
    r = client.post(
        "/v1/remember",
        json={"scope": {"user": "alice"}, "turns": [{"text": "my password is hunter2-Secret"}]},
        headers={"X-Request-ID": "req-remember-1"},
    )
    assert r.status_code == 201, r.text
    logged = [line for line in lines(log_stream) if line["request_id"] == "req-remember-1"]
    loggers = {line["logger"] for line in logged}
    assert "memstrata.access" in loggers and "memstrata.privacy" in loggers, logged
    assert "hunter2" not in log_stream.getvalue()


def test_the_log_holds_no_query_string_header_value_or_body(
    client: TestClient, log_stream: io.StringIO
) -> None:
    key = client.headers["authorization"].split()[1]  # the client's own, valid key
    client.post(
        "/v1/remember",
        json={"scope": {"user": "alice"}, "turns": [{"text": "the body says turquoise"}]},
    )
    client.get("/v1/search", params={"user": "alice", "q": "turquoise lighthouse"})
    refused = client.get("/v1/search", params={"user": "alice", "q": "x", "api_key": key})
    assert refused.status_code == 422
    unknown = "ms_" + "x" * 43
    assert (
        client.get("/v1/stats", headers={"Authorization": f"Bearer {unknown}"}).status_code == 401
    )
    text = log_stream.getvalue()
    for secret in (key, key[:11], unknown, "turquoise", "lighthouse", "Bearer"):
        assert secret not in text
    access = access_lines(log_stream)
    assert [a["status"] for a in access] == [201, 200, 422, 401]
    # the user from the body, from the query; none for a request refused before its scope
    assert [a.get("user") for a in access] == ["alice", "alice", None, None]


def test_an_unexpected_failure_is_logged_with_its_request_id(
    memory: Memory, log_stream: io.StringIO, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the disk is on fire")

    monkeypatch.setattr(memory, "stats", broken)
    with keyed_client(memory, raise_server_exceptions=False) as client:
        r = client.get("/v1/stats", params={"user": "alice"}, headers={"X-Request-ID": "boom-1"})
    assert r.status_code == 500 and r.headers["x-request-id"] == "boom-1"
    mine = [line for line in lines(log_stream) if line["request_id"] == "boom-1"]
    errors = [line for line in mine if line["level"] == "error"]
    assert errors and "the disk is on fire" in errors[0]["exception"]
    assert [a["status"] for a in mine if a["logger"] == "memstrata.access"] == [500]


def test_text_format_for_a_person() -> None:
    stream = io.StringIO()
    saved = {
        n: (logging.getLogger(n).handlers[:], logging.getLogger(n).propagate)
        for n in SERVER_LOGGERS
    }
    try:
        assert configure_server_logging("text", stream) == "text"
        logging.getLogger("memstrata.test").warning("hello %s", "there")
    finally:
        for n, (handlers, propagate) in saved.items():
            logging.getLogger(n).handlers[:] = handlers
            logging.getLogger(n).propagate = propagate
    line = stream.getvalue().strip()
    assert line.endswith("WARNING memstrata.test hello there") and line[:4].isdigit()


def test_auto_is_text_on_a_terminal_and_json_otherwise() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert resolve_format("auto", Tty()) == "text"
    assert resolve_format("auto", io.StringIO()) == "json"
    assert resolve_format("json", Tty()) == "json"


def test_lines_go_to_the_stderr_of_the_moment(monkeypatch: pytest.MonkeyPatch) -> None:
    saved = {
        n: (logging.getLogger(n).handlers[:], logging.getLogger(n).propagate)
        for n in SERVER_LOGGERS
    }
    first = io.StringIO()
    monkeypatch.setattr("sys.stderr", first)
    logging.getLogger("memstrata").addHandler(logging.StreamHandler(first))  # e.g. the CLI's
    try:
        configure_server_logging("json")
        first.close()  # replaced and closed, as a test runner does with what it captured
        second = io.StringIO()
        monkeypatch.setattr("sys.stderr", second)
        logging.getLogger("memstrata.test").warning("still heard")
    finally:
        for n, (handlers, propagate) in saved.items():
            logging.getLogger(n).handlers[:] = handlers
            logging.getLogger(n).propagate = propagate
    assert json.loads(second.getvalue())["message"] == "still heard"
