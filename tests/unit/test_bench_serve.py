"""`memstrata bench serve` on a small scope: the server starts, every route is loaded by the
clients, answers are counted, and the server is stopped."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from memstrata.bench.serve import WRITER, free_port, requests_for, run_serve_bench
from memstrata.errors import InvalidInputError


def test_a_small_run_loads_each_route_and_reuses_the_store(tmp_path: Path) -> None:
    seen: list[str] = []
    result = run_serve_bench(
        turns=60,
        clients=3,
        requests=4,
        workers=[1],
        routes=["search", "remember"],
        fake_embedder=True,
        data_dir=tmp_path / "d",
        progress=seen.append,
    )
    assert result["turns"] == 60 and result["embedder"] == "fake (HashingEmbedder)"
    [run] = result["runs"]  # type: ignore[misc]
    assert run["workers"] == 1
    for route in ("search", "remember"):
        figures = run["routes"][route]
        assert figures["requests"] == 12 and figures["errors"] == 0, figures
        assert figures["requests_per_s"] > 0
        assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["p99_ms"]
    assert any("storing 60 turns" in line for line in seen)
    # the filled store is kept and reused: nothing is stored the second time
    again = run_serve_bench(
        turns=60,
        clients=1,
        requests=1,
        workers=[1],
        routes=["search"],
        fake_embedder=True,
        data_dir=tmp_path / "d",
    )
    assert again["store_s"] == 0.0


def test_requests_are_bilingual_and_well_formed() -> None:
    search = requests_for("search", 4)
    assert all(r.method == "GET" and r.path.startswith("/v1/search?") for r in search)
    assert any("%E" in r.path for r in search)  # a Chinese query, percent-encoded
    [remember] = requests_for("remember", 1)
    body = json.loads(remember.body or b"")
    assert body["scope"]["user"] == WRITER and body["turns"][0]["text"]
    with pytest.raises(InvalidInputError, match="unknown route"):
        requests_for("nope", 1)


def test_an_unknown_route_is_refused_before_anything_runs(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="unknown route"):
        run_serve_bench(
            turns=10,
            clients=1,
            requests=1,
            workers=[1],
            routes=["searhc"],
            fake_embedder=True,
            data_dir=tmp_path / "d",
        )
    assert not (tmp_path / "d").exists()


def test_the_servers_port_is_kept_from_other_sockets_until_the_server_binds_it() -> None:
    port = free_port()
    # another process asking for it (a bind to port 0 or a connection would be given it) is
    # refused it
    with socket.socket() as other, pytest.raises(OSError, match="in use"):
        other.bind(("127.0.0.1", port))
    with socket.socket() as server:  # as `memstrata serve` binds (server.listen)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", port))
        server.listen()
