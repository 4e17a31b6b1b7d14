"""``memstrata bench serve``: requests/s and latency of the HTTP server under concurrent clients.

One user's scope is filled with synthetic bilingual turns (English, Chinese and mixed, the
generator of ``bench scale``), then ``memstrata serve`` runs as a child process on a free
loopback port over that data directory, with ``--workers`` processes. For each route
(``search``, ``context``, ``remember``), ``clients`` threads, each on its own keep-alive
connection, first warm up (every worker builds its index of the scope), then all start together
and send ``requests`` requests each; requests/s is the requests answered over the wall time
from that start to the last answer, and latencies are per request, as the client sees them.
A route the server does not serve (not in its OpenAPI document) is reported as such.
Every request is bounded (a timeout) and the server is stopped at the end, whatever happens.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from memstrata.bench.metrics import percentile
from memstrata.bench.scale import QUERIES, synthetic_turns
from memstrata.errors import ConfigError, InvalidInputError
from memstrata.model import JsonValue, Turn

USER: Final = "bench"
#: the user whose scope remember writes to, so that the searched scope keeps its size
WRITER: Final = "bench-writes"
#: routes measured, in order, with the path the server must serve for each
ROUTES: Final = {"search": "/v1/search", "context": "/v1/context", "remember": "/v1/remember"}
REQUEST_TIMEOUT_S: Final = 120.0
START_TIMEOUT_S: Final = 600.0
_SESSION_TURNS: Final = 20
_SERVE = "import sys; from memstrata.cli import main; sys.exit(main(sys.argv[1:]))"


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    body: bytes | None = None


def fill_scope(data_dir: Path, turns: int, env: dict[str, str]) -> float:
    """Store ``turns`` synthetic turns for :data:`USER` in ``data_dir`` (in sessions of 20),
    unless the scope already holds that many; returns the seconds it took."""
    from memstrata.api import Memory
    from memstrata.settings import load_settings

    overrides: dict[str, Any] = {"data_dir": data_dir}
    if env.get("MEMSTRATA_EMBEDDER__PROVIDER") == "fake":
        overrides["embedder"] = {"provider": "fake"}
    started = time.perf_counter()
    with Memory.open(settings=load_settings(**overrides)) as memory:
        held = memory.stats(USER).episodes
        if held >= turns:
            return 0.0
        if held:
            raise InvalidInputError(
                f"{data_dir} holds {held} turns of {USER!r}, fewer than {turns}; use an empty "
                "data directory"
            )
        episodes = synthetic_turns(turns, user=USER)
        for start in range(0, turns, _SESSION_TURNS):
            batch = episodes[start : start + _SESSION_TURNS]
            memory.remember(
                [Turn(text=e.text, speaker=e.speaker, role=e.role, time=e.time) for e in batch],
                USER,
                session_id=batch[0].session_id,
            )
    return time.perf_counter() - started


def free_port() -> int:
    """A loopback port for the server, kept from every other process until it binds it.

    A port bound and closed at once may be given to another process (a bind to port 0, an
    outgoing connection) before the server starts, which then fails to listen or, worse, the
    bench measures a server that is not its own. So the port is left in TIME_WAIT (connected
    to, the accepted end closed first): the kernel gives it to no other socket for a minute,
    while ``memstrata serve``, which binds with ``SO_REUSEADDR``, takes it at once."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)
        port = int(listener.getsockname()[1])
        with socket.create_connection(("127.0.0.1", port)):
            accepted, _ = listener.accept()
            accepted.close()
    return port


def _get(port: int, path: str, timeout: float = 5.0) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@contextmanager
def running_server(
    data_dir: Path, workers: int, env: dict[str, str], log_path: Path
) -> Iterator[int]:
    """``memstrata serve`` over ``data_dir`` on a free loopback port, until the block ends;
    yields the port once ``/healthz`` answers."""
    port = free_port()
    argv = [sys.executable, "-c", _SERVE, "serve", "--host", "127.0.0.1", "--port", str(port)]
    argv += ["--workers", str(workers), "--no-sample", "--data-dir", str(data_dir)]
    argv += ["--log-format", "json"]
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            argv,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                raise ConfigError(f"the server ended at start:\n{log_path.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise ConfigError(f"the server did not answer within {START_TIMEOUT_S:.0f} s")
            try:
                if _get(port, "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.2)
        yield port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=30)


def requests_for(route: str, n: int, *, offset: int = 0) -> list[Request]:
    """``n`` requests of ``route``, queries and turns taken in turn from fixed lists."""
    out = []
    for i in range(offset, offset + n):
        query = QUERIES[i % len(QUERIES)]
        if route == "search":
            params = urllib.parse.urlencode({"q": query, "user": USER, "k": 10})
            out.append(Request("GET", f"/v1/search?{params}"))
        elif route == "context":
            params = urllib.parse.urlencode({"q": query, "user": USER, "budget": 1000})
            out.append(Request("GET", f"/v1/context?{params}"))
        elif route == "remember":
            body = {
                "scope": {"user": WRITER},  # the searched scope keeps its size
                "turns": [{"text": f"{query} ({i}) 我记下了这件事", "speaker": "user"}],
            }
            out.append(Request("POST", "/v1/remember", json.dumps(body).encode()))
        else:
            raise InvalidInputError(f"unknown route {route!r}; expected {', '.join(ROUTES)}")
    return out


def _send(conn: http.client.HTTPConnection, request: Request) -> int:
    headers = {"content-type": "application/json"} if request.body is not None else {}
    conn.request(request.method, request.path, body=request.body, headers=headers)
    response = conn.getresponse()
    response.read()
    return response.status


def load(
    port: int, per_client: Sequence[Sequence[Request]], warm_up: Sequence[Sequence[Request]]
) -> dict[str, JsonValue]:
    """Each client sends its warm-up requests, waits for the others, then its requests;
    returns requests/s over the timed part and latency percentiles in milliseconds."""
    clients = len(per_client)
    gate = threading.Barrier(clients + 1)
    latencies: list[list[float]] = [[] for _ in range(clients)]
    failures: list[list[str]] = [[] for _ in range(clients)]
    finished: list[float] = [0.0] * clients

    def client(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        try:
            for request in warm_up[i]:
                _send(conn, request)
        except (OSError, http.client.HTTPException) as exc:
            failures[i].append(f"warm-up: {exc}")
        try:
            gate.wait(timeout=START_TIMEOUT_S)
        except threading.BrokenBarrierError:
            return
        for request in per_client[i]:
            started = time.perf_counter()
            try:
                status = _send(conn, request)
            except (OSError, http.client.HTTPException) as exc:
                failures[i].append(str(exc))
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
                continue
            latencies[i].append((time.perf_counter() - started) * 1000)
            if status >= 400:
                failures[i].append(f"HTTP {status}")
        finished[i] = time.perf_counter()
        conn.close()

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for t in threads:
        t.start()
    gate.wait(timeout=START_TIMEOUT_S)
    started = time.perf_counter()
    for t in threads:
        t.join()
    wall = max(finished) - started
    all_ms = [ms for client_ms in latencies for ms in client_ms]
    errors = [f for client_failures in failures for f in client_failures]
    answered = len(all_ms)
    result: dict[str, JsonValue] = {
        "requests": sum(len(r) for r in per_client),
        "errors": len(errors),
        "seconds": round(wall, 3),
        "requests_per_s": round(answered / wall, 1) if wall > 0 else None,
    }
    if all_ms:
        for q in (50, 95, 99):
            result[f"p{q}_ms"] = round(percentile(all_ms, q), 1)
    if errors:
        result["first_errors"] = sorted(set(errors))[:5]
    return result


def served_paths(port: int) -> set[str]:
    status, body = _get(port, "/openapi.json", timeout=60)
    if status != 200:
        raise ConfigError(f"the server's OpenAPI document answered {status}")
    return set(json.loads(body)["paths"])


def run_serve_bench(
    *,
    turns: int,
    clients: int,
    requests: int,
    workers: Sequence[int],
    routes: Sequence[str],
    fake_embedder: bool,
    data_dir: Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, JsonValue]:
    """Fill a scope of ``turns`` turns, then for each worker count load each route."""
    unknown = [r for r in routes if r not in ROUTES]
    if unknown:
        raise InvalidInputError(f"unknown route(s) {unknown}; expected {', '.join(ROUTES)}")
    # no API keys: the local mode, which serves the loopback only
    env = {"MEMSTRATA_AUTO_CURATE": "false", "MEMSTRATA_LOAD_SAMPLE": "false"}
    env["MEMSTRATA_AUTH"] = "local"
    if fake_embedder:
        env["MEMSTRATA_EMBEDDER__PROVIDER"] = "fake"
    with tempfile.TemporaryDirectory(prefix="memstrata-bench-serve-") as tmp:
        where = data_dir if data_dir is not None else Path(tmp) / "data"
        progress(f"storing {turns} turns in {where}")
        fill_s = fill_scope(where, turns, env)
        runs: list[JsonValue] = []
        for count in workers:
            progress(f"serving with {count} worker(s)")
            log_path = Path(tmp) / f"serve-{count}.log"
            with running_server(where, count, env, log_path) as port:
                served = served_paths(port)
                measured: dict[str, JsonValue] = {}
                for route in routes:
                    if ROUTES[route] not in served:
                        measured[route] = "not served"
                        continue
                    progress(f"{route}: {clients} clients x {requests} requests")
                    timed = requests_for(route, clients * requests)
                    warm = requests_for(route, clients * 2, offset=clients * requests)
                    measured[route] = load(
                        port,
                        [timed[i::clients] for i in range(clients)],
                        [warm[i::clients] for i in range(clients)],
                    )
                runs.append({"workers": count, "routes": measured})
    return {
        "turns": turns,
        "user": USER,
        "embedder": "fake (HashingEmbedder)" if fake_embedder else "configured",
        "clients": clients,
        "requests_per_client": requests,
        "store_s": round(fill_s, 1),
        "cpus": os.cpu_count(),
        "runs": runs,
    }
