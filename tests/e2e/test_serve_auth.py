"""`memstrata serve` behind API keys by default, and local mode (no keys) only when asked for:
loopback only, and only requests for the loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.cli import main
from memstrata.settings import load_settings
from tests.keyed import keyed_app
from tests.ports import free_port


@pytest.mark.parametrize("how", ["flag", "env"])
def test_local_mode_refuses_to_bind_anything_but_the_loopback(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    how: str,
) -> None:
    args = ["serve", "--host", "0.0.0.0", "--port", str(free_port()), "--no-sample"]
    if how == "flag":
        args.append("--local")
    else:
        monkeypatch.setenv("MEMSTRATA_AUTH", "local")
    assert main([*args, "--data-dir", str(tmp_path / "d")]) == 6
    err = capsys.readouterr().err
    assert err.startswith("error: local mode") and "0.0.0.0" in err
    assert not (tmp_path / "d").exists()  # refused before anything was opened


def _call(
    port: int,
    method: str,
    path: str,
    key: str | None,
    body: object = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    headers = {**(headers or {}), **({"Authorization": f"Bearer {key}"} if key else {})}
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, headers=headers, method=method
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_local_mode_serves_without_keys_and_only_requests_for_the_loopback(
    tmp_path: Path,
) -> None:
    data = tmp_path / "d"
    port = free_port()
    env = {
        **os.environ,
        "MEMSTRATA_DATA_DIR": str(data),
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_AUTO_CURATE": "false",
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as log_fh:
        proc = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("memstrata")),
                "serve",
                "--local",
                "--port",
                str(port),
            ],
            env=env,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 60  # a bound so a broken start cannot hang the suite
        while True:
            try:
                if _call(port, "GET", "/healthz", None)[0] == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(log.read_text())
            time.sleep(0.2)
        status, body = _call(port, "GET", "/v1/stats?user=demo", None)
        assert status == 200 and isinstance(body["episodes"], int) and body["episodes"] >= 10
        status, body = _call(
            port, "GET", "/v1/stats?user=demo", None, headers={"Host": f"localhost:{port}"}
        )
        assert status == 200
        for headers in (
            {"Host": f"rebound.example:{port}"},
            {"Host": f"127.0.0.1:{port}", "Origin": "http://rebound.example"},
        ):
            status, body = _call(port, "GET", "/v1/stats?user=demo", None, headers=headers)
            assert status == 403 and body["error"] == "ForbiddenError", body
        assert not (data / "admin.key").exists()  # no key made in local mode
        assert "without API keys" in log.read_text()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_an_unauthenticated_body_is_refused_before_it_is_read(memory: Memory) -> None:
    from fastapi.testclient import TestClient

    app = keyed_app(memory, max_request_bytes=2048)
    with TestClient(app) as client:
        big = json.dumps({"scope": {"user": "a"}, "turns": [{"text": "x" * 10_000}]})
        response = client.post(
            "/v1/remember", content=big, headers={"content-type": "application/json"}
        )
        assert response.status_code == 401 and response.json()["error"] == "UnauthenticatedError"
    assert memory.stats("a").episodes == 0


def test_the_api_description_and_liveness_need_no_key(data_dir: Path) -> None:
    from fastapi.testclient import TestClient

    with (
        Memory.open(settings=load_settings(data_dir=data_dir)) as mem,
        TestClient(keyed_app(mem)) as client,
    ):
        assert client.get("/healthz").status_code == 200
        assert client.get("/openapi.json").status_code == 200
        assert client.get("/docs").status_code == 200
        assert client.get("/v1/stats", params={"user": "a"}).status_code == 401


def test_a_running_server_keeps_roles_and_tenants_and_a_revoke_from_another_process(
    tmp_path: Path,
) -> None:
    data = tmp_path / "d"
    port = free_port()
    env = {
        **os.environ,
        "MEMSTRATA_DATA_DIR": str(data),
        "MEMSTRATA_EMBEDDER__PROVIDER": "fake",
        "MEMSTRATA_AUTO_CURATE": "false",
        "MEMSTRATA_LOAD_SAMPLE": "false",
    }
    exe = str(Path(sys.executable).with_name("memstrata"))
    log = tmp_path / "serve.log"
    with log.open("wb") as log_fh:
        proc = subprocess.Popen(
            [exe, "serve", "--port", str(port)],
            env=env,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        deadline = time.monotonic() + 60  # a bound so a broken start cannot hang the suite
        while not (data / "admin.key").exists() or _call(port, "GET", "/healthz", None)[0] != 200:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(log.read_text())
            time.sleep(0.2)
        admin = (data / "admin.key").read_text(encoding="ascii").strip()
        for user, text in (("alice", "alice likes oolong"), ("bob", "bob's vault code 4711")):
            body = {"scope": {"user": user}, "turns": [{"text": text}]}
            assert _call(port, "POST", "/v1/remember", admin, body)[0] == 201
        status, made = _call(
            port, "POST", "/v1/keys", admin, {"role": "reader", "users": ["alice"]}
        )
        assert status == 201 and isinstance(made, dict)
        reader = str(made["key"])
        status, listed = _call(port, "GET", "/v1/list", reader)
        assert status == 200 and isinstance(listed, dict)
        assert [r["text"] for r in listed["items"]] == ["alice likes oolong"]
        for method, path, body in (
            ("GET", "/v1/list?user=bob", None),
            ("GET", "/v1/search?user=bob&q=vault", None),
            ("POST", "/v1/remember", {"scope": {}, "turns": [{"text": "planted"}]}),
            ("DELETE", "/v1/scopes?user=alice", None),
        ):
            status, answer = _call(port, method, path, reader, body)
            assert status == 403 and "4711" not in json.dumps(answer), (method, path, answer)
        status, _ = _call(port, "GET", "/v1/list?user=alice&user=bob", reader)
        assert status == 422
        # revoked by another process (the CLI): refused at the server's next request
        revoke = subprocess.run(
            [exe, "keys", "revoke", str(made["id"])],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert revoke.returncode == 0, revoke.stderr
        status, answer = _call(port, "GET", "/v1/list", reader)
        assert status == 401 and isinstance(answer, dict) and "revoked" in str(answer["message"])
        for user in ("alice", "bob"):  # nothing planted, nothing forgotten
            status, stats = _call(port, "GET", f"/v1/stats?user={user}", admin)
            assert status == 200 and isinstance(stats, dict) and stats["episodes"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)
