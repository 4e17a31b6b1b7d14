"""The HTTP server: health, the first /v1 routes, error mapping, and `memstrata serve`."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.server.http import create_app


@pytest.fixture
def client(memory: Memory) -> Iterator[TestClient]:
    with TestClient(create_app(memory)) as c:
        yield c


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
    hist = client.get(f"/v1/items/{fact['id']}/history", params=params).json()
    assert [h["op"] for h in hist] == ["create", "update"]
    assert client.get("/v1/stats", params={"user": "alice"}).json()["facts_current"] == 1
    listed = client.get("/v1/list", params={"user": "alice", "kind": "fact"}).json()
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_loads_the_sample_and_answers_healthz(tmp_path: Path) -> None:
    port = _free_port()
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
        with urllib.request.urlopen(url, timeout=5) as r:
            assert json.loads(r.read())["episodes"] >= 10
        assert "loaded the sample memory" in log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_search_route(data_dir: Path) -> None:
    from memstrata.embed.fake import HashingEmbedder
    from memstrata.settings import load_settings

    with (
        Memory.open(settings=load_settings(data_dir=data_dir), embedder=HashingEmbedder()) as mem,
        TestClient(create_app(mem)) as client,
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
        hits = client.get("/v1/search", params={"q": "梧桐山", "user": "alice", "k": 1}).json()
        assert hits[0]["text"].endswith("周末去梧桐山徒步") and hits[0]["session_id"] == "s1"
        assert client.get("/v1/search", params={"q": "梧桐山", "user": "bob"}).json() == []
        bad = client.get("/v1/search", params={"q": "x", "user": "alice", "category": "zzz"})
        assert bad.status_code == 422
        mem.add_fact("Alice hikes Wutong mountain on weekends", "alice", topic="hiking")
        mem.consolidate("alice")
        params = {"q": "Wutong", "user": "alice", "granularity": "topic", "layer": "L2"}
        topics = client.get("/v1/search", params=params).json()
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
