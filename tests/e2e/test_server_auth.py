"""Every route behind a key: each role against each family of routes, and tenants kept apart
whatever the query or the body says."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.model import Scope
from memstrata.server.auth import PUBLIC_PATHS
from memstrata.server.routes import ROUTERS
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.keyed import key_headers, keyed_app


@dataclass
class Seeded:
    client: TestClient
    memory: Memory
    episode: str
    fact: str
    other_episode: str  # bob's


@pytest.fixture
def seeded(tmp_path: Any, clock: FixedClock) -> Iterator[Seeded]:
    settings = load_settings(data_dir=tmp_path / "mem", auto_curate=False)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as mem:
        [ep] = mem.remember(["I drink oolong tea every morning"], Scope("alice", "t1"))
        fact = mem.add_fact("Alice drinks oolong tea", "alice", sources=[ep.id])
        mem.remember(["I moved to Hangzhou"], Scope("alice", "t2"))
        [other] = mem.remember(["Bob's secret: the vault code is 4711"], "bob")
        with TestClient(keyed_app(mem)) as client:
            yield Seeded(client, mem, ep.id, fact.id, other.id)


def _calls(s: Seeded) -> list[tuple[str, str, str, dict[str, Any], Any]]:
    """(role needed, method, path, query, body) of every route that acts on a user."""
    ep, fa = s.episode, s.fact
    return [
        ("reader", "GET", f"/v1/items/{ep}", {}, None),
        ("reader", "GET", f"/v1/items/{fa}/history", {}, None),
        ("reader", "GET", "/v1/list", {"kind": "fact"}, None),
        ("reader", "GET", "/v1/search", {"q": "tea"}, None),
        ("reader", "GET", "/v1/docs/essentials", {}, None),
        ("reader", "POST", "/v1/docs/tea/diff", {}, {"operations": []}),
        ("reader", "GET", "/v1/identity", {}, None),
        ("reader", "GET", "/v1/stats", {}, None),
        ("reader", "GET", "/v1/wake-up", {}, None),
        ("reader", "GET", "/v1/recall", {"topic": "tea"}, None),
        ("reader", "GET", "/v1/context", {"q": "tea"}, None),
        ("reader", "GET", "/v1/export", {}, None),
        ("reader", "GET", "/v1/runs", {}, None),
        ("reader", "GET", "/v1/scopes", {}, None),
        ("reader", "GET", "/v1/sessions", {}, None),
        ("reader", "GET", "/v1/facts", {"valid": "all"}, None),
        ("reader", "GET", "/v1/audit", {}, None),
        ("writer", "POST", "/v1/runs", {}, {"scope": {}, "kind": "extract"}),
        ("writer", "POST", "/v1/remember", {}, {"scope": {}, "turns": [{"text": "hi"}]}),
        ("writer", "POST", "/v1/facts", {}, {"scope": {}, "text": "x", "sources": [ep]}),
        ("writer", "PATCH", f"/v1/items/{fa}", {}, {"changes": {"importance": 0.9}}),
        ("writer", "POST", "/v1/docs/tea/apply", {}, {"operations": [], "expected_version": 0}),
        ("writer", "PUT", "/v1/identity", {}, {"text": "You help Alice."}),
        ("writer", "POST", f"/v1/items/{fa}/forget", {}, None),
        ("writer", "DELETE", f"/v1/items/{ep}", {}, None),
        ("writer", "DELETE", "/v1/scopes", {"thread": "t2"}, None),
        ("admin", "DELETE", "/v1/scopes", {}, None),
    ]


ORDER = ("reader", "writer", "admin")


@pytest.mark.parametrize("role", ORDER)
def test_each_role_reaches_its_routes_and_gets_403_on_the_others(seeded: Seeded, role: str) -> None:
    headers = key_headers(seeded.memory, role, ["alice"])
    for needed, method, path, query, body in _calls(seeded):
        before = seeded.memory.stats("alice")
        response = seeded.client.request(method, path, params=query, json=body, headers=headers)
        if ORDER.index(role) >= ORDER.index(needed):
            assert response.status_code < 300, (role, method, path, response.text)
        else:
            assert response.status_code == 403, (role, method, path, response.text)
            assert response.json()["error"] == "ForbiddenError"
            assert seeded.memory.stats("alice") == before  # refused: nothing changed


def test_every_route_but_the_public_ones_names_the_role_it_needs() -> None:
    def needs(dependant: Any) -> set[str]:
        found = {getattr(d.call, "__name__", "") for d in dependant.dependencies}
        for sub in dependant.dependencies:
            found |= needs(sub)
        return {n for n in found if n.startswith("require_")}

    routes = [r for router in ROUTERS for r in router.routes if isinstance(r, APIRoute)]
    assert len(routes) >= 17
    for route in routes:
        if route.path in PUBLIC_PATHS:
            assert not needs(route.dependant), route.path
        else:
            assert len(needs(route.dependant)) == 1, (route.path, route.methods)


def test_a_key_bound_to_one_user_needs_no_user_and_reaches_no_other(seeded: Seeded) -> None:
    client = seeded.client
    alice = key_headers(seeded.memory, "writer", ["alice"])
    listed = client.get("/v1/list", headers=alice).json()["items"]
    assert {r["scope"]["user"] for r in listed} == {"alice"} and len(listed) == 2
    assert client.get("/v1/stats", params={"thread": "t1"}, headers=alice).json()["episodes"] == 1
    remembered = client.post(
        "/v1/remember", json={"scope": {"thread": "t3"}, "turns": [{"text": "hi"}]}, headers=alice
    )
    assert remembered.status_code == 201 and remembered.json()[0]["scope"]["user"] == "alice"
    for tampered in (
        {"user": "bob"},
        {"user": "Alice"},
        {"user": "bob", "thread": "t1"},
    ):
        response = client.get("/v1/list", params=tampered, headers=alice)
        assert response.status_code == 403 and response.json()["error"] == "ForbiddenError"
        assert "bob" not in response.text.replace(tampered["user"], "")
    for path in (f"/v1/items/{seeded.other_episode}", "/v1/stats", "/v1/search?q=vault"):
        response = client.get(path, params={"user": "bob"}, headers=alice)
        assert response.status_code == 403 and "4711" not in response.text
    # bob's item asked for as alice's: not found, as any id outside the scope
    assert client.get(f"/v1/items/{seeded.other_episode}", headers=alice).status_code == 404
    for body in (
        {"scope": {"user": "bob"}, "turns": [{"text": "planted"}]},
        {"scope": {"user": "bob", "thread": "t1"}, "turns": [{"text": "planted"}]},
    ):
        response = client.post("/v1/remember", json=body, headers=alice)
        assert response.status_code == 403, response.text
    response = client.delete("/v1/scopes", params={"user": "bob", "thread": "x"}, headers=alice)
    assert response.status_code == 403
    assert seeded.memory.stats("bob").episodes == 1  # nothing of bob's read, written or gone


@pytest.mark.parametrize(
    "query",
    [
        "user=alice&user=bob",
        "user=bob&user=alice",
        "user=alice&user=alice",
        "user=alice&thread=t1&thread=t2",
    ],
)
def test_a_repeated_query_parameter_is_refused(seeded: Seeded, query: str) -> None:
    every = key_headers(seeded.memory, "admin", None)
    response = seeded.client.get(f"/v1/list?{query}", headers=every)
    assert response.status_code == 422 and response.json()["error"] == "InvalidInputError"
    assert "repeated" in response.json()["message"]


def test_a_key_for_several_users_or_all_must_name_one(seeded: Seeded) -> None:
    client = seeded.client
    pair = key_headers(seeded.memory, "reader", ["alice", "bob"])
    every = key_headers(seeded.memory, "reader", None)
    for headers in (pair, every):
        response = client.get("/v1/stats", headers=headers)
        assert response.status_code == 422 and "name the user" in response.json()["message"]
        assert client.get("/v1/stats", params={"user": "bob"}, headers=headers).status_code == 200
    assert client.get("/v1/stats", params={"user": "carol"}, headers=pair).status_code == 403
    assert client.get("/v1/stats", params={"user": "carol"}, headers=every).status_code == 200


def test_revoking_a_key_stops_it_at_the_next_request(seeded: Seeded) -> None:
    created = seeded.memory.keys.create("reader", ["alice"])
    headers = {"X-API-Key": created.secret}
    assert seeded.client.get("/v1/stats", headers=headers).status_code == 200
    seeded.memory.keys.revoke(created.key.id)
    response = seeded.client.get("/v1/stats", headers=headers)
    assert response.status_code == 401 and "revoked" in response.json()["message"]


def test_the_schema_says_how_a_key_is_sent(seeded: Seeded) -> None:
    spec = seeded.client.get("/openapi.json").json()
    schemes = spec["components"]["securitySchemes"]
    assert schemes["HTTPBearer"]["scheme"] == "bearer"
    assert schemes["APIKeyHeader"] == {
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
        "description": schemes["APIKeyHeader"]["description"],
    }
    stats = spec["paths"]["/v1/stats"]["get"]
    assert {"HTTPBearer": []} in stats["security"] and {"APIKeyHeader": []} in stats["security"]
    assert "security" not in spec["paths"]["/healthz"]["get"]


def test_an_admin_manages_keys_over_http_and_a_new_key_works_at_once(seeded: Seeded) -> None:
    client = seeded.client
    admin = key_headers(seeded.memory, "admin", None)
    made = client.post(
        "/v1/keys", json={"role": "reader", "users": ["alice"], "name": "bot"}, headers=admin
    )
    assert made.status_code == 201, made.text
    key = made.json()
    assert key["key"].startswith("ms_") and key["users"] == ["alice"] and key["role"] == "reader"
    reader = {"Authorization": f"Bearer {key['key']}"}
    assert client.get("/v1/stats", headers=reader).json()["episodes"] == 2
    listed = client.get("/v1/keys", headers=admin)
    assert listed.status_code == 200 and key["id"] in {k["id"] for k in listed.json()["items"]}
    assert key["key"] not in listed.text and all("key" not in k for k in listed.json()["items"])
    first = client.get("/v1/keys", params={"limit": 1}, headers=admin).json()
    rest = client.get(
        "/v1/keys", params={"limit": 1000, "cursor": first["next_cursor"]}, headers=admin
    ).json()
    assert [k["id"] for k in first["items"] + rest["items"]] == [
        k["id"] for k in listed.json()["items"]
    ] and rest["next_cursor"] is None
    revoked = client.delete(f"/v1/keys/{key['id']}", headers=admin)
    assert revoked.status_code == 200 and revoked.json()["active"] is False
    assert client.get("/v1/stats", headers=reader).status_code == 401
    assert (
        client.delete("/v1/keys/key_01HZZZZZZZZZZZZZZZZZZZZZZZ", headers=admin).status_code == 404
    )
    for bad in (
        {"role": "owner", "users": ["alice"]},
        {"role": "reader", "users": []},
        {"role": "reader"},
        {"role": "reader", "users": ["alice"], "extra": 1},
    ):
        assert client.post("/v1/keys", json=bad, headers=admin).status_code == 422, bad


def test_an_admin_bound_to_users_manages_only_keys_within_them(seeded: Seeded) -> None:
    client = seeded.client
    everyone = seeded.memory.keys.create("reader", None)
    bobs = seeded.memory.keys.create("reader", ["bob"])
    alice_admin = key_headers(seeded.memory, "admin", ["alice"])
    for users in (["bob"], ["alice", "bob"], None):
        response = client.post(
            "/v1/keys", json={"role": "reader", "users": users}, headers=alice_admin
        )
        assert response.status_code == 403, users
    made = client.post("/v1/keys", json={"role": "writer", "users": ["alice"]}, headers=alice_admin)
    assert made.status_code == 201
    listed = {k["id"] for k in client.get("/v1/keys", headers=alice_admin).json()["items"]}
    assert made.json()["id"] in listed and not listed & {everyone.key.id, bobs.key.id}
    for other in (everyone, bobs):  # outside the tenant: as absent as a missing key
        assert client.delete(f"/v1/keys/{other.key.id}", headers=alice_admin).status_code == 404
    assert all(k.active for k in seeded.memory.keys.list())
    writer = key_headers(seeded.memory, "writer", None)
    assert client.get("/v1/keys", headers=writer).status_code == 403
    assert (
        client.post("/v1/keys", json={"role": "admin", "users": None}, headers=writer).status_code
        == 403
    )
