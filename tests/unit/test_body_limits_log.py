"""The access line of a request refused before it reached its route (by the body limit, by
the key check) names the route template of its path; a path no route takes stays
``unmatched``."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.server.metrics import UNMATCHED
from tests.keyed import keyed_app, keyed_client


def last_access(stream: io.StringIO) -> dict[str, Any]:
    found = [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]
    line: dict[str, Any] = [line for line in found if line["logger"] == "memstrata.access"][-1]
    return line


def test_a_body_refused_by_its_declared_length_is_logged_with_its_route(
    memory: Memory, log_stream: io.StringIO
) -> None:
    with keyed_client(memory, app=keyed_app(memory, max_request_bytes=2048)) as client:
        r = client.post(
            "/v1/docs/essentials/apply",
            content=b"{}",
            headers={"content-type": "application/json", "content-length": str(10**7)},
        )
        assert r.status_code == 413 and r.json()["error"] == "TooLargeError"
        line = last_access(log_stream)
        assert (line["method"], line["route"], line["status"]) == (
            "POST",
            "/v1/docs/{key}/apply",
            413,
        )

        def chunks() -> Iterator[bytes]:  # no Content-Length
            for _ in range(4):
                yield b"x" * 1024

        r = client.post("/v1/remember", content=chunks())
        assert r.status_code == 413
        assert (last_access(log_stream)["route"], last_access(log_stream)["status"]) == (
            "/v1/remember",
            413,
        )


def test_a_request_without_a_key_is_logged_with_its_route(
    memory: Memory, log_stream: io.StringIO
) -> None:
    with TestClient(keyed_app(memory)) as client:
        assert client.get("/v1/items/ep_nothing").status_code == 401
        assert last_access(log_stream)["route"] == "/v1/items/{item_id}"


def test_a_path_no_route_takes_is_still_unmatched(memory: Memory, log_stream: io.StringIO) -> None:
    with keyed_client(memory) as client:
        assert client.get("/v1/no-such-route").status_code == 404
        assert last_access(log_stream)["route"] == UNMATCHED
        # a method the path does not take is the path's route all the same
        assert client.put("/v1/remember", json={}).status_code == 405
        assert last_access(log_stream)["route"] == "/v1/remember"
