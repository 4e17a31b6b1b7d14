"""`memstrata serve --workers 2`: two processes on one port, the sample loaded once, metrics
summed over the workers, JSON log lines with request ids, and a clean stop on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.ports import free_port


def _get(port: int, path: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as r:
        return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()


def _log_lines(log: Path) -> list[dict[str, Any]]:
    lines = []
    for raw in log.read_text(encoding="utf-8").splitlines():
        try:
            lines.append(json.loads(raw))
        except ValueError:
            continue  # a line a library printed itself
    return lines


def _serve_two_workers(
    port: int, env: dict[str, str], log: Path, *args: str
) -> subprocess.Popen[bytes]:
    """`memstrata serve --workers 2` on ``port``, its output in ``log``, in a session of its
    own so a failed test can end the workers too."""
    exe = str(Path(sys.executable).with_name("memstrata"))
    with log.open("wb") as log_fh:
        return subprocess.Popen(
            [exe, "serve", "--port", str(port), "--workers", "2", *args],
            env=env,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )


def _wait_for_workers(proc: subprocess.Popen[bytes], log: Path) -> set[int]:
    """The pids of the two workers, once both have logged their start."""
    deadline = time.monotonic() + 120  # a bound so a broken start cannot hang the suite
    workers: set[int] = set()
    while len(workers) < 2:
        assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
        workers = {
            line["pid"] for line in _log_lines(log) if line["message"].startswith("server worker ")
        }
        time.sleep(0.2)
    return workers


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_two_workers_serve_one_port_and_stop_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {
        **os.environ,
        "MEMSTRATA_DATA_DIR": str(tmp_path / "d"),
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_AUTO_CURATE": "false",
        "MEMSTRATA_AUTH": "local",  # no API keys: loopback only
        "MEMSTRATA_SHUTDOWN_TIMEOUT_S": "1",
        "TMPDIR": str(tmp),
    }
    log = tmp_path / "serve.log"
    proc = _serve_two_workers(port, env, log, "--log-format", "json")
    try:
        ready = _wait_for_workers(proc, log)
        assert len(ready) == 2 and proc.pid not in ready

        # every request on a new connection: the kernel hands each to either worker
        answered_by: set[int] = set()
        sent = 0
        while sent < 300 and len(answered_by) < 2:
            status, headers, _ = _get(port, "/healthz")
            sent += 1
            assert status == 200 and headers["x-request-id"]
            time.sleep(0.01)
            if sent % 20 == 0:
                answered_by = {
                    line["pid"]
                    for line in _log_lines(log)
                    if line["logger"] == "memstrata.access" and line["route"] == "/healthz"
                }

        def access_lines() -> list[dict[str, Any]]:
            return [
                line
                for line in _log_lines(log)
                if line["logger"] == "memstrata.access" and line["route"] == "/healthz"
            ]

        # a worker logs a request once its answer is sent: wait for the last lines to arrive
        deadline = time.monotonic() + 30
        access = access_lines()
        while len(access) < sent and time.monotonic() < deadline:
            time.sleep(0.05)
            access = access_lines()
        assert {line["pid"] for line in access} == ready, "both workers answered"
        assert len({line["request_id"] for line in access}) == len(access) == sent

        # the sample was loaded once, by the supervisor
        loads = [line for line in _log_lines(log) if "loaded the sample" in line["message"]]
        assert len(loads) == 1 and loads[0]["pid"] == proc.pid
        turns = int(loads[0]["message"].split(": ")[1].split()[0])
        _, _, body = _get(port, "/v1/stats?user=demo")
        assert json.loads(body)["episodes"] == turns

        # /metrics, whichever worker answers, sums both workers' counts
        for _ in range(4):
            _, headers, body = _get(port, "/metrics")
            assert headers["content-type"].startswith("text/plain")
            total = 0.0
            for family in text_string_to_metric_families(body.decode()):
                for sample in family.samples:
                    if (
                        sample.name == "memstrata_http_requests_total"
                        and sample.labels["route"] == "/healthz"
                    ):
                        total += sample.value
                    if sample.name == "memstrata_records" and sample.labels["kind"] == "episode":
                        assert sample.value == turns
            assert total == sent

        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)  # a bound so a hang fails the test instead of the suite
        except subprocess.TimeoutExpired:
            raise AssertionError(f"serve still running after SIGTERM:\n{log.read_text()}") from None
        assert proc.returncode == 0, log.read_text()
        assert not [pid for pid in ready if _alive(pid)]
        assert list(tmp.iterdir()) == [], "the metrics directory is removed"
        assert "Traceback" not in log.read_text()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def test_a_worker_ends_when_its_supervisor_is_killed(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "MEMSTRATA_DATA_DIR": str(tmp_path / "d"),
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_AUTO_CURATE": "false",
    }
    log = tmp_path / "serve.log"
    proc = _serve_two_workers(port, env, log, "--no-sample")
    workers: set[int] = set()
    try:
        workers = _wait_for_workers(proc, log)
        proc.kill()  # SIGKILL: the supervisor cannot tell its workers anything
        proc.wait(timeout=30)
        deadline = time.monotonic() + 60
        while [pid for pid in workers if _alive(pid)]:
            assert time.monotonic() < deadline, f"workers outlived the supervisor: {workers}"
            time.sleep(0.2)
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


# Imported by every interpreter started with it on PYTHONPATH, spawned workers included: a
# worker's server ignores the signal to stop, as a wedged one would.
DEAF_WORKER = """
import os
if os.environ.get("MEMSTRATA_TEST_DEAF_WORKER"):
    import uvicorn.server

    uvicorn.server.Server.handle_exit = lambda self, sig, frame: None
"""


def test_a_worker_that_does_not_stop_is_killed_after_the_grace(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(DEAF_WORKER, encoding="utf-8")
    port = free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hooks), os.environ.get("PYTHONPATH", "")]),
        "MEMSTRATA_TEST_DEAF_WORKER": "1",
        "MEMSTRATA_DATA_DIR": str(tmp_path / "d"),
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_AUTO_CURATE": "false",
        "MEMSTRATA_AUTH": "local",
        "MEMSTRATA_SHUTDOWN_TIMEOUT_S": "0",
    }
    log = tmp_path / "serve.log"
    proc = _serve_two_workers(port, env, log, "--no-sample")
    workers: set[int] = set()
    try:
        workers = _wait_for_workers(proc, log)
        assert _get(port, "/healthz")[0] == 200
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)  # a bound so a hang fails the test instead of the suite
        except subprocess.TimeoutExpired:
            raise AssertionError(f"serve still running after SIGTERM:\n{log.read_text()}") from None
        assert proc.returncode == 0, log.read_text()
        killed = {line["message"] for line in _log_lines(log) if "still busy" in line["message"]}
        assert killed == {
            f"server worker {pid} still busy 2 s after the signal; killing it" for pid in workers
        }
        assert not [pid for pid in workers if _alive(pid)]
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


# Makes every worker fail as it opens the memory (the supervisor never calls this).
BROKEN_WORKER = """
import os
if os.environ.get("MEMSTRATA_TEST_BROKEN_WORKER"):
    import memstrata.server.metrics as metrics

    def broken(directory):
        raise RuntimeError("this worker cannot start")

    metrics.use_multiprocess = broken
"""


def test_workers_that_cannot_start_end_the_server_with_a_config_error(tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(BROKEN_WORKER, encoding="utf-8")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hooks), os.environ.get("PYTHONPATH", "")]),
        "MEMSTRATA_TEST_BROKEN_WORKER": "1",
        "MEMSTRATA_DATA_DIR": str(tmp_path / "d"),
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_AUTO_CURATE": "false",
        "MEMSTRATA_AUTH": "local",
        "TMPDIR": str(tmp),
    }
    exe = str(Path(sys.executable).with_name("memstrata"))
    proc = subprocess.Popen(
        [exe, "serve", "--port", str(free_port()), "--workers", "2", "--no-sample"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=120)  # a bound so a hang fails the test
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=30)
        raise AssertionError("serve kept restarting workers that cannot start") from None
    text = out.decode()
    assert proc.returncode == 6, text
    assert "this worker cannot start" in text
    assert "error: a server worker could not start" in text
    assert list(tmp.iterdir()) == [], "the metrics directory is removed"
