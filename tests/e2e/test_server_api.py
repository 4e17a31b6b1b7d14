"""The HTTP API v1 over a running server: serving (wake-up, recall, context), ingest by
upload, export, curation runs and their server-sent events, forgetting scopes, pages and
limits. Every request goes over a loopback socket through a real HTTP client."""

from __future__ import annotations

import io
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.e2e.live import live_server
from tests.keyed import key_headers, keyed_app

FIXTURES = Path(__file__).parent.parent / "fixtures"
ALICE = {"user": "alice"}


@pytest.fixture
def mem(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    settings = load_settings(data_dir=data_dir, max_request_bytes=200_000)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as m:
        yield m


@pytest.fixture
def http(mem: Memory) -> Iterator[httpx2.Client]:
    with live_server(keyed_app(mem), key_headers(mem)) as client:
        yield client


def error_of(r: httpx2.Response, status: int) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) <= {"error", "message", "details"} and isinstance(body["message"], str)
    return dict(body)


def remember(http: httpx2.Client, *texts: str, **scope: str) -> list[dict[str, Any]]:
    turns = [{"text": t, "speaker": "alice", "session_id": "s1"} for t in texts]
    r = http.post("/v1/remember", json={"scope": scope or ALICE, "turns": turns})
    assert r.status_code == 201, r.text
    return list(r.json())


def all_pages(http: httpx2.Client, url: str, params: dict[str, Any]) -> list[list[Any]]:
    pages: list[list[Any]] = []
    cursor = None
    while True:
        query = {**params, **({"cursor": cursor} if cursor is not None else {})}
        body = http.get(url, params=query).json()
        pages.append(body["items"])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 50, "the pages never end"


def wait_run(http: httpx2.Client, run_id: str, **scope: str) -> dict[str, Any]:
    """Follow the run's events to its end, then its state."""
    with http.stream("GET", f"/v1/runs/{run_id}/events", params=scope or ALICE) as r:
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
        for _ in r.iter_lines():
            pass
    body = http.get(f"/v1/runs/{run_id}", params=scope or ALICE).json()
    assert isinstance(body, dict)
    return body


def sse(text: str) -> list[dict[str, str]]:
    """Server-sent events as their fields."""
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        events.append(fields)
    return events


# pages ---------------------------------------------------------------------------------


def test_lists_page_by_cursor_to_the_end(http: httpx2.Client) -> None:
    episodes = remember(http, *(f"note number {i} about tea" for i in range(7)))
    pages = all_pages(http, "/v1/list", {**ALICE, "limit": 3})
    assert [len(p) for p in pages] == [3, 3, 1]
    assert [e["id"] for p in pages for e in p] == sorted(e["id"] for e in episodes)
    exact = all_pages(http, "/v1/list", {**ALICE, "limit": 7})
    assert [len(p) for p in exact] == [7]  # no empty page after a full one
    fact = http.post("/v1/facts", json={"scope": ALICE, "text": "Alice drinks tea"}).json()
    for version in range(1, 5):
        r = http.patch(
            f"/v1/items/{fact['id']}",
            params=ALICE,
            json={"changes": {"importance": version / 10}, "expected_version": version},
        )
        assert r.status_code == 200, r.text
    history = all_pages(http, f"/v1/items/{fact['id']}/history", {**ALICE, "limit": 2})
    assert [[h["version"] for h in p] for p in history] == [[1, 2], [3, 4], [5]]


def test_search_pages_through_its_hits(http: httpx2.Client) -> None:
    remember(http, *(f"green tea tasting day {i}" for i in range(9)))
    one = http.get("/v1/search", params={**ALICE, "q": "green tea", "k": 9}).json()
    assert len(one["items"]) == 9 and one["next_cursor"] is None
    pages = all_pages(http, "/v1/search", {**ALICE, "q": "green tea", "k": 4})
    assert [len(p) for p in pages] == [4, 4, 1]
    assert [h["id"] for p in pages for h in p] == [h["id"] for h in one["items"]]
    error_of(http.get("/v1/search", params={**ALICE, "q": "tea", "cursor": "x"}), 422)


def test_limits_are_422_or_413_in_the_one_shape(http: httpx2.Client) -> None:
    for url, params in [
        ("/v1/search", {"q": "tea", "k": 1001}),
        ("/v1/search", {"q": "tea", "k": 0}),
        ("/v1/search", {"q": ""}),
        ("/v1/list", {"limit": 1001}),
        ("/v1/list", {"limit": 0}),
        ("/v1/list", {"cursor": "not-an-id"}),
        ("/v1/runs", {"limit": 5000}),
        ("/v1/wake-up", {"budget": 79}),
        ("/v1/wake-up", {"budget": 100_001}),
        ("/v1/recall", {"topic": "tea", "budget": 10}),
        ("/v1/context", {"q": "tea", "budget": 49}),
        ("/v1/context", {"q": "tea", "budget": 10**9}),
        ("/v1/stats", {"user": "a/b"}),
        ("/v1/stats", {"user": " alice"}),
    ]:
        body = error_of(http.get(url, params={**ALICE, **params}), 422)
        assert body["error"] == "InvalidInputError" and body["details"], (url, params)
    big = {"scope": ALICE, "turns": [{"text": "x" * 250_000}]}
    body = error_of(http.post("/v1/remember", json=big), 413)
    assert body["error"] == "TooLargeError"
    [detail] = body["details"]  # the limit of a request body, in bytes, and at least its size
    assert detail["type"] == "too-large" and detail["limit"] == 200_000
    assert detail["size"] > 200_000
    long = {"scope": ALICE, "turns": [{"text": "x" * 100_001}]}  # over max_turn_chars
    body = error_of(http.post("/v1/remember", json=long), 413)
    assert body["error"] == "TooLargeError"
    assert body["details"] == [{"type": "too-large", "limit": 100_000, "size": 100_001}]
    upload = {"file": ("big.jsonl", b'{"text": "hi"}\n' * 20_000)}
    r = http.post("/v1/ingest", params=ALICE, data={"format": "jsonl"}, files=upload)
    assert error_of(r, 413)["error"] == "TooLargeError"
    assert http.get("/v1/stats", params=ALICE).json()["episodes"] == 0


def test_the_schema_states_the_limits(http: httpx2.Client) -> None:
    spec = http.get("/openapi.json").json()
    params = {p["name"]: p["schema"] for p in spec["paths"]["/v1/search"]["get"]["parameters"]}
    assert (params["k"]["minimum"], params["k"]["maximum"]) == (1, 1000)
    user = params["user"]["anyOf"][0]  # optional: a key bound to one user names it
    assert user["pattern"] and params["category"]["anyOf"]
    context = {p["name"]: p["schema"] for p in spec["paths"]["/v1/context"]["get"]["parameters"]}
    assert (context["budget"]["minimum"], context["budget"]["maximum"]) == (50, 100_000)
    turn = spec["components"]["schemas"]["TurnIn"]["properties"]
    assert turn["speaker"]["anyOf"][0]["maxLength"] == 256


# serving -------------------------------------------------------------------------------


def test_wake_up_recall_and_context_with_explain(http: httpx2.Client, mem: Memory) -> None:
    [ep] = remember(http, "I moved to Hangzhou and I love Longjing tea")
    for text, topic in [("Alice lives in Hangzhou", "home"), ("Alice loves Longjing tea", "tea")]:
        body = {"scope": ALICE, "text": text, "topic": topic, "sources": [ep["id"]]}
        assert http.post("/v1/facts", json=body).status_code == 201
    http.put("/v1/identity", params=ALICE, json={"text": "I help Alice.", "expected_version": 0})
    run = http.post("/v1/runs", json={"scope": ALICE, "extract": False}).json()
    assert wait_run(http, run["id"])["state"] == "done"
    woke = http.get("/v1/wake-up", params={**ALICE, "budget": 300}).json()
    assert "I help Alice." in woke["text"] and woke["tokens"] <= 300
    assert woke["scope"] == ALICE and isinstance(woke["left_out"], dict)
    recalled = http.get("/v1/recall", params={**ALICE, "topic": "tea"}).json()
    assert "Longjing" in recalled["text"] and recalled["documents"] == ["tea"]
    plain = http.get("/v1/context", params={**ALICE, "q": "Where does Alice live?"}).json()
    assert "Hangzhou" in plain["text"] and plain["explain"] is None
    explained = http.get(
        "/v1/context", params={**ALICE, "q": "Where does Alice live?", "explain": True}
    ).json()
    assert explained["text"] == plain["text"] and explained["tokens"] <= explained["budget"]
    reasons = explained["explain"]
    fields = {"id", "kind", "text", "included", "why", "reason", "relevance", "scored"}
    fields |= {"position", "cut", "line", "sources", "rank"}
    assert reasons and all(set(e) == fields for e in reasons)
    assert all(e["text"] for e in reasons)  # each item's words, for a person
    assert any(e["included"] for e in reasons)
    direct = mem.context("Where does Alice live?", "alice", budget=1000)
    assert [e["id"] for e in reasons] == [e["id"] for e in direct.explain()]
    items = [*direct.included, *direct.cut]  # every part of each item, as served
    assert [(e["reason"], e["line"], tuple(e["sources"])) for e in reasons] == [
        (i.reason, i.line, i.sources) for i in items
    ]
    assert [(e["position"], e["cut"], e["relevance"]) for e in reasons] == [
        (i.position, i.cut, i.relevance) for i in items
    ]
    other = http.get("/v1/wake-up", params={"user": "bob"}).json()
    assert "Alice" not in other["text"]


# capture: upload -----------------------------------------------------------------------


def test_ingest_uploads_a_file_in_the_cli_formats(http: httpx2.Client) -> None:
    lines = [
        {"text": "I started pottery", "speaker": "ana", "thread": "t1"},
        {"text": "我喜欢龙井茶", "speaker": "ana", "thread": "t2"},
    ]
    data = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines).encode()
    r = http.post(
        "/v1/ingest",
        params=ALICE,
        data={"format": "jsonl"},
        files={"file": ("chat.jsonl", data, "application/x-ndjson")},
    )
    assert r.status_code == 201, r.text
    report = r.json()
    assert (report["source"], report["turns"], sorted(report["threads"])) == (
        "chat.jsonl",
        2,
        ["t1", "t2"],
    )
    listed = http.get("/v1/list", params={**ALICE, "thread": "t2"}).json()["items"]
    assert [e["text"] for e in listed] == ["我喜欢龙井茶"]
    locomo = (FIXTURES / "locomo_mini.json").read_bytes()
    r = http.post(
        "/v1/ingest",
        params={"user": "bob"},
        data={"format": "locomo"},
        files={"file": ("locomo_mini.json", locomo)},
    )
    assert r.status_code == 201 and r.json()["conversations"] == 1, r.text
    before = http.get("/v1/stats", params=ALICE).json()["episodes"]
    bad = b'{"text": "fine"}\n{"txet": "typo"}\n'
    r = http.post(
        "/v1/ingest", params=ALICE, data={"format": "jsonl"}, files={"file": ("bad.jsonl", bad)}
    )
    message = error_of(r, 422)["message"]
    assert "bad.jsonl" in message and "/tmp" not in message
    assert http.get("/v1/stats", params=ALICE).json()["episodes"] == before  # nothing stored
    files = {"file": ("chat.jsonl", data)}
    wrong = http.post("/v1/ingest", params=ALICE, data={"format": "csv"}, files=files)
    error_of(wrong, 422)
    in_thread = {**ALICE, "thread": "t9"}
    error_of(http.post("/v1/ingest", params=in_thread, data={"format": "jsonl"}, files=files), 422)
    error_of(http.post("/v1/ingest", params=ALICE, data={"format": "jsonl"}), 422)


# export --------------------------------------------------------------------------------


def test_export_as_jsonl_and_as_a_markdown_zip(http: httpx2.Client, mem: Memory) -> None:
    [ep] = remember(http, "I love green tea")
    fact = {"scope": ALICE, "text": "Alice loves green tea", "topic": "tea", "sources": [ep["id"]]}
    http.post("/v1/facts", json=fact)
    mem.consolidate("alice")
    r = http.get("/v1/export", params=ALICE)
    assert r.status_code == 200 and r.headers["content-type"] == "application/x-ndjson"
    records = [json.loads(line) for line in r.text.splitlines()]
    assert records == list(mem.export("alice"))
    assert {rec["kind"] for rec in records} == {"episode", "fact", "document"}
    r = http.get("/v1/export", params={**ALICE, "format": "markdown"})
    assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(r.content)) as archive:
        names = archive.namelist()
        assert any(n.endswith("tea.md") for n in names), names
        target = mem.settings.data_dir.parent / "unzipped" if mem.settings else None
        assert target is not None
        archive.extractall(target)
    restored = mem.import_markdown(target, user="carol")
    assert mem.stats(restored).episodes == 1 and mem.stats(restored).facts_current == 1
    assert http.get("/v1/export", params={"user": "nobody"}).text == ""
    error_of(http.get("/v1/export", params={**ALICE, "format": "csv"}), 422)


# runs ----------------------------------------------------------------------------------


def test_a_run_is_started_followed_and_replayed_from_a_cursor(http: httpx2.Client) -> None:
    remember(http, "I moved to Hangzhou last year.", "I love Longjing tea.")
    started = http.post("/v1/runs", json={"scope": ALICE, "kind": "consolidate"})
    assert started.status_code == 202, started.text
    run = started.json()
    assert run["layer"] == "curation" and run["scope"] == ALICE
    done = wait_run(http, run["id"])
    assert done["state"] == "done" and done["finished_at"]
    assert done["result"]["extraction"]["stored"] and done["result"]["consolidation"]
    with http.stream("GET", f"/v1/runs/{run['id']}/events", params=ALICE) as r:
        events = sse(r.read().decode())
    kinds = [e["event"] for e in events]
    assert kinds[0] == "started" and kinds[-1] == "done" and "report" in kinds
    seqs = [int(e["id"]) for e in events]
    assert seqs == sorted(seqs)
    data = [json.loads(e["data"]) for e in events]
    assert all(d["seq"] == s for d, s in zip(data, seqs, strict=True))
    assert any(d["run_id"] != run["id"] for d in data)  # the documents it wrote
    middle = seqs[len(seqs) // 2]
    replay = http.get(
        f"/v1/runs/{run['id']}/events", params={**ALICE, "cursor": middle, "follow": False}
    )
    assert [int(e["id"]) for e in sse(replay.text)] == [s for s in seqs if s > middle]
    resumed = http.get(
        f"/v1/runs/{run['id']}/events",
        params={**ALICE, "follow": False},
        headers={"Last-Event-ID": str(middle)},
    )
    assert resumed.text == replay.text
    assert http.get(f"/v1/runs/{run['id']}", params={"user": "mallory"}).status_code == 404
    error_of(http.get(f"/v1/runs/{run['id']}/events", params={"user": "mallory"}), 404)
    error_of(http.post(f"/v1/runs/{run['id']}/cancel", params={"user": "mallory"}), 404)
    listed = http.get("/v1/runs", params=ALICE).json()
    assert [r["id"] for r in listed["items"]] == [run["id"]] and listed["next_cursor"] is None
    assert http.get("/v1/runs", params={"user": "mallory"}).json()["items"] == []


def test_a_running_run_is_busy_streams_live_and_can_be_cancelled(
    http: httpx2.Client, mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    remember(http, "I moved to Hangzhou last year.")
    entered, release = threading.Event(), threading.Event()
    extract = mem.extract

    def slow_extract(*args: Any, **kwargs: Any) -> Any:
        entered.set()
        release.wait(30)
        return extract(*args, **kwargs)

    monkeypatch.setattr(mem, "extract", slow_extract)
    run = http.post("/v1/runs", json={"scope": ALICE}).json()
    assert entered.wait(30)
    busy = http.post("/v1/runs", json={"scope": ALICE})
    assert error_of(busy, 409)["error"] == "BusyError"
    assert http.get(f"/v1/runs/{run['id']}", params=ALICE).json()["state"] == "running"
    seen: list[str] = []
    with http.stream("GET", f"/v1/runs/{run['id']}/events", params=ALICE) as r:
        lines = r.iter_lines()
        for line in lines:  # the events so far arrive while the run still runs
            if line.startswith("event: "):
                seen.append(line.removeprefix("event: "))
            if seen[-1:] == ["step"]:
                break
        cancelled = http.post(f"/v1/runs/{run['id']}/cancel", params=ALICE)
        assert cancelled.status_code == 200
        release.set()
        seen += [line.removeprefix("event: ") for line in lines if line.startswith("event: ")]
    assert seen == ["started", "step", "report", "cancelled"]  # what it did before it stopped
    state = http.get(f"/v1/runs/{run['id']}", params=ALICE).json()
    assert state["state"] == "cancelled" and "consolidation" not in (state["result"] or {})
    again = http.post("/v1/runs", json={"scope": ALICE, "kind": "extract"})
    assert again.status_code == 202  # the scope is free once the run has ended
    assert wait_run(http, again.json()["id"])["result"]["kind"] == "extract"
    runs = all_pages(http, "/v1/runs", {**ALICE, "limit": 1})
    assert [len(p) for p in runs] == [1, 1]


# forgetting ----------------------------------------------------------------------------


def test_forget_a_thread_then_the_user(http: httpx2.Client) -> None:
    remember(http, "thread one note", user="alice", thread="t1")
    [kept] = remember(http, "thread two note", user="alice", thread="t2")
    r = http.delete("/v1/scopes", params={**ALICE, "thread": "t1"})
    assert r.status_code == 200 and r.json()["counts"]["episodes"] == 1
    left = http.get("/v1/list", params=ALICE).json()["items"]
    assert [e["id"] for e in left] == [kept["id"]]
    error_of(http.delete("/v1/scopes", params={**ALICE, "thread": "t1"}), 404)
    assert http.delete("/v1/scopes", params=ALICE).json()["counts"]["episodes"] == 1
    assert http.get("/v1/stats", params=ALICE).json()["episodes"] == 0
    error_of(http.delete("/v1/items/ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z", params=ALICE), 404)
    error_of(http.delete(f"/v1/items/{kept['id']}", params={**ALICE, "reason": "bored"}), 422)


def test_events_overwritten_before_the_cursor_are_said_missed(
    http: httpx2.Client, mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstrata.curate.runs import RunRegistry

    monkeypatch.setattr(mem, "_runs", RunRegistry(capacity=3))  # a small buffer
    remember(http, "I moved to Hangzhou last year.", "I love Longjing tea.")
    run = http.post("/v1/runs", json={"scope": ALICE}).json()
    wait_run(http, run["id"])
    r = http.get(f"/v1/runs/{run['id']}/events", params={**ALICE, "follow": False})
    events = sse(r.text)
    missed = json.loads(events[0]["data"])["missed"]
    assert events[0]["event"] == "missed" and missed > 0 and "id" not in events[0]
    assert [e["event"] for e in events[1:]][-1] == "done" and len(events) - 1 <= 3
    assert int(events[1]["id"]) == missed + 1  # the oldest kept follows the missed ones


def test_records_documents_identity_and_forget_over_http(http: httpx2.Client) -> None:
    assert http.get("/healthz").json()["status"] == "ok"
    [ep] = remember(http, "I love green tea")
    assert http.get(f"/v1/items/{ep['id']}", params=ALICE).json()["text"].endswith("green tea")
    cited = [f"chat:{ep['id']}"]
    ops = [{"op": "add", "section": "Drinks", "text": "Likes green tea", "citations": cited}]
    preview = http.post("/v1/docs/essentials/diff", params=ALICE, json={"operations": ops})
    assert "+- Likes green tea" in preview.json()["diff"]
    applied = http.post(
        "/v1/docs/essentials/apply", params=ALICE, json={"operations": ops, "expected_version": 0}
    )
    assert applied.json()["version"] == 1
    shown = http.get("/v1/docs/essentials", params=ALICE).json()
    assert "Likes green tea" in shown["markdown"] and shown["version"] == 1
    assert http.get("/v1/identity", params=ALICE).json() == {"text": "", "version": 0}
    forgot = http.post(f"/v1/items/{ep['id']}/forget", params=ALICE)
    assert forgot.status_code == 200 and forgot.json()["deleted"] == [ep["id"]]
    assert "Likes green tea" not in http.get("/v1/docs/essentials", params=ALICE).text
    error_of(http.get(f"/v1/items/{ep['id']}", params=ALICE), 404)
    error_of(http.post(f"/v1/items/{ep['id']}/forget", params=ALICE), 404)
    routes = {
        f"{method.upper()} {path}"
        for path, ops_ in http.get("/openapi.json").json()["paths"].items()
        for method in ops_
    }
    assert len(routes) == 39 and "GET /v1/runs/{run_id}/events" in routes
    assert {
        "GET /v1/me",
        "GET /v1/users",
        "GET /v1/scopes",
        "GET /v1/sessions",
        "GET /v1/sessions/{session_id}",
        "GET /v1/facts",
        "GET /v1/audit",
        "POST /v1/audit/resolve",
    } <= routes
    assert "GET /metrics" in routes


def test_every_json_answer_has_a_schema(http: httpx2.Client) -> None:
    spec = http.get("/openapi.json").json()
    untyped = []
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            ok = next(v for k, v in op["responses"].items() if k.startswith("2"))
            content = ok.get("content", {})
            if "application/json" in content and not content["application/json"]["schema"]:
                untyped.append(f"{method.upper()} {path}")
            if not content:
                untyped.append(f"{method.upper()} {path} (no content)")
    assert untyped == []
    pages = spec["paths"]["/v1/list"]["get"]["responses"]["200"]["content"]["application/json"]
    assert pages["schema"] == {"$ref": "#/components/schemas/RecordPage"}
    names = spec["components"]["schemas"]
    assert {"HitPage", "VersionPage", "RunPage", "EpisodeOut", "ContextOut"} <= set(names)


def test_a_full_buffer_of_other_events_is_not_said_missed(
    http: httpx2.Client, mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstrata.curate.runs import RunRegistry

    monkeypatch.setattr(mem, "_runs", RunRegistry(capacity=8))
    with mem.runs.start("curation", "elsewhere") as other:
        for i in range(10):
            other.emit("progress", step=i)  # fills the buffer and overwrites its start
    run = http.post("/v1/runs", json={"scope": ALICE, "kind": "extract"}).json()
    wait_run(http, run["id"])
    events = sse(http.get(f"/v1/runs/{run['id']}/events", params=ALICE).text)
    assert [e["event"] for e in events] == ["started", "step", "report", "done"]


def test_a_consolidation_run_names_the_user(http: httpx2.Client, mem: Memory) -> None:
    turns = [
        {"text": "I'm from Sweden.", "speaker": "Caroline", "session_id": "s1"},
        {"text": "My husband cooks.", "speaker": "Melanie", "session_id": "s1"},
    ]
    assert http.post("/v1/remember", json={"scope": ALICE, "turns": turns}).status_code == 201
    body = {"scope": ALICE, "kind": "consolidate", "user_speaker": "Melanie"}
    started = http.post("/v1/runs", json=body)
    assert started.status_code == 202, started.text
    assert wait_run(http, started.json()["id"])["state"] == "done"
    fields = mem.profile("alice").fields
    assert fields["name"].value == "Melanie" and fields["partner"].value == "husband"
