"""The HTTP API of a fact's time (``when``) and slot: POST /v1/facts and PATCH /v1/items/{id}
take them, every fact answer carries them, GET /v1/facts filters by slot and slot_kind, bad
values are 422 in the one error shape, and the OpenAPI document states them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.e2e.test_server import assert_error
from tests.keyed import keyed_client

A = {"user": "a"}
MAY = {"text": "下个月 next month", "start": "2026-05-01T08:00:00+08:00", "end": "2026-06-01"}
MAY_OUT = {
    "text": "下个月 next month",
    "start": "2026-05-01T00:00:00.000000Z",
    "end": "2026-06-01T00:00:00.000000Z",
}


@pytest.fixture
def http(data_dir: Path, clock: FixedClock) -> Iterator[TestClient]:
    """A client over a memory with the hashing embedder; server errors come back as 500s."""
    settings = load_settings(data_dir=data_dir)
    with (
        Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder()) as memory,
        keyed_client(memory, raise_server_exceptions=False) as client,
    ):
        yield client


def _add(http: TestClient, **fields: Any) -> dict[str, Any]:
    r = http.post("/v1/facts", json={"scope": A, "text": "Alice is allergic to shrimp", **fields})
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def test_post_and_get_carry_when_and_slot(http: TestClient) -> None:
    fact = _add(http, category="health", when=MAY, slot="  allergy:shrimp ")
    assert fact["when"] == MAY_OUT and fact["slot"] == "allergy:shrimp"
    assert fact["category"] == "health"
    stored = http.get(f"/v1/items/{fact['id']}", params=A).json()
    assert stored["when"] == MAY_OUT and stored["slot"] == "allergy:shrimp"
    listed = http.get("/v1/list", params={**A, "kind": "fact"}).json()["items"]
    assert [(f["when"], f["slot"]) for f in listed] == [(MAY_OUT, "allergy:shrimp")]
    bare = _add(http, when={"start": "2026-05-01T00:00:00Z", "end": "2026-05-02T00:00:00Z"})
    assert bare["when"]["text"] == "2026-05-01"
    plain = _add(http)
    assert plain["when"] is None and plain["slot"] is None


def test_patch_sets_changes_and_clears_them(http: TestClient) -> None:
    fact = _add(http)
    url = f"/v1/items/{fact['id']}"
    r = http.patch(url, params=A, json={"changes": {"when": MAY, "slot": "allergy:shrimp"}})
    assert r.status_code == 200, r.text
    assert r.json()["when"] == MAY_OUT and r.json()["version"] == 2
    r = http.patch(url, params=A, json={"changes": {"slot": "Allergy:Peanuts 花生"}})
    assert r.json()["slot"] == "Allergy:Peanuts 花生" and r.json()["when"] == MAY_OUT
    history = http.get(f"{url}/history", params=A).json()["items"]
    assert [h["data"]["slot"] for h in history] == [None, "allergy:shrimp", "Allergy:Peanuts 花生"]
    r = http.patch(url, params=A, json={"changes": {"when": None, "slot": None}})
    assert r.json()["when"] is None and r.json()["slot"] is None


def test_patch_sets_a_slot_value_for_its_owner_only(http: TestClient) -> None:
    """The value the schema offers is one the facade takes: set, bounded, cleared, and never
    reachable from another user."""
    fact = _add(http, slot="employer")
    url = f"/v1/items/{fact['id']}"
    r = http.patch(url, params=A, json={"changes": {"value": "宁德时代 CATL"}})
    assert r.status_code == 200, r.text
    assert r.json()["value"] == "宁德时代 CATL" and r.json()["version"] == 2
    too_long = http.patch(url, params=A, json={"changes": {"value": "x" * 501}})
    assert too_long.status_code == 422
    other = http.patch(url, params={"user": "bob"}, json={"changes": {"value": "x"}})
    assert other.status_code == 404
    r = http.patch(url, params=A, json={"changes": {"value": None}})
    assert r.status_code == 200 and r.json()["value"] is None


def test_get_facts_filters_by_slot_and_kind(http: TestClient) -> None:
    made = {
        slot: _add(http, slot=slot)["id"]
        for slot in ("allergy:shrimp", "allergy", "allergyx", "a_b:1", "axb:1", "过敏:虾")
    }
    _add(http)

    def ids(**params: str) -> list[str]:
        r = http.get("/v1/facts", params={**A, **params})
        assert r.status_code == 200, r.text
        return [f["id"] for f in r.json()["items"]]

    assert ids(slot="allergy:shrimp") == [made["allergy:shrimp"]]
    assert ids(slot_kind="allergy") == [made["allergy:shrimp"], made["allergy"]]
    assert ids(slot_kind="a_b") == [made["a_b:1"]]
    assert ids(slot_kind="过敏") == [made["过敏:虾"]]
    assert ids(slot_kind="allergy", category="health") == []
    views = http.get("/v1/facts", params={**A, "slot": "allergy"}).json()["items"]
    assert views[0]["slot"] == "allergy" and views[0]["when"] is None
    for bad in ({"slot_kind": "allergy:shrimp"}, {"slot": " x"}, {"slot": "x" * 201}):
        assert_error(http.get("/v1/facts", params={**A, **bad}), 422, "InvalidInputError")


LONE = "\\ud800"


@pytest.mark.parametrize(
    "fields",
    [
        {
            "when": {
                "text": "in May",
                "start": "2026-06-01T00:00:00Z",
                "end": "2026-05-01T00:00:00Z",
            }
        },
        {
            "when": {
                "text": "in May",
                "start": "2026-05-01T00:00:00Z",
                "end": "2026-05-01T00:00:00Z",
            }
        },
        {"when": {"text": "in May", "start": "2026-05-01T00:00:00Z"}},
        {"when": {"text": "in May", "start": "someday", "end": "2026-06-01T00:00:00Z"}},
        {"when": {"text": "  ", "start": "2026-05-01T00:00:00Z", "end": "2026-06-01T00:00:00Z"}},
        {"when": {"text": "x" * 201, "start": "2026-05-01", "end": "2026-06-01"}},
        {"when": {"start": "2026-05-01", "end": "2026-06-01", "tz": "UTC"}},
        {"when": "last Friday"},
        {"slot": "x" * 10_000},
        {"slot": "allergy:\tshrimp"},
        {"slot": "   "},
        {"slot": 5},
        {"slots": "employer"},
    ],
)
def test_bad_values_are_422_and_store_nothing(http: TestClient, fields: dict[str, Any]) -> None:
    body = {"scope": A, "text": "Alice is allergic to shrimp", **fields}
    assert_error(http.post("/v1/facts", json=body), 422, "InvalidInputError")
    fact = _add(http)
    changes = {"changes": fields}
    assert_error(http.patch(f"/v1/items/{fact['id']}", params=A, json=changes), 422)
    assert http.get(f"/v1/items/{fact['id']}", params=A).json()["version"] == 1
    assert len(http.get("/v1/list", params={**A, "kind": "fact"}).json()["items"]) == 1
    http.delete(f"/v1/items/{fact['id']}", params=A)


@pytest.mark.parametrize(
    "body",
    [
        f'{{"scope": {{"user": "a"}}, "text": "x", "slot": "a{LONE}"}}',
        f'{{"scope": {{"user": "a"}}, "text": "x", "when": {{"text": "{LONE}", '
        '"start": "2026-05-01", "end": "2026-06-01"}}',
    ],
)
def test_a_lone_surrogate_is_422(http: TestClient, body: str) -> None:
    r = http.post("/v1/facts", content=body, headers={"content-type": "application/json"})
    assert "surrogate" in assert_error(r, 422, "InvalidInputError")["message"]


def test_the_openapi_document_states_them(http: TestClient) -> None:
    doc = http.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    fact_in = schemas["FactIn"]["properties"]
    assert "when" in fact_in and fact_in["slot"]["anyOf"][0]["maxLength"] == 200
    assert set(schemas["WhenIn"]["required"]) == {"start", "end"}
    assert {"when", "slot"} <= set(schemas["ChangesIn"]["properties"])
    out = schemas["FactOut"]["properties"]
    assert {"when", "slot"} <= set(out) and set(schemas["WhenOut"]["required"]) == {
        "text",
        "start",
        "end",
    }
    params = {p["name"] for p in doc["paths"]["/v1/facts"]["get"]["parameters"]}
    assert {"slot", "slot_kind"} <= params
