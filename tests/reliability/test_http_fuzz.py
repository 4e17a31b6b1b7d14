"""An OpenAPI-driven fuzzer over the whole HTTP app: no 5xx, every error in the one shape.

Schemathesis generates requests from ``app.openapi()`` for every operation, both requests that
fit the schema and requests that do not, and sends them in process (ASGI) to an app over a
memory in a temporary directory with the hashing embedder. Half the generated scopes and ids
are swapped for ones that exist (a seeded user with turns, a fact and curated documents), so
the fuzzer reaches past "not found", and a quarter of the JSON bodies get a lone surrogate in
one of their texts (which JSON can spell and UTF-8 cannot store). The default run sends a
bounded number of requests per operation and generation mode, ``CI=true`` over five times as
many. The operations are fuzzed in :data:`SHARDS` parts (every ``SHARDS``-th operation), each
over a memory of its own that the part's earlier operations have written to.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from memstrata.api import Memory
from memstrata.document.ops import Operation, OpKind
from memstrata.embed.fake import HashingEmbedder
from memstrata.settings import load_settings
from tests.keyed import keyed_app, keyed_client
from tests.reliability.sizes import report, size

#: generated requests per operation and generation mode
EXAMPLES = size(15, 80)
#: the operations are fuzzed in this many tests, so that parallel workers share them and none
#: runs for minutes on its own (at full length the whole schema took five)
SHARDS = 4
USER = "alice"


class Seeded:
    """What exists in the fuzzed memory: ids the fuzzer can hit."""

    def __init__(self, memory: Memory) -> None:
        turns = memory.remember(["I moved to Hangzhou", "我喜欢喝龙井茶"], USER, session_id="s1")
        fact = memory.add_fact("Alice lives in Hangzhou", USER, topic="home")
        preview = memory.preview_doc(
            "essentials", USER, [Operation(OpKind.ADD, section="Drinks", text="Likes tea")]
        )
        memory.apply_doc("essentials", USER, preview.operations, expected_version=0)
        memory.consolidate(USER)
        run = memory.start_run(USER, "extract")
        while run.finished_at is None:
            threading.Event().wait(0.01)
        self.runs = [run.id]
        docs = memory.list(USER, "document")
        self.ids = [
            *(t.id for t in turns),
            fact.id,
            *(d.id for d in docs),
            *(op.id for op in preview.operations if op.id),
        ]
        self.keys = ["essentials", "home", "identity", "profile"]


@pytest.fixture
def fuzzed(tmp_path: Path) -> Iterator[tuple[Any, TestClient, Seeded]]:
    settings_ = load_settings(data_dir=tmp_path / "mem", max_request_bytes=64_000)
    with Memory.open(settings=settings_, embedder=HashingEmbedder(dim=64)) as memory:
        seeded = Seeded(memory)
        app = keyed_app(memory)
        with keyed_client(memory, app=app, raise_server_exceptions=False) as client:
            yield schemathesis.openapi.from_asgi("/openapi.json", app), client, seeded


def _aim(case: Any, data: st.DataObject, seeded: Seeded) -> None:
    """Point some requests at what exists, so they get past "not found"."""
    if not data.draw(st.booleans(), label="aim"):
        return
    if isinstance(case.query, dict) and "user" in case.query:
        case.query["user"] = USER
    if isinstance(case.body, dict) and isinstance(case.body.get("scope"), dict):
        case.body["scope"]["user"] = USER
    params = case.path_parameters or {}
    if "item_id" in params:
        params["item_id"] = data.draw(st.sampled_from(seeded.ids), label="item_id")
    if "key" in params:
        params["key"] = data.draw(st.sampled_from(seeded.keys), label="key")
    if "run_id" in params:
        params["run_id"] = data.draw(st.sampled_from(seeded.runs), label="run_id")


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _poisoned(case: Any, data: st.DataObject) -> bytes | None:
    """The case's JSON body with a lone surrogate put into one of its texts (a key or a
    value), as a client may send it; None when the body has no text."""
    if not isinstance(case.body, dict | list | str):
        return None
    text = json.dumps(case.body, ensure_ascii=True)
    spots = [m.start() + 1 for m in _JSON_STRING.finditer(text)]
    if not spots:
        return None
    at = data.draw(st.sampled_from(spots), label="surrogate at")
    return (text[:at] + "\\ud800" + text[at:]).encode("ascii")


def _call(case: Any, client: TestClient, data: st.DataObject) -> Any:
    poison = data.draw(st.integers(0, 3), label="poison") == 0
    body = _poisoned(case, data) if poison else None
    if body is None:
        return case.call(headers={"Authorization": client.headers["authorization"]})
    return client.request(
        case.method,
        case.formatted_path,
        params=case.query or None,
        content=body,
        headers={"content-type": "application/json"},
    )


def _check(case: Any, response: Any) -> None:
    where = f"{case.method} {case.formatted_path} {case.query} {case.body!r:.300}"
    assert response.status_code < 500, f"{where} -> {response.status_code} {response.text:.500}"
    if response.status_code >= 400:
        body = json.loads(response.content)
        assert isinstance(body, dict), where
        assert set(body) <= {"error", "message", "details"}, (where, body)
        assert isinstance(body.get("error"), str) and isinstance(body.get("message"), str), (
            where,
            body,
        )
        assert "Traceback" not in response.text, where


@pytest.mark.parametrize("shard", range(SHARDS))
def test_no_request_gets_a_5xx_and_every_error_has_the_one_shape(
    fuzzed: tuple[Any, TestClient, Seeded], shard: int
) -> None:
    schema, client, seeded = fuzzed
    every = [result.ok() for result in schema.get_all_operations()]
    assert len(every) >= 27
    operations = every[shard::SHARDS]
    sent: list[int] = []
    reached: dict[str, int] = {}  # operation -> answers with 2xx (the handler did its work)
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy = operation.as_strategy(generation_mode=mode)

            @given(case=strategy, data=st.data())
            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def fuzz(case: Any, data: st.DataObject) -> None:
                _aim(case, data, seeded)
                response = _call(case, client, data)
                _check(case, response)
                sent.append(response.status_code)
                if 200 <= response.status_code < 300:
                    name = f"{case.method} {case.path}"
                    reached[name] = reached.get(name, 0) + 1

            try:
                fuzz()
            except Unsatisfiable:  # nothing to break in an operation without parameters
                assert mode == GenerationMode.NEGATIVE and not list(operation.iter_parameters())
            _still_readable(client, operation)
    report(
        f"http_fuzz[{shard}]",
        operations=len(operations),
        requests=len(sent),
        answered_2xx=sum(200 <= code < 300 for code in sent),
        answered_4xx=sum(400 <= code < 500 for code in sent),
        answered_5xx=sum(code >= 500 for code in sent),
        operations_reached=len(reached),
    )
    unreached = sorted({f"{op.method.upper()} {op.path}" for op in operations} - set(reached))
    print("reliability: http_fuzz operations no request got through:", unreached)


def _still_readable(client: TestClient, after: Any) -> None:
    """Nothing the fuzzer stored makes the seeded user's memory unreadable."""
    reads = [
        ("/v1/stats", {}),
        *(("/v1/list", {"kind": kind}) for kind in ("episode", "fact", "document")),
        ("/v1/docs/essentials", {}),
        ("/v1/search", {"q": "Hangzhou tea"}),
        ("/v1/search", {"q": "Hangzhou tea", "granularity": "topic"}),
    ]
    for path, params in reads:
        response = client.get(path, params={"user": USER, **params})
        assert response.status_code == 200, (after, path, response.text[:500])
