"""`memstrata proxy` as a process: it streams an answer through, stores the exchange, the
debounce queue curates it, and a signal stops it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx2

from memstrata.api import Memory
from memstrata.model import EpisodeFilter
from memstrata.settings import load_settings
from tests.e2e.live import live_server
from tests.e2e.test_proxy import FakeUpstream, sse
from tests.ports import free_port

RUN = "import sys; from memstrata.cli import main; sys.exit(main(sys.argv[1:]))"


def _wait_until(check: Callable[[], bool], proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60  # a bound so a broken start cannot hang the suite
    while time.monotonic() < deadline:
        if check():
            return
        if proc.poll() is not None:
            raise AssertionError(f"the proxy ended early:\n{log.read_text()}")
        time.sleep(0.1)
    raise AssertionError(f"the proxy never got there:\n{log.read_text()}")


def _healthy(port: int) -> bool:
    try:
        return httpx2.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200
    except httpx2.HTTPError:
        return False


def test_the_proxy_command_relays_stores_and_curates(tmp_path: Path) -> None:
    data = tmp_path / "d"
    fake = FakeUpstream()
    chunks = sse("No peanuts, ", "then.")
    fake.script.append(chunks)
    port = free_port()
    log = tmp_path / "proxy.log"
    env = {
        **os.environ,
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_CURATE_AFTER_S": "0.2",
        "MEMSTRATA_PROXY__UPSTREAM_API_KEY": "sk-up",
    }
    with live_server(fake.app()) as upstream, log.open("wb") as out:
        url = str(upstream.base_url).rstrip("/") + "/v1"
        args = ["proxy", "--upstream", url, "--port", str(port), "--local", "--data-dir", str(data)]
        proc = subprocess.Popen(
            [sys.executable, "-c", RUN, *args],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        try:
            _wait_until(lambda: _healthy(port), proc, log)
            body = {
                "model": "m1",
                "stream": True,
                "messages": [{"role": "user", "content": "I am allergic to peanuts."}],
            }
            with httpx2.stream(
                "POST",
                f"http://127.0.0.1:{port}/v1/chat/completions",
                json=body,
                headers={"X-Memstrata-User": "ann"},
                timeout=60,
            ) as answer:
                received = b"".join(answer.iter_raw())
            assert received == b"".join(chunks)
            assert fake.headers[0]["authorization"] == "Bearer sk-up"

            def curated() -> bool:
                with Memory.open(settings=load_settings(data_dir=data)) as memory:
                    return bool(memory.list("ann", "fact"))

            _wait_until(curated, proc, log)  # the debounce queue extracted the quiet thread
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
            assert proc.returncode in (0, -signal.SIGTERM), log.read_text()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=30)
    with Memory.open(settings=load_settings(data_dir=data)) as memory:
        turns = memory.list("ann", "episode", episode_filter=EpisodeFilter(surface="proxy"))
        facts = memory.list("ann", "fact")
    assert [(t.role.value, t.text) for t in turns] == [  # type: ignore[union-attr]
        ("user", "I am allergic to peanuts."),
        ("assistant", "No peanuts, then."),
    ]
    assert any("peanuts" in f.text for f in facts)  # type: ignore[union-attr]
    assert "proxy on http://127.0.0.1" in log.read_text()
    assert json.dumps(fake.requests[0]["messages"][-1]) == json.dumps(body["messages"][-1])
