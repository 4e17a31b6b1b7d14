"""The MCP server through the SDK's own client: in process, and over streamable HTTP against a
real uvicorn serving the HTTP app (``/mcp`` beside the routes, same memory)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.model import Scope
from memstrata.server.mcp import TOOLS, create_mcp_server, fixed_scope
from memstrata.server.schemas import FactFieldsIn, SearchIn, TurnsIn, WakeUpIn
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.keyed import key_headers, keyed_app, keyed_client

ALICE = Scope("alice")


@pytest.fixture
def mem(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    settings = load_settings(data_dir=data_dir)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder()) as m:
        yield m


def run(coro: Any) -> Any:
    return anyio.run(lambda: coro)


@asynccontextmanager
async def client(memory: Memory, scope: Scope = ALICE) -> AsyncIterator[Client]:
    async with Client(create_mcp_server(memory, fixed_scope(scope))) as c:
        yield c


async def call(c: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await c.call_tool(tool, args)
    assert not result.is_error, result.structured_content
    data: dict[str, Any] = result.structured_content
    return data


async def refused(c: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await c.call_tool(tool, args)
    assert result.is_error
    data: dict[str, Any] = result.structured_content
    assert result.content[0].type == "text" and f'"{data["error"]}"' in result.content[0].text
    return data


def test_tools_have_descriptions_saying_when_and_schemas_of_the_shared_models(
    mem: Memory,
) -> None:
    async def go() -> None:
        async with client(mem) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            assert list(listed) == [
                "wake_up",
                "search",
                "recall",
                "context",
                "remember",
                "remember_fact",
                "forget",
                "doc_show",
                "doc_propose",
                "doc_apply",
            ]
            for name, model in (
                ("search", SearchIn),
                ("remember", TurnsIn),
                ("remember_fact", FactFieldsIn),
                ("wake_up", WakeUpIn),
            ):
                spec = next(t for t in TOOLS if t.name == name)
                assert issubclass(spec.input, model)  # the shared model, or it made strict
                assert listed[name].input_schema == spec.input.model_json_schema()
                assert set(listed[name].input_schema["properties"]) == set(model.model_fields)
            for spec in TOOLS:
                tool = listed[spec.name]
                assert tool.output_schema == spec.output.model_json_schema()
                assert "Call it" in (tool.description or "")
                assert tool.annotations is not None
                assert tool.annotations.read_only_hint is (not spec.writes)
            assert "start of every session" in (listed["wake_up"].description or "")
            assert "preference" in (listed["remember_fact"].description or "")
            assert "user" not in listed["search"].input_schema["properties"]
            assert "wake_up" in (c.instructions or "")

    run(go())


def test_remember_search_fact_wake_up_recall_context(mem: Memory) -> None:
    async def go() -> None:
        async with client(mem) as c:
            out = await call(
                c,
                "remember",
                {
                    "turns": [
                        {
                            "text": "I went hiking at Wutong mountain last weekend",
                            "speaker": "alice",
                        },
                        {"text": "周末我去梧桐山徒步了", "speaker": "alice"},
                    ],
                    "session_id": "s1",
                },
            )
            episodes = out["episodes"]
            assert [e["session_id"] for e in episodes] == ["s1", "s1"]
            assert all(e["scope"] == {"user": "alice"} for e in episodes)
            hits = (await call(c, "search", {"q": "hiking", "k": 5}))["items"]
            assert hits and hits[0]["id"] in {e["id"] for e in episodes}
            assert {"lexical", "dense", "fused"} <= set(hits[0]["components"])
            fact = await call(
                c,
                "remember_fact",
                {"text": "Prefers short answers, code first", "category": "preference"},
            )
            assert fact["category"] == "preference" and len(fact["sources"]) == 1
            woken = await call(c, "wake_up", {"budget": 400})
            assert "Prefers short answers" in woken["text"] and fact["id"] in woken["facts"]
            assert woken["text"].startswith("<memory>") and woken["budget"] == 400
            recalled = await call(c, "recall", {"topic": "hiking"})
            assert recalled["topic"] == "hiking" and recalled["budget"] == 1200
            ctx = await call(c, "context", {"q": "how do I like my answers?", "explain": True})
            assert "Prefers short answers" in ctx["text"]
            assert any(e["included"] and e["id"] == fact["id"] for e in ctx["explain"])
            assert (await call(c, "context", {"q": "hi"}))["explain"] is None

    run(go())
    # what the tools wrote is in the memory, in alice's scope only
    assert mem.stats("alice").facts_current == 1
    assert mem.stats("bob").episodes == 0


def test_search_pages_by_cursor_as_the_http_route_does(mem: Memory) -> None:
    mem.remember([f"kite flying day {n}" for n in range(5)], "alice")

    async def go() -> None:
        async with client(mem) as c:
            first = await call(c, "search", {"q": "kite flying", "k": 2})
            assert len(first["items"]) == 2 and first["next_cursor"] == "2"
            second = await call(c, "search", {"q": "kite flying", "k": 2, "cursor": "2"})
            last = await call(c, "search", {"q": "kite flying", "k": 2, "cursor": "4"})
            assert len(last["items"]) == 1 and last["next_cursor"] is None
            ids = [h["id"] for page in (first, second, last) for h in page["items"]]
            assert len(set(ids)) == 5

    run(go())


def test_forget_an_item_and_a_thread(mem: Memory) -> None:
    keep = mem.remember(["I live in Hangzhou"], "alice")[0]
    gone = mem.remember(["my old password hint is a cat"], "alice")[0]
    mem.remember(["thread talk about the puppy"], Scope("alice", "t1"))

    async def go() -> None:
        async with client(mem) as c:
            report = await call(c, "forget", {"item_id": gone.id})
            assert report["deleted"] == [gone.id] and report["counts"]["episodes"] == 1
            report = await call(c, "forget", {"thread": "t1"})
            assert report["counts"]["episodes"] == 1
            both = await refused(c, "forget", {"item_id": keep.id, "thread": "t1"})
            assert (
                both["error"] == "InvalidInputError"
                and "either item_id or thread" in (both["message"])
            )
        async with client(mem, Scope("alice", "t2")) as c:
            other = await refused(c, "forget", {"thread": "t3"})
            assert other["error"] == "InvalidInputError" and "'t2'" in other["message"]

    run(go())
    assert [e.id for e in mem.list("alice", "episode")] == [keep.id]


def test_documents_show_propose_apply_and_a_stale_version(mem: Memory) -> None:
    ep = mem.remember(["I prefer tea over coffee"], "alice")[0]
    markdown = f"# Essentials\n\n## Preferences\n- Prefers tea [^1]\n\n---\n[^1]: chat:{ep.id}\n"
    preview = mem.preview_doc("essentials", "alice", markdown)
    mem.apply_doc("essentials", "alice", preview.operations, expected_version=0)

    async def go() -> None:
        async with client(mem) as c:
            shown = await call(c, "doc_show", {"key": "essentials"})
            assert shown["version"] == 1 and "- Prefers tea" in shown["markdown"]
            edited = shown["markdown"].replace("Prefers tea", "Prefers green tea")
            preview = await call(c, "doc_propose", {"key": "essentials", "markdown": edited})
            assert [op["op"] for op in preview["operations"]] == ["edit"]
            assert "+- Prefers green tea" in preview["diff"]
            assert mem.doc_markdown("essentials", "alice")[1] == 1  # nothing written
            applied = await call(
                c,
                "doc_apply",
                {"key": "essentials", "markdown": edited, "expected_version": 1},
            )
            assert applied["version"] == 2 and "Prefers green tea" in applied["after"]
            stale = await refused(
                c, "doc_apply", {"key": "essentials", "markdown": edited, "expected_version": 1}
            )
            assert stale["error"] == "ConflictError"
            missing = await refused(c, "doc_apply", {"key": "essentials", "markdown": edited})
            assert missing["error"] == "InvalidInputError"
            assert missing["details"][0]["loc"] == ["arguments", "expected_version"]
            text = (await c.read_resource("memstrata://essentials")).contents[0]
            assert text.mime_type == "text/markdown" and "Prefers green tea" in text.text  # type: ignore[union-attr]

    run(go())


def test_errors_are_the_http_error_shape(mem: Memory) -> None:
    missing = "ep_01J0000000000000000000000A"
    with keyed_client(mem) as http:
        over_http = http.post(f"/v1/items/{missing}/forget", params={"user": "alice"})
        assert over_http.status_code == 404

    async def go() -> None:
        async with client(mem) as c:
            assert await refused(c, "forget", {"item_id": missing}) == over_http.json()
            bad = await refused(c, "search", {"q": "tea", "k": 0, "granularity": "page"})
            assert bad["error"] == "InvalidInputError"
            assert {tuple(d["loc"]) for d in bad["details"]} == {
                ("arguments", "k"),
                ("arguments", "granularity"),
            }
            unknown = await refused(c, "wake_up", {"budget": 800, "user": "bob"})
            assert unknown["details"][0]["type"] == "extra_forbidden"
            surrogate = await refused(c, "remember", {"turns": [{"text": "\ud800"}]})
            assert "not valid Unicode" in surrogate["message"]
            with pytest.raises(MCPError, match="unknown tool"):
                await c.call_tool("drop_everything", {})
            with pytest.raises(MCPError, match="no resource"):
                await c.read_resource("memstrata://profile")

    run(go())


def test_an_unexpected_failure_says_nothing_of_its_cause(
    mem: Memory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(mem, "wake_up", broken)

    async def go() -> None:
        async with client(mem) as c:
            out = await refused(c, "wake_up", {})
            assert out == {
                "error": "InternalError",
                "message": "internal error; the server log has details",
            }

    run(go())
    assert "secret internals" in caplog.text


def test_resources_are_the_users_identity_and_essentials(mem: Memory) -> None:
    mem.set_identity("I am Alice's assistant. 我是助手。", "alice")
    mem.set_identity("Bob's own words", "bob")

    async def go() -> None:
        async with client(mem) as c:
            listed = {r.uri: r for r in (await c.list_resources()).resources}
            assert set(listed) == {"memstrata://identity", "memstrata://essentials"}
            identity = (await c.read_resource("memstrata://identity")).contents[0]
            assert identity.text == "I am Alice's assistant. 我是助手。"  # type: ignore[union-attr]
            essentials = (await c.read_resource("memstrata://essentials")).contents[0]
            assert essentials.text.startswith("# Essentials")  # type: ignore[union-attr]

    run(go())


# --- over streamable HTTP, mounted on the HTTP server -----------------------------------------


@pytest.fixture
def served(mem: Memory) -> Iterator[str]:
    """The HTTP app (routes and /mcp) served by uvicorn on a loopback port of its own (port 0:
    no other process can be given it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(keyed_app(mem), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@asynccontextmanager
async def http_client(url: str, mode: str = "auto", **headers: str) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode) as c,
    ):
        yield c


def test_over_http_a_handshake_era_client_is_served_too(served: str, mem: Memory) -> None:
    dan = key_headers(mem, "writer", ["dan"])

    async def go() -> None:
        async with http_client(served, "legacy", **dan) as c:
            assert c.protocol_version.startswith("2025-")
            await call(c, "remember_fact", {"text": "Prefers tabs", "category": "preference"})
            assert "Prefers tabs" in (await call(c, "wake_up", {}))["text"]
            identity = (await c.read_resource("memstrata://identity")).contents[0]
            assert identity.text == ""  # type: ignore[union-attr]

    run(go())


def test_over_http_each_key_sees_only_its_users_memory(served: str, mem: Memory) -> None:
    bob_key = key_headers(mem, "writer", ["bob"])
    carol_key = key_headers(mem, "reader", ["carol"])
    admin_key = key_headers(mem, "admin")

    async def go() -> None:
        async with http_client(served, **bob_key) as bob:
            assert len((await bob.list_tools()).tools) == len(TOOLS)
            await call(bob, "remember", {"turns": [{"text": "Bob drinks oolong tea"}]})
            await call(bob, "remember_fact", {"text": "Prefers oolong", "category": "preference"})
            hits = (await call(bob, "search", {"q": "oolong tea"}))["items"]
            assert hits and all(h["scope"]["user"] == "bob" for h in hits)
            assert "Prefers oolong" in (await call(bob, "wake_up", {}))["text"]
        async with http_client(served, **carol_key) as carol:
            assert (await call(carol, "search", {"q": "oolong tea"}))["items"] == []
            assert "oolong" not in (await call(carol, "wake_up", {}))["text"]
            denied = await refused(carol, "remember", {"turns": [{"text": "a reader writes"}]})
            assert denied["error"] == "ForbiddenError" and "writer" in denied["message"]
        async with http_client(
            served, **admin_key, **{"X-Memstrata-User": "bob", "X-Memstrata-Thread": "t1"}
        ) as admin:
            ep = (await call(admin, "remember", {"turns": [{"text": "in a thread"}]}))["episodes"][
                0
            ]
            assert ep["scope"] == {"user": "bob", "thread": "t1"}

    run(go())
    # the same memory the HTTP routes serve
    assert mem.stats("bob").episodes == 3 and mem.stats("carol").episodes == 0


def test_over_http_concurrent_clients_each_in_their_own_scope(served: str, mem: Memory) -> None:
    users = [f"user{i}" for i in range(6)]
    keys = {user: key_headers(mem, "writer", [user]) for user in users}

    async def one(user: str) -> None:
        async with http_client(served, **keys[user]) as c:
            for n in range(3):
                await call(c, "remember", {"turns": [{"text": f"{user} note {n} about kites"}]})
                hits = (await call(c, "search", {"q": "kites", "k": 10}))["items"]
                assert {h["scope"]["user"] for h in hits} == {user}
                assert len(hits) == n + 1

    async def go() -> None:
        async with anyio.create_task_group() as tg:
            for user in users:
                tg.start_soon(one, user)

    run(go())
    assert [mem.stats(u).episodes for u in users] == [3] * len(users)


def test_over_http_a_request_the_key_does_not_allow_is_refused_in_the_one_shape(
    served: str, mem: Memory
) -> None:
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    accept = {"Accept": "application/json, text/event-stream"}
    bob_key = key_headers(mem, "writer", ["bob"])
    bob_id = mem.keys.list()[-1].id
    admin_key = key_headers(mem, "admin")

    async def go() -> None:
        async with httpx2.AsyncClient(headers=accept) as http:
            r = await http.post(f"{served}/mcp", json=listing)
            assert r.status_code == 401 and r.json()["error"] == "UnauthenticatedError"
            r = await http.post(
                f"{served}/mcp", json=listing, headers={**bob_key, "X-Memstrata-User": "carol"}
            )
            assert r.status_code == 403 and r.json() == {
                "error": "ForbiddenError",
                "message": f"the key {bob_id} does not serve the user 'carol'",
            }
            r = await http.post(f"{served}/mcp", json=listing, headers=admin_key)
            assert r.status_code == 422 and r.json()["error"] == "InvalidInputError"
            assert "name the user" in r.json()["message"]
            mem.keys.revoke(bob_id)
            r = await http.post(f"{served}/mcp", json=listing, headers=bob_key)
            assert r.status_code == 401 and "revoked" in r.json()["message"]

    run(go())


def test_over_http_a_foreign_host_or_origin_is_refused_in_the_one_shape(
    served: str, mem: Memory
) -> None:
    """A keyed server bound to the loopback refuses a page that rebinds its DNS name, in the
    same error shape as every other refusal (the SDK's own check answers plain text)."""
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {
        "Accept": "application/json, text/event-stream",
        **key_headers(mem, "writer", ["bob"]),
    }

    async def go() -> None:
        async with httpx2.AsyncClient(headers=headers) as http:
            for extra in ({"Host": "evil.example"}, {"Origin": "http://evil.example"}):
                r = await http.post(f"{served}/mcp", json=listing, headers=extra)
                assert r.status_code == 403, r.text
                assert r.json()["error"] == "ForbiddenError"
                assert "MCP on the loopback" in r.json()["message"]
            r = await http.post(f"{served}/mcp", json=listing, headers={"Origin": served})
            assert r.status_code == 200, r.text

    run(go())


def test_the_app_lifespan_runs_the_mcp_session_manager(mem: Memory) -> None:
    with keyed_client(mem, users=["alice"], base_url="http://127.0.0.1") as http:
        r = http.post(  # the client runs the app's lifespan
            "/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
            headers={
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2025-11-25",
            },
        )
    assert r.status_code == 200, r.text
    assert r.json()["result"]["tools"][0]["name"] == "wake_up"


def test_mcp_answers_503_in_the_one_shape_when_the_app_was_not_started(mem: Memory) -> None:
    http = keyed_client(mem, users=["alice"], base_url="http://127.0.0.1")  # no lifespan run
    r = http.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    )
    assert r.status_code == 503 and r.json()["error"] == "InternalError"


def test_remember_fact_takes_when_and_slot_and_answers_them(mem: Memory) -> None:
    async def go() -> None:
        async with client(mem) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            schema = listed["remember_fact"].input_schema
            assert {"when", "slot"} <= set(schema["properties"])
            assert "slot" in (listed["remember_fact"].description or "")
            fact = await call(
                c,
                "remember_fact",
                {
                    "text": "Is allergic to shrimp 对虾过敏",
                    "category": "health",
                    "slot": "allergy:shrimp",
                    "when": {"text": "since last May", "start": "2025-05-01", "end": "2025-06-01"},
                },
            )
            assert fact["slot"] == "allergy:shrimp" and fact["category"] == "health"
            assert fact["when"] == {
                "text": "since last May",
                "start": "2025-05-01T00:00:00.000000Z",
                "end": "2025-06-01T00:00:00.000000Z",
            }
            plain = await call(c, "remember_fact", {"text": "Prefers tea"})
            assert plain["when"] is None and plain["slot"] is None
            backwards = {"start": "2025-06-01", "end": "2025-05-01"}
            error = await refused(c, "remember_fact", {"text": "x", "when": backwards})
            assert error["error"] == "InvalidInputError"
            error = await refused(c, "remember_fact", {"text": "x", "slot": "s" * 10_000})
            assert error["error"] == "InvalidInputError"

    run(go())
    [stored] = [f for f in mem.list("alice", "fact") if f.slot is not None]
    assert stored.slot == "allergy:shrimp" and stored.when is not None
    assert stored.when.text == "since last May"
