"""`GET /metrics`: Prometheus text with requests by route template, latency, tokens served,
conflicts and retries, curation runs and records by kind."""

from __future__ import annotations

import time

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from memstrata import telemetry
from memstrata.api import Memory
from memstrata.ids import new_id
from memstrata.retry import retry_conflicts


def scrape(client: TestClient) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``/metrics`` by name and labels (after checking the content type)."""
    r = client.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    samples = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def remember(client: TestClient, user: str, *texts: str) -> list[dict[str, object]]:
    r = client.post(
        "/v1/remember", json={"scope": {"user": user}, "turns": [{"text": t} for t in texts]}
    )
    assert r.status_code == 201, r.text
    body: list[dict[str, object]] = r.json()
    return body


def test_requests_are_counted_by_route_template_and_status(client: TestClient) -> None:
    before = scrape(client)
    eps = remember(client, "alice", "I drink oolong tea every morning")
    client.get(f"/v1/items/{eps[0]['id']}", params={"user": "alice"})
    client.get(f"/v1/items/{new_id('ep')}", params={"user": "alice"})
    client.get("/v1/search", params={"user": "alice", "q": "tea"})
    client.get("/v1/search", params={"user": "alice", "q": "tea", "k": 0})
    client.get("/no/such/path")
    after = scrape(client)

    def grew(**labels: str) -> float:
        name = "memstrata_http_requests_total"
        return value(after, name, **labels) - value(before, name, **labels)

    assert grew(method="POST", route="/v1/remember", status="201") == 1
    item = "/v1/items/{item_id}"
    assert grew(method="GET", route=item, status="200") == 1
    assert grew(method="GET", route=item, status="404") == 1
    assert grew(method="GET", route="/v1/search", status="200") == 1
    assert grew(method="GET", route="/v1/search", status="422") == 1
    assert grew(method="GET", route="unmatched", status="404") == 1
    # no series carries a raw path
    assert not [k for k in after if any(v.startswith("/v1/items/ep_") for _, v in k[1])]
    hist = "memstrata_http_request_duration_seconds_count"
    search_count = value(after, hist, method="GET", route="/v1/search")
    assert search_count - value(before, hist, method="GET", route="/v1/search") == 2
    assert value(after, hist, method="POST", route="/v1/remember") >= 1
    # a refused body is counted too (the middleware sits outside the body limit)
    r = client.post("/v1/remember", content=b"x" * 10, headers={"content-length": str(10**9)})
    assert r.status_code == 413
    last = scrape(client)
    name = "memstrata_http_requests_total"
    assert value(last, name, method="POST", route="unmatched", status="413") + value(
        last, name, method="POST", route="/v1/remember", status="413"
    ) > value(after, name, method="POST", route="unmatched", status="413") + value(
        after, name, method="POST", route="/v1/remember", status="413"
    )


def test_records_by_kind_are_read_at_scrape_time(client: TestClient, memory: Memory) -> None:
    samples = scrape(client)
    assert value(samples, "memstrata_store_up") == 1
    assert value(samples, "memstrata_records", kind="episode") == 0
    eps = remember(client, "alice", "I live in Hangzhou", "我喜欢喝茶")
    remember(client, "bob", "I have a dog")
    memory.add_fact("Alice lives in Hangzhou", "alice", category="personal", sources=[eps[0]["id"]])  # type: ignore[list-item]
    samples = scrape(client)
    assert value(samples, "memstrata_records", kind="episode") == 3
    assert value(samples, "memstrata_index_pending") == 0  # no index built yet
    memory.indexes.index("alice")  # built: its 2 turns and 1 fact wait for their vectors
    assert value(scrape(client), "memstrata_index_pending") == 3
    memory.index("alice")
    assert value(scrape(client), "memstrata_index_pending") == 0
    assert value(samples, "memstrata_records", kind="fact") == 1


def test_tokens_served_by_wake_up_and_context(client: TestClient, memory: Memory) -> None:
    before = scrape(client)
    remember(client, "alice", "I'm allergic to peanuts.", "我下个月打算去京都旅行。")
    woke = client.get("/v1/wake-up", params={"user": "alice", "budget": 800}).json()
    ctx = client.get(
        "/v1/context", params={"user": "alice", "q": "any restaurant tips for my trip?"}
    ).json()
    recalled = memory.recall("travel", "alice")
    after = scrape(client)
    for call, served in (
        ("wake_up", woke["tokens"]),
        ("context", ctx["tokens"]),
        ("recall", recalled.tokens),
    ):
        grew_sum = value(after, "memstrata_served_tokens_sum", call=call) - value(
            before, "memstrata_served_tokens_sum", call=call
        )
        grew_count = value(after, "memstrata_served_tokens_count", call=call) - value(
            before, "memstrata_served_tokens_count", call=call
        )
        assert (grew_sum, grew_count) == (served, 1)
    assert ctx["tokens"] > 0


def test_conflicts_and_retries(client: TestClient, memory: Memory) -> None:
    from memstrata.errors import ConflictError

    eps = remember(client, "alice", "I live in Hangzhou")
    fact = memory.add_fact("Alice lives in Hangzhou", "alice", sources=[eps[0]["id"]])  # type: ignore[list-item]
    before = scrape(client)
    r = client.patch(
        f"/v1/items/{fact.id}",
        params={"user": "alice"},
        json={"expected_version": 7, "changes": {"importance": 0.9}},
    )
    assert r.status_code == 409
    attempts = iter([True, True, False])

    def attempt() -> str:
        if next(attempts):
            raise ConflictError("fa_x", 1, 2)
        return "written"

    assert retry_conflicts(attempt, sleep=lambda _: None) == "written"
    ticks = iter([0.0, 0.0, 10.0])
    with pytest.raises(ConflictError):
        retry_conflicts(
            lambda: (_ for _ in ()).throw(ConflictError("fa_x", 1, 2)),
            deadline_s=1.0,
            sleep=lambda _: None,
            clock=lambda: next(ticks),
        )
    after = scrape(client)
    assert (
        value(after, "memstrata_conflicts_total") - value(before, "memstrata_conflicts_total") == 1
    )
    retries = "memstrata_conflict_retries_total"
    assert value(after, retries, outcome="retried") - value(before, retries, outcome="retried") == 3
    assert value(after, retries, outcome="gave_up") - value(before, retries, outcome="gave_up") == 1


def test_curation_runs_are_counted(client: TestClient, memory: Memory) -> None:
    before = scrape(client)
    remember(client, "alice", "I'm allergic to peanuts.", "I prefer short answers.")
    memory.extract("alice")
    memory.consolidate("alice")
    # a run started over HTTP, in the background, is counted when it finishes
    run = client.post("/v1/runs", json={"scope": {"user": "alice"}, "kind": "consolidate"})
    assert run.status_code == 202, run.text
    deadline = time.monotonic() + 60  # a bound, not a timing
    path = f"/v1/runs/{run.json()['id']}"
    # finished_at is set after the last event, whose listeners have counted it
    while client.get(path, params={"user": "alice"}).json()["finished_at"] is None:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    after = scrape(client)
    runs = "memstrata_curation_runs_total"
    started = sum(
        v for (n, labels), v in after.items() if n == runs and ("status", "started") in labels
    )
    started -= sum(
        v for (n, labels), v in before.items() if n == runs and ("status", "started") in labels
    )
    done = sum(v for (n, labels), v in after.items() if n == runs and ("status", "done") in labels)
    done -= sum(
        v for (n, labels), v in before.items() if n == runs and ("status", "done") in labels
    )
    assert started >= 2 and done == started
    layers = {dict(labels)["layer"] for (n, labels) in after if n == runs}
    assert "curation" in layers, layers
    assert all(("layer", "unknown") not in labels for (n, labels) in after if n == runs)


def test_a_failing_listener_never_breaks_what_is_counted() -> None:
    def broken(name: str, value: float, labels: object) -> None:
        raise RuntimeError("listener down")

    seen: list[tuple[str, float, dict[str, str]]] = []
    unsubscribe_broken = telemetry.subscribe(broken)
    unsubscribe = telemetry.subscribe(lambda n, v, labels: seen.append((n, v, dict(labels))))
    try:
        telemetry.record(telemetry.TOKENS_SERVED, 12, call="context")
    finally:
        unsubscribe_broken()
        unsubscribe()
    telemetry.record(telemetry.TOKENS_SERVED, 5, call="context")
    assert seen == [(telemetry.TOKENS_SERVED, 12, {"call": "context"})]
