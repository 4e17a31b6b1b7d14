"""`memstrata serve` starting and stopping: a busy port is a clear config error, and a signal
ends the process even while a request is stuck in the embedder."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from memstrata.cli import main
from tests.ports import free_port

# A console script whose embedder never returns: it marks that it was entered, then sleeps.
SLOW_EMBEDDER = """
import pathlib, sys, time
from memstrata.embed import fake
marker = pathlib.Path(sys.argv[1])
def never_returns(self, texts):
    marker.write_text("embedding", encoding="utf-8")
    while True:
        time.sleep(1)
fake.HashingEmbedder.embed_documents = never_returns
from memstrata.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_serve_on_a_busy_port_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code = main(
            ["serve", "--port", str(port), "--no-sample", "--data-dir", str(tmp_path / "d")]
        )
    assert code == 6
    err = capsys.readouterr().err
    assert err.startswith("error: ") and f"127.0.0.1:{port}" in err and "--port" in err


def _wait_until(check: object, proc: subprocess.Popen[bytes], log: Path, what: str) -> None:
    deadline = time.monotonic() + 60  # a bound so a broken start cannot hang the suite
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        if proc.poll() is not None:
            raise AssertionError(f"server ended before {what}:\n{log.read_text()}")
        time.sleep(0.1)
    raise AssertionError(f"no {what}:\n{log.read_text()}")


def _healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2):
            return True
    except OSError:
        return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_serve_while_a_request_is_embedding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals
) -> None:
    data = tmp_path / "d"
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "fake")
    assert main(["remember", "I drink oolong tea", "--user", "u", "--data-dir", str(data)]) == 0
    port = free_port()
    marker = tmp_path / "entered"
    script = tmp_path / "slow_serve.py"
    script.write_text(SLOW_EMBEDDER, encoding="utf-8")
    env = {
        **os.environ,
        "MEMSTRATA_DATA_DIR": str(data),
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_AUTO_CURATE": "false",
        "MEMSTRATA_SHUTDOWN_TIMEOUT_S": "0",
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as log_fh:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(marker), "serve", "--port", str(port), "--no-sample"],
            env=env,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        _wait_until(lambda: _healthy(port), proc, log, "healthz")
        secret = (data / "admin.key").read_text(encoding="ascii").strip()

        def stuck_search() -> None:
            url = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/search?user=u&q=tea",
                headers={"Authorization": f"Bearer {secret}"},
            )
            try:
                with urllib.request.urlopen(url, timeout=120):
                    pass
            except OSError:
                pass

        threading.Thread(target=stuck_search, daemon=True).start()
        _wait_until(marker.exists, proc, log, "embedding")
        proc.send_signal(sig)
        try:
            proc.wait(timeout=60)  # a bound so a hang fails the test instead of the suite
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"serve still running after {sig.name}:\n{log.read_text()}"
            ) from None
        assert proc.returncode in (0, -sig, 128 + sig), log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)


def test_serve_on_an_address_this_machine_lacks_is_a_config_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(tmp_path / "d")
    args = ["serve", "--host", "192.0.2.1", "--port", str(free_port()), "--no-sample"]
    assert main([*args, "--data-dir", data]) == 6
    err = capsys.readouterr().err
    assert err.startswith("error: cannot listen on 192.0.2.1:") and "--host" in err
