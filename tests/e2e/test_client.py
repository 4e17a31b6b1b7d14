"""The remote client against a live server: what only a server has (keys, their roles and
tenants, a server that is away or slow, a failure it does not explain), each raised as the
class of the tree, naming the server and never the key. The verbs themselves are the agent
contract's (tests/contract/test_agent_contract.py)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI

import memstrata
from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import (
    ForbiddenError,
    NotFoundError,
    RemoteError,
    UnauthenticatedError,
)
from memstrata.server.auth import LocalAuth
from memstrata.server.http import create_app
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.e2e.live import live_server
from tests.keyed import keyed_app
from tests.ports import free_port


@pytest.fixture
def mem(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    settings = load_settings(data_dir=data_dir, auto_curate=False)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as m:
        yield m


@pytest.fixture
def url(mem: Memory) -> Iterator[str]:
    with live_server(keyed_app(mem)) as http:
        yield str(http.base_url)


def _key(mem: Memory, role: str, users: list[str] | None) -> str:
    return mem.keys.create(role, users, name="client tests").secret


def test_connect_asks_who_is_calling(mem: Memory, url: str) -> None:
    key = _key(mem, "writer", ["alice"])
    with memstrata.connect(url, key) as remote:
        me = remote.me()
        assert (me["mode"], me["role"], me["users"]) == ("keys", "writer", ["alice"])
        [ep] = remote.remember("我喜欢龙井茶", "alice")
    assert mem.get(ep.id, "alice") == ep  # written through the server, into the memory
    assert key not in repr(remote)


def test_a_key_the_server_does_not_take_is_unauthenticated(mem: Memory, url: str) -> None:
    wrong = "ms_" + "x" * 43
    with pytest.raises(UnauthenticatedError) as refused:
        memstrata.connect(url, wrong)
    assert wrong not in str(refused.value)
    with pytest.raises(UnauthenticatedError):
        memstrata.connect(url)  # no key, keys required
    revoked = mem.keys.create("reader", None, name="old")
    with memstrata.connect(url, revoked.secret) as remote:
        mem.keys.revoke(revoked.key.id)  # takes effect at the next request
        with pytest.raises(UnauthenticatedError):
            remote.search("tea", "alice")


def test_a_keys_role_and_users_bound_what_it_may_do(mem: Memory, url: str) -> None:
    with memstrata.connect(url, _key(mem, "reader", ["alice"])) as reader:
        assert list(reader.search("tea", "alice")) == []
        with pytest.raises(ForbiddenError):
            reader.remember("I like tea", "alice")
        with pytest.raises(ForbiddenError):
            reader.search("tea", "bob")  # a user the key does not serve
    [bobs] = mem.remember(["Bob's vault code is 4711"], "bob")
    with memstrata.connect(url, _key(mem, "writer", ["alice"])) as writer:
        with pytest.raises(ForbiddenError):
            writer.get(bobs.id, "bob")
        with pytest.raises(NotFoundError):  # in alice's memory it is no one's
            writer.get(bobs.id, "alice")
    assert mem.get(bobs.id, "bob") == bobs


def test_a_server_that_cannot_be_reached_is_named(mem: Memory) -> None:
    key = "ms_" + "s" * 43
    port = free_port()
    with pytest.raises(RemoteError) as away:
        memstrata.connect(f"http://127.0.0.1:{port}", key)
    message = str(away.value)
    assert f"http://127.0.0.1:{port}" in message and "cannot reach" in message
    assert key not in message and away.value.status is None


def test_a_server_that_does_not_answer_times_out() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)  # connections are taken, nothing is ever answered
    try:
        port = listener.getsockname()[1]
        with pytest.raises(RemoteError, match=r"did not answer within 0\.3 s") as slow:
            memstrata.connect(f"http://127.0.0.1:{port}", timeout=0.3)
        assert f"127.0.0.1:{port}" in str(slow.value)
    finally:
        listener.close()


def test_a_failure_the_server_does_not_explain_is_a_remote_error(
    mem: Memory, url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug, with internals")

    with memstrata.connect(url, _key(mem, "reader", None)) as remote:
        monkeypatch.setattr(mem, "wake_up", broken)
        with pytest.raises(RemoteError) as failed:
            remote.wake_up("alice")
    assert (failed.value.status, failed.value.error) == (500, "InternalError")
    assert "internals" not in str(failed.value) and url.rstrip("/") in str(failed.value)


def test_a_server_in_local_mode_needs_no_key(mem: Memory) -> None:
    with (
        live_server(create_app(mem, auth=LocalAuth())) as http,
        memstrata.connect(str(http.base_url).replace("127.0.0.1", "localhost")) as remote,
    ):
        assert remote.me()["mode"] == "local"
        [ep] = remote.remember("local and keyless", "alice")
        assert remote.get(ep.id, "alice") == ep


def test_the_api_may_be_served_under_a_path(mem: Memory) -> None:
    outer = FastAPI()
    outer.mount("/memory", keyed_app(mem))  # as behind a reverse proxy's prefix
    key = _key(mem, "writer", None)
    with live_server(outer) as http:
        base = str(http.base_url).rstrip("/")
        with memstrata.connect(f"{base}/memory/", key) as remote:
            assert remote.url == f"{base}/memory/"
            [ep] = remote.remember("served under a prefix", "alice")
            assert remote.get(ep.id, "alice") == ep
        with pytest.raises(RemoteError) as elsewhere:  # not the API: the outer app's 404
            memstrata.connect(f"{base}/not-here", key)
        assert elsewhere.value.status == 404 and f"{base}/not-here" in str(elsewhere.value)
