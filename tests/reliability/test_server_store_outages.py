"""A database server that goes away, or stops answering, under the HTTP API: every request
gets the one error shape with 503 (never a 500, never a wait without end), and the API
serves again once the server is back, with nothing to restart. The server is reached through
a TCP forwarder the test stops and pauses (``tests/reliability/tcp_proxy.py``); each case runs
on PostgreSQL and MySQL/MariaDB when their test server's URL is set (see
``tests/contract/backends.py``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from memstrata.api import Memory
from memstrata.server.auth import LocalAuth
from memstrata.server.http import create_app
from memstrata.settings import load_settings
from memstrata.store.opening import open_store
from memstrata.store.server.postgres import PostgresStore
from memstrata.store.url import parse_store_url
from tests.contract.backends import fresh_url
from tests.reliability.tcp_proxy import TcpProxy

SERVERS = ("postgresql", "mysql")
ALICE = {"user": "alice"}


@contextmanager
def _api_behind_proxy(
    backend: str, tmp_path: Path, **store_args: Any
) -> Iterator[tuple[TestClient, TcpProxy]]:
    """The HTTP API over a memory whose store reaches a fresh database through a proxy."""
    from memstrata.store.server.mysql import MysqlStore

    with fresh_url(backend, tmp_path) as url:
        parts = urlsplit(url)
        assert parts.hostname and parts.port
        proxy = TcpProxy(parts.hostname, parts.port)
        try:
            where = parse_store_url(proxy.url(url))
            cls = PostgresStore if backend == "postgresql" else MysqlStore
            store = cls(where, **store_args)
            memory = Memory(store, settings=load_settings(data_dir=tmp_path / "data"))
            try:
                app = create_app(memory, auth=LocalAuth())
                with TestClient(
                    app, base_url="http://127.0.0.1:8765", raise_server_exceptions=False
                ) as client:
                    yield client, proxy
            finally:
                memory.close()
        finally:
            proxy.stop()


def _remember(client: TestClient, text: str) -> Any:
    return client.post("/v1/remember", json={"scope": ALICE, "turns": [{"text": text}]})


def _search(client: TestClient, q: str) -> Any:
    return client.get("/v1/search", params={"user": "alice", "q": q})


def _is_store_error(response: Any) -> bool:
    body = response.json()
    return (
        response.status_code == 503
        and body["error"] == "StoreError"
        and set(body) <= {"error", "message", "details"}
    )


@pytest.mark.parametrize("backend", SERVERS)
def test_a_server_that_stops_answering_is_a_503_not_a_hang(backend: str, tmp_path: Path) -> None:
    """The server's side of every connection stays open but nothing comes back (a hung
    server, a network dropping packets): without a bound the request waited for hours."""
    with _api_behind_proxy(backend, tmp_path, statement_timeout_s=2.0) as (client, proxy):
        assert _remember(client, "I drink green tea 我喝绿茶 🍵").status_code == 201
        assert _search(client, "green tea").status_code == 200
        proxy.pause()
        # the backstop: a request still waiting then gets its connections cut, and the test
        # fails below instead of hanging
        backstop = threading.Timer(120, proxy.stop)
        backstop.start()
        try:
            searched = _search(client, "green tea")
            remembered = _remember(client, "written while the server hangs")
        finally:
            backstop.cancel()
        for response in (searched, remembered):
            assert _is_store_error(response), response.text
        # the search waited on a pooled connection; the write on that one or on a new one,
        # whose connecting is bounded too
        assert "did not answer within 2 s" in searched.json()["message"]
        proxy.stop()
        proxy.start()
        hits = _search(client, "green tea")
        assert hits.status_code == 200, hits.text
        assert [h["text"] for h in hits.json()["items"]] == ["user: I drink green tea 我喝绿茶 🍵"]
        assert _remember(client, "the server is back").status_code == 201


@pytest.mark.parametrize("backend", SERVERS)
def test_a_server_gone_is_a_503_and_the_api_recovers_when_it_is_back(
    backend: str, tmp_path: Path
) -> None:
    with _api_behind_proxy(backend, tmp_path, connect_timeout_s=1.0) as (client, proxy):
        assert _remember(client, "before the outage").status_code == 201
        proxy.stop()
        for response in (
            _search(client, "outage"),
            _remember(client, "during the outage"),
            client.get("/v1/list", params={"user": "alice"}),
        ):
            assert _is_store_error(response), response.text
            assert "cannot reach the database" in response.json()["message"]
        proxy.start()
        # the pool reconnects in the background, with a backoff: a request before it has a
        # connection again is refused (503, nothing written), as a client retrying would see
        deadline = time.monotonic() + 30
        answer = _remember(client, "after the outage")
        while answer.status_code == 503 and time.monotonic() < deadline:
            assert _is_store_error(answer), answer.text
            time.sleep(0.5)
            answer = _remember(client, "after the outage")
        assert answer.status_code == 201, answer.text
        texts = [
            i["text"] for i in client.get("/v1/list", params={"user": "alice"}).json()["items"]
        ]
        assert texts == ["before the outage", "after the outage"]


def test_the_watchdog_leaves_statements_that_answer_in_time_alone(tmp_path: Path) -> None:
    """A short bound cuts nothing that answers within it (SQLite is not watched: a file)."""
    with fresh_url("postgresql", tmp_path) as url:
        store = PostgresStore(parse_store_url(url), statement_timeout_s=5.0)
        try:
            for _ in range(50):
                assert store.generation("alice") == 0
        finally:
            store.close()
    assert open_store  # the opener builds these stores with the default bound
