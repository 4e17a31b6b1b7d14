"""server/auth.py on a small app: who is calling (keys, or local mode), roles, tenants, the
first admin key."""

from __future__ import annotations

import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.websockets import WebSocket, WebSocketDisconnect

from memstrata.api import Memory
from memstrata.errors import ConfigError, ForbiddenError, UnauthenticatedError
from memstrata.model import KeyRole, Scope
from memstrata.server.auth import (
    AdminDep,
    AuthMiddleware,
    AuthPolicy,
    KeyAuth,
    LocalAuth,
    ReaderDep,
    WriterDep,
    check_forget_scope,
    check_local_host,
    first_admin_key,
    local_refusal,
    tenant_user,
)
from memstrata.server.errors import install_error_handlers, status_for


def _app(policy: AuthPolicy) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app, status_for)
    app.add_middleware(AuthMiddleware, policy=policy, status_for=status_for)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/read")
    def read(caller: ReaderDep, user: str | None = None) -> dict[str, Any]:
        return {"user": tenant_user(caller, user)}

    @app.post("/write")
    def write(caller: WriterDep, user: str | None = None) -> dict[str, Any]:
        return {"user": tenant_user(caller, user)}

    @app.delete("/admin")
    def admin(caller: AdminDep) -> dict[str, Any]:
        return {"role": caller.role.value}

    return app


@pytest.fixture
def keyed(memory: Memory) -> Iterator[TestClient]:
    with TestClient(_app(KeyAuth(memory.keys))) as client:
        yield client


def _bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def _is_error(response: Any, status: int, error: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"] == error and body["message"], body


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Basic YWxpY2U6cHc="},
        {"Authorization": "Bearer"},
        {"Authorization": "Bearer ms_" + "A" * 43},
        {"X-API-Key": "ms_" + "A" * 43},
        {"X-API-Key": "not-a-key"},
    ],
)
def test_without_an_active_key_every_route_is_401(
    keyed: TestClient, memory: Memory, headers: dict[str, str]
) -> None:
    memory.keys.create("admin", None)
    for method, path in (("GET", "/read?user=a"), ("POST", "/write?user=a"), ("DELETE", "/admin")):
        response = keyed.request(method, path, headers=headers)
        _is_error(response, 401, "UnauthenticatedError")
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert keyed.get("/healthz", headers=headers).status_code == 200  # liveness is public


def test_a_key_is_accepted_as_bearer_or_x_api_key_but_not_two_keys(
    keyed: TestClient, memory: Memory
) -> None:
    one = memory.keys.create("reader", ["alice"]).secret
    two = memory.keys.create("reader", ["bob"]).secret
    assert keyed.get("/read", headers=_bearer(one)).json() == {"user": "alice"}
    assert keyed.get("/read", headers={"X-API-Key": two}).json() == {"user": "bob"}
    same = {**_bearer(one), "X-API-Key": one}
    assert keyed.get("/read", headers=same).json() == {"user": "alice"}
    both = {**_bearer(one), "X-API-Key": two}
    _is_error(keyed.get("/read", headers=both), 401, "UnauthenticatedError")


@pytest.mark.parametrize(
    ("role", "allowed"),
    [
        ("reader", {"/read"}),
        ("writer", {"/read", "/write"}),
        ("admin", {"/read", "/write", "/admin"}),
    ],
)
def test_each_role_reaches_what_it_may_and_gets_403_beyond(
    keyed: TestClient, memory: Memory, role: str, allowed: set[str]
) -> None:
    headers = _bearer(memory.keys.create(role, ["alice"]).secret)
    for method, path in (("GET", "/read"), ("POST", "/write"), ("DELETE", "/admin")):
        response = keyed.request(method, path, headers=headers)
        if path in allowed:
            assert response.status_code == 200, response.text
        else:
            _is_error(response, 403, "ForbiddenError")
            assert role in response.json()["message"]


def test_the_user_comes_from_what_the_key_allows(keyed: TestClient, memory: Memory) -> None:
    alice = _bearer(memory.keys.create("writer", ["alice"]).secret)
    pair = _bearer(memory.keys.create("writer", ["alice", "bob"]).secret)
    every = _bearer(memory.keys.create("writer", None).secret)
    assert keyed.get("/read", headers=alice).json() == {"user": "alice"}
    assert keyed.get("/read", params={"user": "alice"}, headers=alice).json() == {"user": "alice"}
    _is_error(keyed.get("/read", params={"user": "bob"}, headers=alice), 403, "ForbiddenError")
    _is_error(keyed.post("/write", params={"user": "bob"}, headers=alice), 403, "ForbiddenError")
    assert keyed.get("/read", params={"user": "bob"}, headers=pair).json() == {"user": "bob"}
    _is_error(keyed.get("/read", headers=pair), 422, "InvalidInputError")  # which one?
    _is_error(keyed.get("/read", params={"user": "carol"}, headers=pair), 403, "ForbiddenError")
    _is_error(keyed.get("/read", headers=every), 422, "InvalidInputError")
    assert keyed.get("/read", params={"user": "carol"}, headers=every).json() == {"user": "carol"}


def test_a_revoked_key_is_refused_at_its_next_request(keyed: TestClient, memory: Memory) -> None:
    created = memory.keys.create("admin", None)
    assert keyed.delete("/admin", headers=_bearer(created.secret)).status_code == 200
    memory.keys.revoke(created.key.id)
    response = keyed.delete("/admin", headers=_bearer(created.secret))
    _is_error(response, 401, "UnauthenticatedError")
    assert "revoked" in response.json()["message"]


def test_forgetting_a_thread_is_a_writers_and_a_whole_user_an_admins(memory: Memory) -> None:
    from memstrata.server.auth import Principal

    writer = Principal.of(memory.keys.create("writer", ["alice"]).key)
    admin = Principal.of(memory.keys.create("admin", ["alice"]).key)
    check_forget_scope(writer, Scope("alice", "t1"))
    check_forget_scope(writer, Scope("alice", agent="a1"))
    with pytest.raises(ForbiddenError, match="whole user"):
        check_forget_scope(writer, Scope("alice"))
    check_forget_scope(admin, Scope("alice"))
    reader = Principal.of(memory.keys.create("reader", ["alice"]).key)
    with pytest.raises(ForbiddenError):
        check_forget_scope(reader, Scope("alice", "t1"))


# --- local mode ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.1:8765", "localhost", "localhost:1", "[::1]:8765", "[::1]"]
)
def test_local_mode_serves_requests_for_the_loopback_without_a_key(host: str) -> None:
    with TestClient(_app(LocalAuth()), base_url="http://127.0.0.1:8765") as client:
        response = client.delete("/admin", headers={"Host": host})
        assert response.status_code == 200 and response.json() == {"role": "admin"}
        assert client.get("/read", params={"user": "anyone"}, headers={"Host": host}).json() == {
            "user": "anyone"
        }
        ok = {"Host": host, "Origin": "http://localhost:3000"}
        assert client.get("/read?user=u", headers=ok).status_code == 200


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "evil.example"},
        {"Host": "evil.example:8765"},
        {"Host": "127.0.0.1.evil.example"},
        {"Host": "localhost.evil.example:8765"},
        {"Host": "10.0.0.1:8765"},
        {"Host": "127.0.0.1:notaport"},
        {"Host": "127.0.0.1", "Origin": "http://evil.example"},
        {"Host": "127.0.0.1", "Origin": "null"},
    ],
)
def test_local_mode_refuses_other_hosts_and_origins_dns_rebinding(
    headers: dict[str, str],
) -> None:
    with TestClient(_app(LocalAuth()), base_url="http://127.0.0.1:8765") as client:
        for method, path in (("GET", "/read?user=u"), ("DELETE", "/admin"), ("GET", "/healthz")):
            _is_error(client.request(method, path, headers=headers), 403, "ForbiddenError")


def test_local_mode_refuses_a_request_without_a_host() -> None:
    assert local_refusal([]) is not None
    assert local_refusal([(b"host", b"127.0.0.1"), (b"host", b"evil.example")]) is not None
    assert local_refusal([(b"host", b"127.0.0.1:80")]) is None


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost", "127.0.0.2", "LOCALHOST"])
def test_local_mode_binds_the_loopback(host: str) -> None:
    check_local_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.com", ""])
def test_local_mode_refuses_to_bind_other_addresses(host: str) -> None:
    with pytest.raises(ConfigError, match="local mode"):
        check_local_host(host)


# --- the first start ----------------------------------------------------------------------


def test_the_first_start_writes_an_admin_key_for_all_users_to_a_private_file(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "data" / "admin.key"
    assert first_admin_key(memory.keys, path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    secret = path.read_text(encoding="ascii").strip()
    key = memory.keys.authenticate(secret)
    assert key.role is KeyRole.ADMIN and key.users is None
    assert not first_admin_key(memory.keys, path)  # a key exists: nothing new
    assert path.read_text(encoding="ascii").strip() == secret
    assert [p.name for p in path.parent.iterdir()] == ["admin.key"]  # no temporary file left
    memory.keys.revoke(key.id)  # every key revoked: the next start makes a new one
    assert first_admin_key(memory.keys, path)
    assert path.read_text(encoding="ascii").strip() != secret
    assert len(memory.keys.list()) == 2


def test_no_admin_key_when_keys_exist(memory: Memory, tmp_path: Path) -> None:
    memory.keys.create("reader", ["alice"])
    assert not first_admin_key(memory.keys, tmp_path / "admin.key")
    assert not (tmp_path / "admin.key").exists()


def test_a_key_file_that_cannot_be_written_stores_no_key(memory: Memory, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    with pytest.raises(ConfigError, match="admin key"):
        first_admin_key(memory.keys, blocker / "admin.key")
    assert memory.keys.list() == []


def test_a_key_file_that_cannot_be_put_in_place_leaves_no_key_active(
    memory: Memory, tmp_path: Path
) -> None:
    path = tmp_path / "keys" / "admin.key"
    path.mkdir(parents=True)  # a directory where the file goes: the rename fails after the store
    with pytest.raises(ConfigError, match="admin key"):
        first_admin_key(memory.keys, path)
    assert [k.active for k in memory.keys.list()] == [False]
    assert [p.name for p in path.parent.iterdir()] == ["admin.key"]  # no temporary file


def test_unauthenticated_and_forbidden_have_their_status() -> None:
    assert status_for(UnauthenticatedError("x")) == 401
    assert status_for(ForbiddenError("x")) == 403


def test_a_websocket_without_a_key_is_closed_before_it_is_accepted(memory: Memory) -> None:
    app = _app(KeyAuth(memory.keys))

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()
        await socket.send_text("accepted")
        await socket.close()

    secret = memory.keys.create("reader", ["alice"]).secret
    with TestClient(app) as client:
        with pytest.raises(WebSocketDisconnect) as closed, client.websocket_connect("/ws"):
            pass
        assert closed.value.code == 1008
        with client.websocket_connect("/ws", headers=_bearer(secret)) as socket:
            assert socket.receive_text() == "accepted"
