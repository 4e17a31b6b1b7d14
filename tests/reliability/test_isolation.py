"""Isolation over generated scopes, through the Python API and through HTTP.

Hypothesis draws a few scopes (users, threads and agents with unicode names, several scopes of
one user among them); each gets turns, a fact and a curated document under the same key. Then
every scope, and every user's own scope, reads: lists, searches and stats show only what it
contains, and each record it does not contain behaves exactly like an id that was never stored
(get, history, update, delete: the same error, the same HTTP status and body once the ids are
set aside) and is still there afterwards.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata.api import Memory
from memstrata.document.ops import Operation, OpKind
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import MemstrataError
from memstrata.ids import kind_of, new_id
from memstrata.model import Granularity, Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.keyed import keyed_client
from tests.reliability.sizes import report, size

PYTHON_EXAMPLES = size(8, 60)
HTTP_EXAMPLES = size(2, 15)
KEYWORD = "lighthouse"
_ID_RE = re.compile(r"\b(?:ep|fa|doc|m)_[0-9A-Za-z]+")

names = st.text(
    st.characters(exclude_categories=("Cs", "Cc"), exclude_characters="/\\"),
    min_size=1,
    max_size=10,
).filter(lambda s: s == s.strip())
scopes = st.builds(Scope, names, st.none() | names, st.none() | names)


# several scopes of few users: some share a user, so threads and agents are tested too
def scope_sets(most: int) -> st.SearchStrategy[list[Scope]]:
    return st.lists(scopes, min_size=2, max_size=most, unique=True).filter(
        lambda ss: len({s.user for s in ss}) >= 2
    )


checks = {"python": 0, "http": 0, "python_examples": 0, "http_examples": 0}


@contextmanager
def _memory() -> Iterator[Memory]:
    with (
        tempfile.TemporaryDirectory() as tmp,
        Memory.open(
            settings=load_settings(data_dir=Path(tmp) / "mem"),
            clock=FixedClock(),
            embedder=HashingEmbedder(32),
        ) as memory,
    ):
        yield memory


def _fill(memory: Memory, scope: Scope, n: int) -> dict[str, Scope]:
    """Records in ``scope``: their ids and scopes."""
    owned: dict[str, Scope] = {}
    for ep in memory.remember(
        [f"{KEYWORD} turn {n} a", f"{KEYWORD} turn {n} b"], scope, session_id=f"s{n}"
    ):
        owned[ep.id] = ep.scope
    fact = memory.add_fact(f"{KEYWORD} fact {n}", scope, topic="shared", supersede=False)
    owned[fact.id] = fact.scope
    owned.update(dict.fromkeys(fact.sources, fact.scope))
    _, version = memory.doc("shared", scope)
    op = Operation(OpKind.ADD, section="Notes", text=f"{KEYWORD} bullet {n}")
    doc, _ = memory.apply_doc("shared", scope, [op], expected_version=version)
    stored = next(d for d in memory.list(scope, "document") if d.scope == scope)
    owned[stored.id] = stored.scope
    for bullet in (b for s in doc.sections for b in s.bullets):
        owned.update(dict.fromkeys((c.episode_id for c in bullet.citations), scope))
    return owned


def _outcome(call: Callable[[], Any], ids: tuple[str, ...]) -> tuple[str, str]:
    """What a call did, with the ids it was given set aside."""
    try:
        call()
    except MemstrataError as exc:
        message = str(exc)
        for item_id in ids:
            message = message.replace(item_id, "<id>")
        return type(exc).__name__, message
    return "ok", ""


def _update_changes(item_id: str) -> dict[str, Any]:
    if kind_of(item_id) == "document":
        return {"content": {"title": "x", "sections": []}}
    return {"importance": 0.3}


def _foreign(reader: Scope, owned: dict[str, Scope]) -> list[str]:
    """One record of each kind from each scope ``reader`` does not contain."""
    picked: dict[tuple[Scope, str], str] = {}
    for item_id, scope in sorted(owned.items()):
        if not reader.contains(scope):
            picked.setdefault((scope, kind_of(item_id)), item_id)
    return sorted(picked.values())


def _python_checks(memory: Memory, reader: Scope, owned: dict[str, Scope]) -> int:
    visible = {i for i, s in owned.items() if reader.contains(s)}
    n = 0
    for kind in ("episode", "fact", "document"):
        listed = memory.list(reader, kind, limit=1000)  # type: ignore[arg-type]
        assert {r.id for r in listed} <= visible and all(reader.contains(r.scope) for r in listed)
        n += 1
    for level in Granularity:
        for hit in memory.search(KEYWORD, reader, k=50, granularity=level):
            named = set(hit.episodes) if level == Granularity.SESSION else {hit.id}
            assert named <= visible and reader.contains(hit.scope), (level, hit)
            n += 1
    stats = memory.stats(reader)
    assert stats.episodes == sum(1 for i in visible if kind_of(i) == "episode")
    assert stats.facts_current == sum(1 for i in visible if kind_of(i) == "fact")
    n += 1
    calls: dict[str, Callable[[str], object]] = {
        "get": lambda i: memory.get(i, reader),
        "history": lambda i: memory.history(i, reader),
        "update": lambda i: memory.update(i, reader, **_update_changes(i)),
        "delete": lambda i: memory.delete(i, reader),
    }
    missing = {kind: new_id(kind) for kind in ("ep", "fa", "doc")}
    absent: dict[tuple[str, str], tuple[str, str]] = {}
    for foreign in _foreign(reader, owned):
        prefix = foreign.split("_")[0]
        ids = (foreign, missing[prefix])
        for name, call in calls.items():
            seen = _outcome(lambda c=call, i=foreign: c(i), ids)
            if (prefix, name) not in absent:
                absent[prefix, name] = _outcome(lambda c=call, i=ids[1]: c(i), ids)
            assert seen == absent[prefix, name], (name, foreign, seen, absent[prefix, name])
            assert seen[0] != "ok", (name, foreign)
            n += 1
    return n


def _http_checks(client: TestClient, reader: Scope, owned: dict[str, Scope]) -> int:
    visible = {i for i, s in owned.items() if reader.contains(s)}
    params: dict[str, str] = {"user": reader.user}
    if reader.thread is not None:
        params["thread"] = reader.thread
    if reader.agent is not None:
        params["agent"] = reader.agent
    n = 0
    for kind in ("episode", "fact", "document"):
        response = client.get("/v1/list", params={**params, "kind": kind, "limit": 1000})
        assert response.status_code == 200, response.text
        assert {r["id"] for r in response.json()["items"]} <= visible
        n += 1
    for level in ("turn", "session", "fact", "topic"):
        response = client.get(
            "/v1/search", params={**params, "q": KEYWORD, "k": 50, "granularity": level}
        )
        assert response.status_code == 200, response.text
        for hit in response.json()["items"]:
            named = set(hit["episodes"]) if level == "session" else {hit["id"]}
            assert named <= visible, (level, hit)
            n += 1
    response = client.get("/v1/stats", params=params)
    assert response.status_code == 200
    assert response.json()["episodes"] == sum(1 for i in visible if kind_of(i) == "episode")
    n += 1

    def outcome(method: str, path: str, **kw: Any) -> tuple[int, str]:
        response = client.request(method, path, params=params, **kw)
        return response.status_code, _ID_RE.sub("<id>", response.text)

    missing = {kind: new_id(kind) for kind in ("ep", "fa", "doc")}
    absent: dict[tuple[str, str, str], tuple[int, str]] = {}
    for foreign in _foreign(reader, owned):
        prefix = foreign.split("_")[0]
        for method, suffix, kw in (
            ("GET", "", {}),
            ("GET", "/history", {}),
            ("PATCH", "", {"json": {"changes": _update_changes(foreign)}}),
            ("DELETE", "", {}),
        ):
            seen = outcome(method, f"/v1/items/{foreign}{suffix}", **kw)
            key = (prefix, method, suffix)
            if key not in absent:
                absent[key] = outcome(method, f"/v1/items/{missing[prefix]}{suffix}", **kw)
            assert seen == absent[key], (method, suffix, foreign, seen, absent[key])
            assert seen[0] >= 400, (method, suffix, foreign)
            n += 1
    return n


def _setup(memory: Memory, generated: list[Scope]) -> tuple[dict[str, Scope], list[Scope]]:
    """Fill every generated scope; the readers are those scopes and their users' scopes."""
    owned: dict[str, Scope] = {}
    for n, scope in enumerate(generated):
        owned.update(_fill(memory, scope, n))
    return owned, list(dict.fromkeys([*generated, *(Scope(s.user) for s in generated)]))


def _untouched(memory: Memory, owned: dict[str, Scope]) -> None:
    """Nothing a foreign scope tried to change or delete was changed or deleted."""
    for item_id, scope in owned.items():
        record = memory.get(item_id, scope)
        if kind_of(item_id) == "fact":
            assert getattr(record, "importance", None) == 0.5


def _settings(examples: int) -> Any:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


@_settings(PYTHON_EXAMPLES)
@given(scope_sets(4))
def _isolated_in_python(generated: list[Scope]) -> None:
    with _memory() as memory:
        owned, readers = _setup(memory, generated)
        for reader in readers:
            checks["python"] += _python_checks(memory, reader, owned)
        _untouched(memory, owned)
        checks["python_examples"] += 1


@_settings(HTTP_EXAMPLES)
@given(scope_sets(3))
def _isolated_over_http(generated: list[Scope]) -> None:
    with _memory() as memory, keyed_client(memory) as client:
        owned, readers = _setup(memory, generated)
        for reader in readers:
            checks["http"] += _http_checks(client, reader, owned)
        _untouched(memory, owned)
        checks["http_examples"] += 1


def test_no_scope_reads_what_it_does_not_contain() -> None:
    _isolated_in_python()
    assert checks["python_examples"] >= 1 and checks["python"] > 0
    report("isolation-python", examples=checks["python_examples"], checks=checks["python"])


def test_no_scope_reads_over_http_what_it_does_not_contain() -> None:
    _isolated_over_http()
    assert checks["http_examples"] >= 1 and checks["http"] > 0
    report("isolation-http", examples=checks["http_examples"], checks=checks["http"])
