"""Two API processes (`memstrata serve`, each with its own data directory, as on two machines)
share one database server: a turn written through one is found by the next search through
the other, both ways, with no restart and no wait for the model. Each process keeps its own
search index, built from the shared store and kept current from its change feed.

Runs on PostgreSQL (``MEMSTRATA_TEST_POSTGRES_URL``) and MySQL/MariaDB
(``MEMSTRATA_TEST_MYSQL_URL``), skipping a backend whose variable is unset (failing under
``CI=true``); ``.ci/databases.sh`` starts both."""

from __future__ import annotations

import json
import os
import random
import signal
import string
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.contract.backends import fresh_url
from tests.ports import free_port

ROUNDS = 5


def _call(port: int, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}",
        data=data,
        method=method,
        headers={"Content-Type": "application/json"} if data else {},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


@contextmanager
def _serve(store_url: str, data_dir: Path, **settings: str) -> Iterator[int]:
    """`memstrata serve` on a free port over ``store_url`` (with more ``settings`` as
    ``MEMSTRATA_*`` variables); its port once it answers."""
    port = free_port()
    log = data_dir.parent / f"{data_dir.name}.log"
    env = {
        **os.environ,
        "MEMSTRATA_DATA_DIR": str(data_dir),
        "MEMSTRATA_STORE_URL": store_url,
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_AUTO_CURATE": "false",
        "MEMSTRATA_LOAD_SAMPLE": "false",
        "MEMSTRATA_AUTH": "local",  # no API keys: loopback only
        "MEMSTRATA_SHUTDOWN_TIMEOUT_S": "1",
        **{f"MEMSTRATA_{name.upper()}": value for name, value in settings.items()},
    }
    exe = str(Path(sys.executable).with_name("memstrata"))
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [exe, "serve", "--port", str(port)],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120  # a bound so a broken start cannot hang the suite
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            try:
                _call(port, "GET", "/healthz")
                break
            except OSError:
                time.sleep(0.2)
        yield port
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _word(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase, k=12))


@pytest.mark.parametrize("backend", ["postgresql", "mysql"])
def test_a_write_through_one_api_process_is_searchable_through_the_other(
    backend: str, tmp_path: Path
) -> None:
    rng = random.Random(11)
    with ExitStack() as stack:
        store_url = stack.enter_context(fresh_url(backend, tmp_path))
        first = stack.enter_context(_serve(store_url, tmp_path / "one"))
        second = stack.enter_context(_serve(store_url, tmp_path / "two"))
        scope = {"user": "shared"}
        filler = [{"text": f"filler {_word(rng)}"} for _ in range(10)]
        stored = _call(first, "POST", "/v1/remember", {"scope": scope, "turns": filler})
        ids = {episode["id"] for episode in stored}
        for port in (first, second):  # both indexes built before the writes below
            assert len(_call(port, "GET", "/v1/search?q=filler&user=shared&k=20")["items"]) == 10
        missed = []
        for n in range(ROUNDS):
            for writer, reader in ((first, second), (second, first)):
                word = _word(rng)
                body = {"scope": scope, "turns": [{"text": f"round {n} {word}"}]}
                (written,) = _call(writer, "POST", "/v1/remember", body)
                ids.add(written["id"])
                page = _call(reader, "GET", f"/v1/search?q={word}&user=shared&k=3")
                if written["id"] not in [hit["id"] for hit in page["items"]]:
                    missed.append(f"round {n}: {word} written on {writer}, not found on {reader}")
        assert not missed, missed
        for port in (first, second):  # each index holds every record, once
            page = _call(port, "GET", f"/v1/search?q=round&user=shared&k={len(ids) + 5}")
            assert sorted(hit["id"] for hit in page["items"]) == sorted(ids)


def _trace(data_dir: Path) -> str:
    return "".join(p.read_text("utf-8") for p in (data_dir / "trace").rglob("*.jsonl"))


@pytest.mark.parametrize("backend", ["postgresql", "mysql"])
def test_a_forget_through_one_api_process_erases_the_trace_line_the_other_wrote(
    backend: str, tmp_path: Path
) -> None:
    secret = "my locker code at the Hallowmere gym is 4471"
    with ExitStack() as stack:
        store_url = stack.enter_context(fresh_url(backend, tmp_path))
        first = stack.enter_context(_serve(store_url, tmp_path / "one", erasure_sweep_s="0.2"))
        second = stack.enter_context(_serve(store_url, tmp_path / "two", erasure_sweep_s="0.2"))
        scope = {"user": "shared"}
        (written,) = _call(
            second, "POST", "/v1/remember", {"scope": scope, "turns": [{"text": secret}]}
        )
        assert "Hallowmere" in _trace(tmp_path / "two")  # the line is in the writer's trace
        assert _call(second, "GET", "/v1/search?q=Hallowmere&user=shared&k=3")["items"]
        report = _call(first, "POST", f"/v1/items/{written['id']}/forget?user=shared")
        assert report["deleted"] == [written["id"]]
        # the other process's data directory, unless its sweep (every 0.2 s) already applied it
        assert report["counts"].get("sites_waiting", 0) in (0, 1)
        deadline = time.monotonic() + 60
        while "Hallowmere" in _trace(tmp_path / "two") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "Hallowmere" not in _trace(tmp_path / "two")
        assert written["id"] in _trace(tmp_path / "two")  # a tombstone stays
        assert not _call(second, "GET", "/v1/search?q=Hallowmere&user=shared&k=3")["items"]
