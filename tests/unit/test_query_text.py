"""A query string that is not UTF-8 text is refused with 422, as a body holding one is."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.model import Role, Turn
from memstrata.server.auth import LocalAuth
from memstrata.server.http import create_app


@pytest.fixture
def http(memory: Memory) -> Iterator[TestClient]:
    memory.remember([Turn(text="I live in Cairo.", role=Role.USER)], "alice")
    with TestClient(create_app(memory, auth=LocalAuth()), base_url="http://127.0.0.1:8765") as c:
        yield c


@pytest.mark.parametrize(
    "query",
    [
        "/v1/search?user=alice&q=%ED%A0%80",  # an encoded lone surrogate
        "/v1/search?user=alice&q=%FF%FE",  # bytes that are no UTF-8
        "/v1/stats?user=%ED%A0%80",
        "/v1/recall?user=alice&topic=%ED%A0%80",
        "/v1/search?user=alice&q%FF=x",  # in a parameter's name
    ],
)
def test_a_query_string_that_is_not_utf8_is_refused(http: TestClient, query: str) -> None:
    answer = http.get(query)
    assert answer.status_code == 422
    body = answer.json()
    assert body["error"] == "InvalidInputError" and "UTF-8" in body["message"]


def test_text_in_any_language_still_passes(http: TestClient) -> None:
    for q in ("Cairo", "%E5%BC%80%E7%BD%97", "caf%C3%A9", "a+b"):
        assert http.get(f"/v1/search?user=alice&q={q}").status_code == 200
