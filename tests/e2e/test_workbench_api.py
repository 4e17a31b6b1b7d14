"""The routes the web workbench reads: who is calling, users, scopes, sessions and their
turns, facts by validity; each isolated by what the caller's key allows."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.model import Scope, Turn
from memstrata.server.auth import LocalAuth
from memstrata.server.http import create_app
from tests.conftest import FixedClock
from tests.keyed import key_headers, keyed_client


def error_of(r: Any, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) <= {"error", "message", "details"} and isinstance(body["message"], str)
    return dict(body)


@pytest.fixture
def filled(memory: Memory, clock: FixedClock) -> Memory:
    """alice: thread t1 (sessions s1 then s2), thread t2 (session s9); bob: one turn."""
    t1, t2 = Scope("alice", "t1"), Scope("alice", "t2")
    memory.remember(
        [
            Turn("I live in Hangzhou. 我住在杭州。", speaker="alice", session_id="s1"),
            Turn("Noted.", speaker="assistant", session_id="s1"),
        ],
        t1,
    )
    clock.advance(hours=1)
    memory.remember([Turn("I moved to Beijing.", speaker="alice", session_id="s2")], t1)
    clock.advance(hours=1)
    memory.remember(
        [Turn("Tea, not coffee.", speaker="alice", session_id="s9")], t2, surface="notebook"
    )
    clock.advance(hours=1)
    memory.remember([Turn("bob's secret turn", speaker="bob", session_id="s1")], Scope("bob"))
    return memory


@pytest.fixture
def client(filled: Memory) -> Iterator[TestClient]:
    with keyed_client(filled) as c:
        yield c


def test_me_says_mode_role_users_and_key_never_the_secret(memory: Memory) -> None:
    created = memory.keys.create("reader", ["alice"], name="viewer")
    with keyed_client(memory, headers={"X-API-Key": created.secret}) as c:
        r = c.get("/v1/me")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body == {
        "mode": "keys",
        "role": "reader",
        "users": ["alice"],
        "key": {"id": created.key.id, "name": "viewer", "prefix": created.key.prefix},
    }
    assert created.secret not in r.text


def test_me_in_local_mode(memory: Memory) -> None:
    app = create_app(memory, auth=LocalAuth())
    with TestClient(app, base_url="http://127.0.0.1") as c:
        body = c.get("/v1/me").json()
    assert body == {"mode": "local", "role": "admin", "users": None, "key": None}


def test_me_without_a_key_is_401(memory: Memory) -> None:
    with keyed_client(memory, headers={}) as c:
        error_of(c.get("/v1/me"), 401)


def test_users_lists_counts_and_keeps_to_the_key(client: TestClient, filled: Memory) -> None:
    body = client.get("/v1/users").json()
    assert [u["user"] for u in body["items"]] == ["alice", "bob"]
    alice = body["items"][0]
    assert alice["episodes"] == 4 and alice["facts"] == 0 and alice["documents"] == 0
    assert alice["last_time"] is not None and alice["first_time"] < alice["last_time"]
    with keyed_client(filled, role="reader", users=["bob"]) as bob_only:
        shown = bob_only.get("/v1/users").json()["items"]
    assert [u["user"] for u in shown] == ["bob"]


def test_users_pages(client: TestClient) -> None:
    first = client.get("/v1/users", params={"limit": 1}).json()
    assert [u["user"] for u in first["items"]] == ["alice"] and first["next_cursor"] == "alice"
    second = client.get("/v1/users", params={"limit": 1, "cursor": "alice"}).json()
    assert [u["user"] for u in second["items"]] == ["bob"] and second["next_cursor"] is None
    error_of(client.get("/v1/users", params={"limit": 0}), 422)


def test_scopes_lists_threads_newest_first(client: TestClient, filled: Memory) -> None:
    filled.add_fact("Alice drinks tea", Scope("alice", "t2"), category="preference")
    body = client.get("/v1/scopes", params={"user": "alice"}).json()
    assert body["user"] == "alice"
    assert [(s["thread"], s["episodes"], s["sessions"], s["facts"]) for s in body["items"]] == [
        ("t2", 2, 2, 1),  # the fact added by hand cites a manual turn of its own
        ("t1", 3, 2, 0),
    ]


def test_scopes_of_another_user_is_403(filled: Memory) -> None:
    with keyed_client(filled, role="reader", users=["bob"]) as c:
        error_of(c.get("/v1/scopes", params={"user": "alice"}), 403)
        assert c.get("/v1/scopes").json()["user"] == "bob"  # bound to one user: implied


def test_sessions_newest_first_with_turns_and_speakers(client: TestClient) -> None:
    body = client.get("/v1/sessions", params={"user": "alice", "thread": "t1"}).json()
    assert [s["session_id"] for s in body["items"]] == ["s2", "s1"]
    s1 = body["items"][1]
    assert s1["turns"] == 2 and s1["speakers"] == ["alice", "assistant"]
    assert s1["surface"] == "chat" and s1["thread"] == "t1" and s1["first_time"] <= s1["last_time"]
    everything = client.get("/v1/sessions", params={"user": "alice"}).json()["items"]
    assert [(s["thread"], s["session_id"], s["surface"]) for s in everything] == [
        ("t2", "s9", "notebook"),
        ("t1", "s2", "chat"),
        ("t1", "s1", "chat"),
    ]


def test_sessions_page(client: TestClient) -> None:
    seen: list[str] = []
    cursor: str | None = None
    for _ in range(5):
        params: dict[str, Any] = {"user": "alice", "limit": 2}
        if cursor is not None:
            params["cursor"] = cursor
        body = client.get("/v1/sessions", params=params).json()
        seen += [s["session_id"] for s in body["items"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == ["s9", "s2", "s1"]


def test_session_turns_in_order(client: TestClient, filled: Memory) -> None:
    r = client.get("/v1/sessions/s1", params={"user": "alice", "thread": "t1"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["session_id"] == "s1"
    assert [t["text"] for t in body["turns"]] == ["I live in Hangzhou. 我住在杭州。", "Noted."]
    first = body["turns"][0]
    assert first["id"].startswith("ep_") and first["speaker"] == "alice"
    assert first["surface"] == "chat" and first["archived"] is False


def test_unknown_or_foreign_session_is_404(client: TestClient, filled: Memory) -> None:
    error_of(client.get("/v1/sessions/nope", params={"user": "alice"}), 404)
    # bob has a session s1 too: alice's thread t2 does not see it, nor bob's turn
    error_of(client.get("/v1/sessions/s1", params={"user": "alice", "thread": "t2"}), 404)
    body = client.get("/v1/sessions/s1", params={"user": "alice"}).json()
    assert "bob's secret turn" not in [t["text"] for t in body["turns"]]
    with keyed_client(filled, role="reader", users=["bob"]) as bob_only:
        error_of(bob_only.get("/v1/sessions/s1", params={"user": "alice"}), 403)


def test_session_id_with_a_slash(client: TestClient, filled: Memory) -> None:
    filled.remember([Turn("slashed", session_id="2026/01/01")], Scope("alice", "t3"))
    body = client.get("/v1/sessions/2026%2F01%2F01", params={"user": "alice"}).json()
    assert [t["text"] for t in body["turns"]] == ["slashed"]


def _facts(client: TestClient, **params: Any) -> list[dict[str, Any]]:
    r = client.get("/v1/facts", params={"user": "alice", **params})
    assert r.status_code == 200, r.text
    return list(r.json()["items"])


def test_facts_by_validity_with_what_replaced_them(
    client: TestClient, filled: Memory, clock: FixedClock
) -> None:
    scope = Scope("alice", "t1")
    old = filled.add_fact("Alice lives in Hangzhou", scope, category="personal", topic="home")
    clock.advance(hours=1)
    new = filled.add_fact("Alice lives in Beijing", scope, category="personal", topic="home")
    filled.update(old.id, scope, superseded_by=new.id, valid_to=clock.now())
    tea = filled.add_fact("Alice drinks tea", scope, category="preference", topic="drinks")

    assert [f["id"] for f in _facts(client)] == [new.id, tea.id]
    gone = _facts(client, valid="superseded")
    assert [f["id"] for f in gone] == [old.id]
    assert gone[0]["superseded_by"] == new.id
    assert gone[0]["superseded_by_text"] == "Alice lives in Beijing"
    assert gone[0]["valid_to"] is not None
    assert {f["id"] for f in _facts(client, valid="all")} == {old.id, new.id, tea.id}
    assert [f["id"] for f in _facts(client, category="preference")] == [tea.id]
    assert [f["id"] for f in _facts(client, topic="home", valid="all")] == [old.id, new.id]
    assert all(f["superseded_by_text"] is None for f in _facts(client))
    page1 = client.get("/v1/facts", params={"user": "alice", "valid": "all", "limit": 2}).json()
    page2 = client.get(
        "/v1/facts",
        params={"user": "alice", "valid": "all", "limit": 2, "cursor": page1["next_cursor"]},
    ).json()
    assert len(page1["items"]) == 2 and len(page2["items"]) == 1 and page2["next_cursor"] is None


def test_facts_bad_filters_are_422(client: TestClient) -> None:
    error_of(client.get("/v1/facts", params={"user": "alice", "valid": "maybe"}), 422)
    error_of(client.get("/v1/facts", params={"user": "alice", "category": "nope"}), 422)
    error_of(client.get("/v1/facts", params={"user": "alice", "cursor": "ep_x"}), 422)
    error_of(client.get("/v1/facts", params={"user": "alice", "colour": "red"}), 422)


def test_facts_of_another_user_are_not_shown(client: TestClient, filled: Memory) -> None:
    filled.add_fact("Bob likes chess", Scope("bob"))
    assert _facts(client) == []
    with keyed_client(filled, role="reader", users=["alice"]) as c:
        error_of(c.get("/v1/facts", params={"user": "bob"}), 403)


def test_reader_can_browse_but_not_write(filled: Memory) -> None:
    headers = key_headers(filled, "reader", ["alice"])
    with keyed_client(filled, headers=headers) as c:
        for url in ("/v1/me", "/v1/users", "/v1/scopes", "/v1/sessions", "/v1/facts"):
            assert c.get(url).status_code == 200, url


def _conflict(r: Any, item_id: str, expected: int, current: int) -> None:
    body = error_of(r, 409)
    assert body["error"] == "ConflictError"
    assert body["details"] == [
        {
            "type": "conflict",
            "item_id": item_id,
            "expected_version": expected,
            "current_version": current,
        }
    ]


def test_a_stale_fact_update_is_409_with_the_current_version(
    client: TestClient, filled: Memory
) -> None:
    fact = filled.add_fact("Alice lives in Hangzhou", Scope("alice", "t1"))
    url, params = f"/v1/items/{fact.id}", {"user": "alice"}
    first = client.patch(
        url, params=params, json={"changes": {"importance": 0.9}, "expected_version": 1}
    )
    assert first.status_code == 200 and first.json()["version"] == 2
    stale = {"changes": {"text": "Alice lives in Paris"}, "expected_version": 1}
    _conflict(client.patch(url, params=params, json=stale), fact.id, 1, 2)
    assert client.get(url, params=params).json()["text"] == "Alice lives in Hangzhou"


def test_a_stale_document_apply_is_409_with_the_current_version(
    client: TestClient, filled: Memory
) -> None:
    [ep] = filled.remember(["I like oolong tea"], Scope("alice"))
    markdown = f"# tea\n## Drinks\n- Alice likes oolong tea [^1]\n---\n[^1]: chat:{ep.id}\n"
    url, params = "/v1/docs/tea/apply", {"user": "alice"}
    made = client.post(url, params=params, json={"markdown": markdown, "expected_version": 0})
    assert made.status_code == 200, made.text
    assert made.json()["version"] == 1
    edited = markdown.replace("oolong", "green")
    again = client.post(url, params=params, json={"markdown": edited, "expected_version": 1})
    assert again.status_code == 200 and again.json()["version"] == 2
    stale = markdown.replace("oolong", "black")
    _conflict(
        client.post(url, params=params, json={"markdown": stale, "expected_version": 1}),
        "tea",
        1,
        2,
    )
    shown = client.get("/v1/docs/tea", params=params).json()
    assert (
        shown["version"] == 2
        and "green tea" in shown["markdown"]
        and "black" not in shown["markdown"]
    )


def test_stats_has_text_bytes_per_kind(
    client: TestClient, filled: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    filled.add_fact("Alice lives in 杭州", Scope("alice", "t1"), category="personal")
    body = client.get("/v1/stats", params={"user": "alice"}).json()
    texts = [e.text for e in filled.store.iter_episodes(Scope("alice"))]
    assert body["bytes"]["episode"] == sum(len(t.encode("utf-8")) for t in texts)
    assert body["bytes"]["fact"] == len("Alice lives in 杭州".encode())  # a CJK char is 3 bytes
    assert body["bytes"]["total"] == body["bytes"]["episode"] + body["bytes"]["fact"]
    thread = client.get("/v1/stats", params={"user": "alice", "thread": "t2"}).json()
    assert thread["bytes"]["episode"] == len(b"Tea, not coffee.") and thread["bytes"]["fact"] == 0
    filled.consolidate(Scope("alice", "t1"))
    stored = filled.sizes(Scope("alice"))
    assert stored.get("topic", 0) > 0
    import memstrata.api.records as records

    monkeypatch.setattr(records, "SizingStore", type("NoSizes", (), {}))  # read the records
    assert filled.sizes(Scope("alice")) == stored


def test_summaries_counted_in_place_equal_the_records_read(
    filled: Memory, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    mixed = Scope("alice", "t1")
    clock.advance(minutes=5)
    filled.remember(
        [Turn("from a notebook", speaker="", session_id="s1")], mixed, surface="notebook"
    )
    filled.remember([Turn("an agent's turn", session_id="a1")], Scope("alice", "t1", "helper"))
    filled.add_fact("Alice drinks tea", Scope("alice", "t2"))
    filled.consolidate(Scope("alice"))
    [old] = filled.list(mixed, "episode", limit=1)
    filled.store.archive_episodes(mixed, [old.id])
    scopes = filled.scopes("alice")
    sessions = {name: filled.sessions(Scope(*name)) for name in (("alice",), ("alice", "t1"))}
    s1 = next(s for s in sessions[("alice", "t1")] if s.session_id == "s1" and s.agent is None)
    assert s1.surfaces == ("chat", "notebook") and s1.turns == 3
    assert s1.speakers == ("alice", "assistant")  # an empty speaker is no speaker
    assert {(s.thread, s.agent) for s in scopes} >= {("t1", None), ("t1", "helper"), ("t2", None)}
    import memstrata.api.browse as browse

    monkeypatch.setattr(browse, "SummarizingStore", type("NoSummaries", (), {}))
    assert filled.scopes("alice") == scopes
    assert {n: filled.sessions(Scope(*n)) for n in sessions} == sessions
