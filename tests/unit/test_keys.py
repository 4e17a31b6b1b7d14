"""API keys: shown once, stored as a digest, bound to a tenant and a role, revoked at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.api.keys import KEY_PREFIX, PREFIX_CHARS, digest_of
from memstrata.cli import main
from memstrata.errors import InvalidInputError, NotFoundError, UnauthenticatedError
from memstrata.model import KeyRole
from memstrata.settings import load_settings
from tests.conftest import FixedClock


def _files(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(data_dir.rglob("*")) if p.is_file())


def test_a_key_is_shown_once_and_stored_only_as_a_digest(memory: Memory, data_dir: Path) -> None:
    created = memory.keys.create("writer", ["alice", "bob", "alice"], name="agent 一号")
    secret = created.secret
    assert secret.startswith(KEY_PREFIX) and len(secret) == 46
    assert created.key.prefix == secret[:PREFIX_CHARS] and created.key.role is KeyRole.WRITER
    assert created.key.users == ("alice", "bob")  # each user once, in order
    assert secret not in repr(created)  # never in a log line by accident
    assert memory.keys.authenticate(secret) == created.key
    assert memory.keys.list() == [created.key]
    files = _files(data_dir)  # the database and its write-ahead log
    assert secret.encode() not in files and secret[PREFIX_CHARS:].encode() not in files
    assert digest_of(secret).encode() in files


def test_keys_are_random_and_each_authenticates_as_itself(memory: Memory) -> None:
    made = [memory.keys.create("reader", ["alice"]) for _ in range(20)]
    assert len({m.secret for m in made}) == 20
    for m in made:
        assert memory.keys.authenticate(m.secret).id == m.key.id


@pytest.mark.parametrize(
    "presented",
    [
        "",
        "ms_",
        "not a key",
        "ms_" + "A" * 43,  # well-formed, unknown
        "xx_" + "A" * 43,
        "ms_" + "é" * 43,
    ],
)
def test_what_is_not_an_active_key_is_unauthenticated(memory: Memory, presented: str) -> None:
    memory.keys.create("admin", None)
    with pytest.raises(UnauthenticatedError):
        memory.keys.authenticate(presented)


def test_a_key_differing_only_after_its_prefix_is_refused(memory: Memory) -> None:
    secret = memory.keys.create("admin", None).secret
    last = "A" if secret[-1] != "A" else "B"
    with pytest.raises(UnauthenticatedError, match="unknown"):
        memory.keys.authenticate(secret[:-1] + last)


def test_revoking_holds_at_once_in_this_and_another_open_memory(
    memory: Memory, data_dir: Path, clock: FixedClock
) -> None:
    created = memory.keys.create("admin", None)
    with Memory.open(settings=load_settings(data_dir=data_dir)) as other:
        assert other.keys.authenticate(created.secret).id == created.key.id
        revoked = memory.keys.revoke(created.key.id)
        assert revoked.revoked_at == clock.now() and not revoked.active
        for mem in (memory, other):
            with pytest.raises(UnauthenticatedError, match="revoked"):
                mem.keys.authenticate(created.secret)
    assert memory.keys.list() == [revoked]
    with pytest.raises(NotFoundError):
        memory.keys.revoke("key_01HZZZZZZZZZZZZZZZZZZZZZZZ")
    with pytest.raises(InvalidInputError):
        memory.keys.revoke("ep_01HZZZZZZZZZZZZZZZZZZZZZZZ")


@pytest.mark.parametrize(
    ("role", "users", "name"),
    [
        ("owner", ["alice"], ""),
        ("reader", [], ""),
        ("reader", ["a/b"], ""),
        ("reader", ["alice"], "bad\nname"),
        ("reader", ["alice"], "x" * 201),
    ],
)
def test_bad_key_requests_are_refused_and_store_nothing(
    memory: Memory, role: str, users: list[str], name: str
) -> None:
    with pytest.raises(InvalidInputError):
        memory.keys.create(role, users, name=name)
    assert memory.keys.list() == []


# --- the CLI ------------------------------------------------------------------------------


def _run(capsys: pytest.CaptureFixture[str], data_dir: Path, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([*args, "--data-dir", str(data_dir)])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_keys_create_list_revoke_from_the_cli(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    code, out, err = _run(
        capsys, data_dir, "keys", "create", "--user", "alice", "--user", "bob", "--role", "reader"
    )
    assert code == 0
    secret = out.strip()
    assert secret.startswith("ms_") and "shown only now" in err and secret not in err
    code, out, _ = _run(
        capsys, data_dir, "keys", "create", "--all-users", "--role", "admin", "--name", "ops",
        "--json",
    )  # fmt: skip
    made = json.loads(out)
    assert code == 0 and made["users"] is None and made["role"] == "admin" and made["name"] == "ops"
    assert made["key"].startswith("ms_") and made["active"] is True
    code, out, _ = _run(capsys, data_dir, "keys", "list", "--json")
    listed = json.loads(out)
    assert code == 0 and [k["users"] for k in listed] == [["alice", "bob"], None]
    assert secret not in out and made["key"] not in out and "key" not in listed[0]
    code, out, _ = _run(capsys, data_dir, "keys", "list")
    assert code == 0 and "alice, bob" in out and "all users" in out and secret not in out
    code, out, _ = _run(capsys, data_dir, "keys", "revoke", made["id"])
    assert code == 0 and f"revoked {made['id']}" in out
    code, out, _ = _run(capsys, data_dir, "keys", "list")
    assert "revoked" in out.splitlines()[1]
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        assert mem.keys.authenticate(secret).users == ("alice", "bob")
        with pytest.raises(UnauthenticatedError):
            mem.keys.authenticate(made["key"])


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["keys", "create", "--role", "reader"], 2),  # neither --user nor --all-users
        (["keys", "create", "--user", "a", "--all-users", "--role", "reader"], 2),
        (["keys", "create", "--user", "a", "--role", "owner"], 2),
        (["keys", "revoke", "key_01HZZZZZZZZZZZZZZZZZZZZZZZ"], 3),
    ],
)
def test_bad_keys_commands_exit_non_zero_with_one_line(
    capsys: pytest.CaptureFixture[str], data_dir: Path, args: list[str], code: int
) -> None:
    assert main(["init", "--data-dir", str(data_dir)]) == 0
    got, out, err = _run(capsys, data_dir, *args)
    assert got == code and out == "" and err.strip()
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        assert mem.keys.list() == []
