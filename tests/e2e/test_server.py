"""The HTTP server: health, the first /v1 routes, error mapping, and `memstrata serve`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import TooLargeError
from memstrata.server.errors import status_for
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.keyed import keyed_client
from tests.ports import free_port


def test_healthz(client: TestClient) -> None:
    body = client.get("/healthz").json()
    assert body["status"] == "ok" and "0001_initial" in body["migrations"]


def test_remember_get_update_history_delete(client: TestClient) -> None:
    scope = {"user": "alice", "thread": "t1"}
    r = client.post(
        "/v1/remember",
        json={
            "scope": scope,
            "turns": [{"text": "I moved to Hangzhou. 我搬到杭州了。", "speaker": "alice"}],
        },
    )
    assert r.status_code == 201
    ep = r.json()[0]
    fact = client.post(
        "/v1/facts",
        json={
            "scope": scope,
            "text": "Alice lives in Hangzhou",
            "category": "personal",
            "sources": [ep["id"]],
        },
    ).json()
    params = {"user": "alice", "thread": "t1"}
    assert client.get(f"/v1/items/{ep['id']}", params=params).json()["text"] == ep["text"]
    r = client.patch(
        f"/v1/items/{fact['id']}",
        params=params,
        json={"changes": {"importance": 0.9}, "expected_version": 1},
    )
    assert r.status_code == 200 and r.json()["version"] == 2
    r = client.patch(
        f"/v1/items/{fact['id']}",
        params=params,
        json={"changes": {"importance": 0.1}, "expected_version": 1},
    )
    assert r.status_code == 409 and r.json()["error"] == "ConflictError"
    hist = client.get(f"/v1/items/{fact['id']}/history", params=params).json()["items"]
    assert [h["op"] for h in hist] == ["create", "update"]
    assert client.get("/v1/stats", params={"user": "alice"}).json()["facts_current"] == 1
    listed = client.get("/v1/list", params={"user": "alice", "kind": "fact"}).json()["items"]
    assert [f["id"] for f in listed] == [fact["id"]]
    r = client.delete(f"/v1/items/{ep['id']}", params=params)
    assert (r.json()["deleted"], r.json()["cascaded"]) == ([ep["id"]], [fact["id"]])
    assert r.json()["counts"]["facts"] == 1
    assert client.get(f"/v1/items/{ep['id']}", params=params).status_code == 404


def test_scopes_are_isolated(client: TestClient) -> None:
    ep = client.post(
        "/v1/remember", json={"scope": {"user": "alice"}, "turns": [{"text": "secret"}]}
    ).json()[0]
    r = client.get(f"/v1/items/{ep['id']}", params={"user": "mallory"})
    assert r.status_code == 404


def test_bad_input_is_422(client: TestClient) -> None:
    assert (
        client.post("/v1/remember", json={"scope": {"user": "a"}, "turns": []}).status_code == 422
    )
    r = client.post("/v1/remember", json={"scope": {"user": "a"}, "turns": [{"text": "  "}]})
    assert r.status_code == 422 and "empty" in r.json()["message"]
    assert client.get("/v1/items/bogus", params={"user": "a"}).status_code == 422


def test_serve_loads_the_sample_and_answers_healthz(tmp_path: Path) -> None:
    port = free_port()
    exe = Path(sys.executable).with_name("memstrata")
    env = {**os.environ, "MEMSTRATA_DATA_DIR": str(tmp_path / "d")}
    log = tmp_path / "serve.log"
    with log.open("wb") as log_fh:
        proc = subprocess.Popen(
            [str(exe), "serve", "--port", str(port)],
            env=env,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 60
        body = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as r:
                    body = json.loads(r.read())
                    break
            except OSError:
                if proc.poll() is not None:
                    raise AssertionError(log.read_text()) from None
                time.sleep(0.2)
        assert body is not None and body["status"] == "ok"
        url = f"http://127.0.0.1:{port}/v1/stats?user=demo"
        with pytest.raises(urllib.error.HTTPError) as refused:  # no key: 401, one shape
            urllib.request.urlopen(url, timeout=5)
        assert refused.value.code == 401
        assert json.loads(refused.value.read())["error"] == "UnauthenticatedError"
        key_file = tmp_path / "d" / "admin.key"  # the first start wrote an admin key
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
        secret = key_file.read_text(encoding="ascii").strip()
        keyed = urllib.request.Request(url, headers={"Authorization": f"Bearer {secret}"})
        with urllib.request.urlopen(keyed, timeout=5) as r:
            assert json.loads(r.read())["episodes"] >= 10
        logged = log.read_text()
        assert "loaded the sample memory" in logged
        assert str(key_file) in logged and secret not in logged  # where, never the key
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_search_route(data_dir: Path) -> None:
    from memstrata.embed.fake import HashingEmbedder
    from memstrata.settings import load_settings

    with (
        Memory.open(settings=load_settings(data_dir=data_dir), embedder=HashingEmbedder()) as mem,
        keyed_client(mem) as client,
    ):
        client.post(
            "/v1/remember",
            json={
                "scope": {"user": "alice"},
                "turns": [
                    {"text": "周末去梧桐山徒步", "session_id": "s1"},
                    {"text": "quarterly report due", "session_id": "s2"},
                ],
            },
        )
        hits = client.get("/v1/search", params={"q": "梧桐山", "user": "alice", "k": 1}).json()[
            "items"
        ]
        assert hits[0]["text"].endswith("周末去梧桐山徒步") and hits[0]["session_id"] == "s1"
        assert client.get("/v1/search", params={"q": "梧桐山", "user": "bob"}).json()["items"] == []
        bad = client.get("/v1/search", params={"q": "x", "user": "alice", "category": "zzz"})
        assert bad.status_code == 422
        mem.add_fact("Alice hikes Wutong mountain on weekends", "alice", topic="hiking")
        mem.consolidate("alice")
        params = {"q": "Wutong", "user": "alice", "granularity": "topic", "layer": "L2"}
        topics = client.get("/v1/search", params=params).json()["items"]
        assert topics[0]["topic"] == "hiking" and topics[0]["bullets"]
        wrong = client.get("/v1/search", params={**params, "layer": "L3"})
        assert wrong.status_code == 422 and "granularity topic" in wrong.text
        assert (
            client.get(
                "/v1/search", params={"q": "x", "user": "alice", "granularity": "page"}
            ).status_code
            == 422
        )


def test_document_routes(client: TestClient) -> None:
    ep = client.post(
        "/v1/remember", json={"scope": {"user": "alice"}, "turns": [{"text": "I love green tea"}]}
    ).json()[0]
    ops = [
        {
            "op": "add",
            "section": "Preferences",
            "text": "Likes green tea",
            "citations": [f"chat:{ep['id']}"],
        }
    ]
    params = {"user": "alice"}
    preview = client.post(
        "/v1/docs/essentials/diff", params=params, json={"operations": ops}
    ).json()
    assert preview["base_version"] == 0 and "+- Likes green tea" in preview["diff"]
    assert client.get("/v1/docs/essentials", params=params).json()["version"] == 0
    no_version = client.post("/v1/docs/essentials/apply", params=params, json={"operations": ops})
    assert no_version.status_code == 422
    applied = client.post(
        "/v1/docs/essentials/apply", params=params, json={"operations": ops, "expected_version": 0}
    ).json()
    assert applied["version"] == 1
    shown = client.get("/v1/docs/essentials", params=params).json()
    edited = shown["markdown"].replace("Likes green tea", "Likes oolong")
    stale = client.post(
        "/v1/docs/essentials/apply", params=params, json={"markdown": edited, "expected_version": 0}
    )
    assert stale.status_code == 409
    ok = client.post(
        "/v1/docs/essentials/apply", params=params, json={"markdown": edited, "expected_version": 1}
    )
    assert ok.json()["version"] == 2
    both = client.post(
        "/v1/docs/essentials/diff", params=params, json={"markdown": edited, "operations": ops}
    )
    assert both.status_code == 422
    bad = client.post("/v1/docs/essentials/diff", params=params, json={"markdown": "no title here"})
    assert bad.status_code == 422 and "line 1" in bad.json()["message"]


# bad input: every error in one shape, never a 5xx -------------------------------------


@pytest.fixture
def fast_memory(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    settings = load_settings(data_dir=data_dir, max_request_bytes=64_000)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder()) as mem:
        yield mem


@pytest.fixture
def fast(fast_memory: Memory) -> Iterator[TestClient]:
    """A client over a memory with the hashing embedder; server errors come back as 500s."""
    with keyed_client(fast_memory, raise_server_exceptions=False) as c:
        yield c


def assert_error(r: object, status: int, error: str | None = None) -> dict[str, object]:
    """The one error shape: ``error`` (a class name), ``message``, optional ``details``."""
    from httpx2 import Response

    assert isinstance(r, Response)
    assert r.status_code == status, r.text
    body = r.json()
    assert isinstance(body, dict) and set(body) <= {"error", "message", "details"}, body
    assert isinstance(body["error"], str) and isinstance(body["message"], str), body
    assert "Traceback" not in r.text
    if error is not None:
        assert body["error"] == error, body
    return body


def _raw(client: TestClient, method: str, url: str, body: str, **params: str) -> object:
    return client.request(
        method, url, params=params, content=body, headers={"content-type": "application/json"}
    )


LONE = "\\ud800"  # a lone surrogate as JSON writes it


def test_lone_surrogates_in_any_text_field_are_422(fast: TestClient) -> None:
    ep = fast.post("/v1/remember", json={"scope": {"user": "a"}, "turns": [{"text": "tea"}]})
    ep_id = ep.json()[0]["id"]
    fact = fast.post("/v1/facts", json={"scope": {"user": "a"}, "text": "Likes tea"}).json()
    bodies = [
        ("POST", "/v1/remember", f'{{"scope": {{"user": "{LONE}"}}, "turns": [{{"text": "x"}}]}}'),
        (
            "POST",
            "/v1/remember",
            f'{{"scope": {{"user": "a", "thread": "{LONE}"}}, "turns": [{{"text": "x"}}]}}',
        ),
        ("POST", "/v1/remember", f'{{"scope": {{"user": "a"}}, "turns": [{{"text": "{LONE}"}}]}}'),
        (
            "POST",
            "/v1/remember",
            f'{{"scope": {{"user": "a"}}, "turns": [{{"text": "x", "speaker": "{LONE}"}}]}}',
        ),
        (
            "POST",
            "/v1/remember",
            '{"scope": {"user": "a"}, '
            f'"turns": [{{"text": "x", "metadata": {{"k": ["{LONE}"]}}}}]}}',
        ),
        (
            "POST",
            "/v1/remember",
            '{"scope": {"user": "a"}, '
            f'"turns": [{{"text": "x", "metadata": {{"{LONE}": 1}}}}]}}',
        ),
        (
            "POST",
            "/v1/remember",
            f'{{"scope": {{"user": "a"}}, "surface": "{LONE}", "turns": [{{"text": "x"}}]}}',
        ),
        ("POST", "/v1/facts", f'{{"scope": {{"user": "a"}}, "text": "{LONE}"}}'),
        ("POST", "/v1/facts", f'{{"scope": {{"user": "a"}}, "text": "x", "topic": "{LONE}"}}'),
        ("PATCH", f"/v1/items/{fact['id']}", f'{{"changes": {{"text": "{LONE}"}}}}'),
        ("POST", "/v1/docs/essentials/diff", f'{{"markdown": "# Essentials\\n- {LONE}"}}'),
        (
            "POST",
            "/v1/docs/essentials/apply",
            '{"expected_version": 0, "operations": '
            f'[{{"op": "add", "section": "S", "text": "{LONE}"}}]}}',
        ),
    ]
    for method, url, body in bodies:
        assert_error(_raw(fast, method, url, body, user="a"), 422, "InvalidInputError")
    r = _raw(fast, "POST", "/v1/remember", bodies[4][2])
    assert "turns.0.metadata.k.0 is not valid Unicode" in assert_error(r, 422)["message"]
    stats = fast.get("/v1/stats", params={"user": "a"}).json()
    assert stats["episodes"] == 2 and stats["facts_current"] == 1  # the turn, the fact's own
    assert fast.get(f"/v1/items/{ep_id}", params={"user": "a"}).json()["text"] == "tea"


def test_non_finite_numbers_and_unparseable_bodies_are_422(fast: TestClient) -> None:
    for number in ("NaN", "Infinity", "-Infinity"):
        body = '{"scope": {"user": "a"}, "turns": [{"text": "x", "metadata": {"n": %s}}]}'
        r = _raw(fast, "POST", "/v1/remember", body % number)
        assert "finite" in assert_error(r, 422, "InvalidInputError")["message"]
    huge = '{"scope": {"user": "a"}, "turns": [{"text": "x", "metadata": {"n": %s}}]}'
    assert_error(_raw(fast, "POST", "/v1/remember", huge % ("9" * 5000)), 422)
    assert fast.get("/v1/stats", params={"user": "a"}).json()["episodes"] == 0


def test_deeply_nested_bodies_are_422_and_nothing_is_stored(fast: TestClient) -> None:
    deep = '{"scope": {"user": "a"}, "turns": [{"text": "x", "metadata": {"m": %s}}]}'
    nested = "[" * 500 + "]" * 500
    r = _raw(fast, "POST", "/v1/remember", deep % nested)
    assert "nest" in assert_error(r, 422, "InvalidInputError")["message"]
    assert fast.get("/v1/list", params={"user": "a"}).json()["items"] == []
    ok = _raw(fast, "POST", "/v1/remember", deep % ("[" * 20 + "]" * 20))
    assert ok.status_code == 201
    assert len(fast.get("/v1/list", params={"user": "a"}).json()["items"]) == 1


def test_a_turn_from_any_year_leaves_the_scope_readable(fast: TestClient) -> None:
    turn = {"text": "an old note", "time": "0828-01-08T02:08:33Z"}
    r = fast.post("/v1/remember", json={"scope": {"user": "a"}, "turns": [turn]})
    assert r.status_code == 201 and r.json()[0]["time"] == "0828-01-08T02:08:33.000000Z"
    assert fast.get("/v1/stats", params={"user": "a"}).json()["episodes"] == 1
    [listed] = fast.get("/v1/list", params={"user": "a"}).json()["items"]
    assert listed["time"] == "0828-01-08T02:08:33.000000Z"


def test_document_operations_are_typed(fast: TestClient) -> None:
    params = {"user": "a"}
    for op in (
        {"op": "rename", "id": "m_x"},
        {"op": "add", "text": 5},
        {"op": "add", "x": 1},
        {"op": "add", "text": "no section"},
        {"op": "delete", "id": "m_01JD3M8V4Q5R6S7T8V9W0X1Y2Z"},  # no reason
        {"op": "edit", "id": "ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z", "text": "not a bullet"},
        {"op": "add", "section": "S", "text": "x", "citations": ["no-surface"]},
    ):
        body = {"operations": [op], "expected_version": 0}
        r = fast.post("/v1/docs/essentials/diff", params=params, json=body)
        assert assert_error(r, 422, "InvalidInputError")["details"], op
    spec = fast.get("/openapi.json").json()["components"]["schemas"]
    body = spec["DocChangeIn"]["properties"]["operations"]["anyOf"][0]["items"]
    assert set(body["discriminator"]["mapping"]) == {"add", "edit", "delete", "move"}
    assert spec["DeleteIn"]["required"] == ["op", "id", "reason"]


def test_patch_refuses_fields_that_are_not_changes(fast: TestClient) -> None:
    fact = fast.post("/v1/facts", json={"scope": {"user": "a"}, "text": "Likes tea"}).json()
    url = f"/v1/items/{fact['id']}"
    for name in ("scope", "item_id", "expected_version", "version", "id"):
        r = fast.patch(url, params={"user": "a"}, json={"changes": {name: "x"}})
        assert name in str(assert_error(r, 422, "InvalidInputError"))
    assert fast.get(url, params={"user": "a"}).json()["version"] == 1


def test_patch_stores_validity_times_and_refuses_bad_ones(fast: TestClient) -> None:
    fact = fast.post("/v1/facts", json={"scope": {"user": "a"}, "text": "Likes tea"}).json()
    url, params = f"/v1/items/{fact['id']}", {"user": "a"}
    changes = {"valid_from": "2025-03-01T08:00:00+08:00", "valid_to": "2025-06-01T00:00:00Z"}
    r = fast.patch(url, params=params, json={"changes": changes})
    assert r.status_code == 200, r.text
    stored = fast.get(url, params=params).json()
    assert stored["valid_from"] == "2025-03-01T00:00:00.000000Z"
    assert stored["valid_to"] == "2025-06-01T00:00:00.000000Z"
    for bad in ({"valid_to": "next tuesday"}, {"valid_from": "2025-13-01"}, {"valid_to": 3}):
        assert_error(fast.patch(url, params=params, json={"changes": bad}), 422)
    backwards = {"valid_from": "2025-06-01T00:00:00Z", "valid_to": "2025-01-01T00:00:00Z"}
    r = fast.patch(url, params=params, json={"changes": backwards})
    assert "valid_to" in assert_error(r, 422, "InvalidInputError")["message"]
    assert fast.get(url, params=params).json()["version"] == 2


def test_rerank_without_a_chat_model_is_422_naming_the_setting(fast: TestClient) -> None:
    fast.post("/v1/remember", json={"scope": {"user": "a"}, "turns": [{"text": "tea"}]})
    r = fast.get("/v1/search", params={"q": "tea", "user": "a", "rerank": "true"})
    assert "llm" in assert_error(r, 422, "InvalidInputError")["message"]


def test_every_error_has_the_one_shape(fast: TestClient) -> None:
    assert_error(fast.get("/v1/nowhere"), 404, "NotFoundError")
    r = fast.delete("/healthz")
    assert_error(r, 405, "MethodNotAllowedError")
    assert "GET" in r.headers["allow"]
    body = assert_error(fast.get("/v1/search", params={"user": "a"}), 422, "InvalidInputError")
    assert body["details"] == [{"loc": ["query", "q"], "msg": "Field required", "type": "missing"}]
    body = assert_error(fast.get("/v1/stats"), 422, "InvalidInputError")  # a key for all users
    assert "name the user" in body["message"]
    assert_error(_raw(fast, "POST", "/v1/remember", "{not json"), 422, "InvalidInputError")
    assert_error(fast.get("/v1/items/fa_01J00000000000000000000000", params={"user": "a"}), 404)


def test_an_unexpected_failure_is_a_500_without_a_traceback(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Memory.open(settings=load_settings(data_dir=data_dir), embedder=HashingEmbedder()) as m:

        def broken(*_: object) -> None:
            raise RuntimeError("internal detail /secret/path")

        monkeypatch.setattr(m, "stats", broken)
        with keyed_client(m, raise_server_exceptions=False) as c:
            body = assert_error(c.get("/v1/stats", params={"user": "a"}), 500, "InternalError")
    assert "secret" not in str(body)


def test_openapi_lists_the_error_shape_on_every_route(fast: TestClient) -> None:
    spec = fast.get("/openapi.json").json()
    assert "ErrorOut" in spec["components"]["schemas"]
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    ref = {"$ref": "#/components/schemas/ErrorOut"}
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for status in ("4XX", "5XX"):
                schema = op["responses"][status]["content"]["application/json"]["schema"]
                assert schema == ref, (method, path, status)


def test_too_large_maps_to_413() -> None:
    assert status_for(TooLargeError("turn too long", limit=10, size=11)) == 413


def test_a_request_body_over_the_limit_is_413_before_it_is_read(fast: TestClient) -> None:
    text = "x" * 70_000
    body = json.dumps({"scope": {"user": "a"}, "turns": [{"text": text}]})
    assert_error(_raw(fast, "POST", "/v1/remember", body), 413, "TooLargeError")

    sent: list[int] = []

    def chunks() -> Iterator[bytes]:  # chunked, no Content-Length
        for i in range(0, len(body), 4096):
            sent.append(i)
            yield body[i : i + 4096].encode()

    r = fast.post("/v1/remember", content=chunks(), headers={"content-type": "application/json"})
    assert_error(r, 413, "TooLargeError")
    assert fast.get("/v1/stats", params={"user": "a"}).json()["episodes"] == 0
    small = fast.post("/v1/remember", json={"scope": {"user": "a"}, "turns": [{"text": "hi"}]})
    assert small.status_code == 201


def test_page_size_and_k_are_bounded(fast: TestClient) -> None:
    for params in ({"limit": 0}, {"limit": 10_001}, {"limit": -1}):
        assert_error(fast.get("/v1/list", params={"user": "a", **params}), 422)
    for k in (0, 1001, -3):
        assert_error(fast.get("/v1/search", params={"q": "x", "user": "a", "k": k}), 422)


def test_search_honours_surface_archived_and_superseded_filters(
    fast: TestClient, fast_memory: Memory
) -> None:
    scope = {"user": "a"}
    chat = fast.post(
        "/v1/remember", json={"scope": scope, "turns": [{"text": "green tea in Hangzhou"}]}
    ).json()[0]
    note = fast.post(
        "/v1/remember",
        json={"scope": scope, "surface": "notebook", "turns": [{"text": "green tea notes"}]},
    ).json()[0]
    base = {"q": "green tea", "user": "a", "k": 10}
    ids = [
        h["id"]
        for h in fast.get("/v1/search", params={**base, "surface": "notebook"}).json()["items"]
    ]
    assert ids == [note["id"]]
    from memstrata.model import Scope

    assert fast_memory.store.archive_episodes(Scope("a"), [chat["id"]]) == 1
    ids = [h["id"] for h in fast.get("/v1/search", params=base).json()["items"]]
    assert chat["id"] not in ids
    ids = [
        h["id"]
        for h in fast.get("/v1/search", params={**base, "include_archived": True}).json()["items"]
    ]
    assert chat["id"] in ids
    old = fast.post("/v1/facts", json={"scope": scope, "text": "Alice lives in Hangzhou"}).json()
    new = fast.post("/v1/facts", json={"scope": scope, "text": "Alice lives in Shenzhen"}).json()
    facts = {**base, "q": "Alice lives", "granularity": "fact"}
    ids = [h["id"] for h in fast.get("/v1/search", params=facts).json()["items"]]
    assert new["id"] in ids and old["id"] not in ids
    ids = [
        h["id"]
        for h in fast.get("/v1/search", params={**facts, "current_only": False}).json()["items"]
    ]
    assert old["id"] in ids


def test_unknown_query_parameters_are_refused(fast: TestClient) -> None:
    r = fast.get("/v1/search", params={"q": "x", "user": "a", "archived": "true"})
    assert "archived" in assert_error(r, 422, "InvalidInputError")["message"]
    assert_error(fast.get("/v1/stats", params={"user": "a", "users": "b"}), 422)


def test_a_repeated_query_parameter_is_refused_not_read(fast: TestClient) -> None:
    fast.post("/v1/remember", json={"scope": {"user": "bob"}, "turns": [{"text": "bob's tea"}]})
    for url in ("/v1/stats", "/v1/list", "/v1/identity"):
        r = fast.get(f"{url}?user=alice&user=bob")
        assert "'user'" in assert_error(r, 422, "InvalidInputError")["message"]
    r = fast.get("/v1/search?q=tea&user=alice&user=bob")
    assert "repeated" in assert_error(r, 422)["message"]
    assert_error(fast.get("/v1/search?q=tea&q=tea&user=bob"), 422)
    assert fast.get("/v1/search?q=tea&user=bob").json()["items"][0]["text"].endswith("bob's tea")


def test_doc_apply_reports_the_bullet_ids_it_stored(fast: TestClient) -> None:
    params = {"user": "a"}
    ops = [{"op": "add", "section": "Drinks", "text": "Likes tea"}]
    applied = fast.post(
        "/v1/docs/essentials/apply", params=params, json={"operations": ops, "expected_version": 0}
    ).json()
    stored = fast.get("/v1/docs/essentials", params=params).json()
    [op] = applied["operations"]
    assert op["id"] in stored["markdown"] and op["id"] in applied["after"]
    assert applied["after"] == stored["markdown"] and applied["version"] == stored["version"]
    assert "manual:ep_" in applied["diff"]  # the citation captured on apply is in the diff
    md = stored["markdown"].replace("- Likes tea", "- Likes coffee\n- Likes tea")
    again = fast.post(
        "/v1/docs/essentials/apply", params=params, json={"markdown": md, "expected_version": 1}
    ).json()
    stored = fast.get("/v1/docs/essentials", params=params).json()
    added = [o["id"] for o in again["operations"] if o["op"] == "add"]
    assert added and all(i in stored["markdown"] for i in added)


def test_identity_has_its_own_routes_and_is_not_a_topic(fast: TestClient) -> None:
    params = {"user": "a"}
    assert fast.get("/v1/identity", params=params).json() == {"text": "", "version": 0}
    r = fast.put(
        "/v1/identity", params=params, json={"text": "I help Alice.", "expected_version": 0}
    )
    assert r.status_code == 200 and r.json() == {"text": "I help Alice.", "version": 1}
    stale = fast.put("/v1/identity", params=params, json={"text": "x", "expected_version": 0})
    assert_error(stale, 409, "ConflictError")
    assert fast.get("/v1/identity", params=params).json()["text"] == "I help Alice."
    for route in ("/v1/docs/identity", "/v1/docs/identity/diff", "/v1/docs/identity/apply"):
        method = "GET" if route == "/v1/docs/identity" else "POST"
        body = {"markdown": "# identity\n", "expected_version": 0}
        r = fast.request(method, route, params=params, json=None if method == "GET" else body)
        assert "/v1/identity" in assert_error(r, 422, "InvalidInputError")["message"]
