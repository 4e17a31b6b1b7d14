"""`memstrata mcp --user U` over stdio, spawned by the SDK's own client: the tools and
resources work against a data directory, and stdout carries protocol messages only, even when
code inside a tool call prints (through ``print`` and straight to descriptor 1)."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from memstrata.api import Memory
from memstrata.settings import load_settings

# The console script, with an embedder that writes to stdout whenever it embeds.
NOISY = """
import os, sys
from memstrata.embed import fake
embed = fake.HashingEmbedder.embed_documents
def noisy(self, texts):
    print("noise from print")
    os.write(1, b"noise from descriptor 1\\n")
    return embed(self, texts)
fake.HashingEmbedder.embed_documents = noisy
from memstrata.api import Memory
open_memory = Memory.open.__func__
def noisy_open(cls, *args, **kwargs):
    print("noise while the memory opens")
    return open_memory(cls, *args, **kwargs)
Memory.open = classmethod(noisy_open)
from memstrata.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["MEMSTRATA_EMBEDDER__PROVIDER"] = "fake"
    return env


def _protocol_lines(path: Path) -> list[dict[str, Any]]:
    """Every line of the captured stdout as a JSON-RPC message (fails on anything else)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    messages = [json.loads(line) for line in lines]
    assert messages and all(m.get("jsonrpc") == "2.0" for m in messages)
    return messages


async def _ok(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, args)
    assert not result.is_error, result.structured_content
    data: dict[str, Any] = result.structured_content
    return data


def test_stdio_serves_the_tools_and_stdout_carries_only_protocol(tmp_path: Path) -> None:
    data = tmp_path / "mem"
    script = tmp_path / "noisy_memstrata.py"
    script.write_text(NOISY, encoding="utf-8")
    wire = tmp_path / "stdout.jsonl"
    stderr_path = tmp_path / "stderr.txt"
    command = " ".join(
        shlex.quote(part)
        for part in [sys.executable, str(script), "mcp", "--user", "alice", "--data-dir", str(data)]
    )
    # tee keeps a copy of every byte the server writes to its stdout
    params = StdioServerParameters(
        command="/bin/sh", args=["-c", f"{command} | tee {shlex.quote(str(wire))}"], env=_env()
    )

    async def go() -> None:
        with stderr_path.open("w", encoding="utf-8") as errlog:
            from mcp.client.stdio import stdio_client

            async with Client(stdio_client(params, errlog=errlog)) as client:
                names = [t.name for t in (await client.list_tools()).tools]
                assert names[0] == "wake_up" and "remember_fact" in names
                episodes = (
                    await _ok(
                        client,
                        "remember",
                        {"turns": [{"text": "I adopted a puppy named Mochi", "speaker": "alice"}]},
                    )
                )["episodes"]
                hits = (await _ok(client, "search", {"q": "puppy Mochi"}))["items"]
                assert hits[0]["id"] == episodes[0]["id"]
                fact = await _ok(
                    client,
                    "remember_fact",
                    {"text": "Prefers replies in Chinese", "category": "preference"},
                )
                assert "Prefers replies in Chinese" in (await _ok(client, "wake_up", {}))["text"]
                shown = await _ok(client, "doc_show", {"key": "essentials"})
                ops = [{"op": "add", "section": "Preferences", "text": "Likes dogs"}]
                preview = await _ok(client, "doc_propose", {"key": "essentials", "operations": ops})
                assert "+- Likes dogs" in preview["diff"]
                applied = await _ok(
                    client,
                    "doc_apply",
                    {"key": "essentials", "operations": ops, "expected_version": shown["version"]},
                )
                assert applied["version"] == shown["version"] + 1
                essentials = (await client.read_resource("memstrata://essentials")).contents[0]
                assert "Likes dogs" in essentials.text  # type: ignore[union-attr]
                identity = (await client.read_resource("memstrata://identity")).contents[0]
                assert identity.text == ""  # type: ignore[union-attr]
                forgot = await _ok(client, "forget", {"item_id": fact["id"]})
                assert fact["id"] in forgot["deleted"]  # with the turn made of its words
                refused = await client.call_tool("forget", {"item_id": fact["id"]})
                assert refused.is_error

    anyio.run(go)
    messages = _protocol_lines(wire)
    assert any(m.get("result", {}).get("structuredContent") for m in messages)
    stderr = stderr_path.read_text(encoding="utf-8")
    assert "noise from print" in stderr and "noise from descriptor 1" in stderr
    assert "noise while the memory opens" in stderr
    with Memory.open(settings=load_settings(data_dir=data)) as mem:
        assert mem.stats("alice").episodes >= 1  # the tools wrote to the data directory


def _spawn(data: Path, *args: str) -> StdioServerParameters:
    exe = Path(sys.executable).with_name("memstrata")
    return StdioServerParameters(
        command=str(exe), args=["mcp", *args, "--data-dir", str(data)], env=_env()
    )


def test_stdio_with_a_key_acts_for_the_keys_user_and_role(tmp_path: Path) -> None:
    data = tmp_path / "mem"
    with Memory.open(settings=load_settings(data_dir=data)) as mem:
        writer = mem.keys.create("writer", ["alice"]).secret
        reader = mem.keys.create("reader", ["alice"]).secret

    async def go() -> None:
        async with Client(_spawn(data, "--key", writer)) as client:
            out = await _ok(client, "remember", {"turns": [{"text": "I play the piano"}]})
            assert out["episodes"][0]["scope"]["user"] == "alice"
        async with Client(_spawn(data, "--key", reader)) as client:
            assert (await _ok(client, "search", {"q": "piano"}))["items"]
            denied = await client.call_tool("remember", {"turns": [{"text": "no"}]})
            assert denied.is_error and denied.structured_content["error"] == "ForbiddenError"

    anyio.run(go)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", " "], "error: "),
        ([], "error: give --user, or --key"),
        (["--key", "ms_not-a-key"], "error: not a memstrata API key"),
    ],
    ids=["blank-user", "no-user", "bad-key"],
)
def test_stdio_refuses_a_bad_user_or_key_before_serving(
    tmp_path: Path, args: list[str], message: str
) -> None:
    params = _spawn(tmp_path / "mem", *args)
    stderr_path = tmp_path / "stderr.txt"

    async def go() -> None:
        with stderr_path.open("w", encoding="utf-8") as errlog:
            from mcp.client.stdio import stdio_client

            async with Client(stdio_client(params, errlog=errlog)):
                pass

    with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's error for a closed server
        anyio.run(go)
    assert stderr_path.read_text(encoding="utf-8").startswith(message)


def test_stdio_speaks_the_handshake_era_protocol_too(tmp_path: Path) -> None:
    """Clients of the 2025 protocol versions (an initialize handshake) are served alike."""
    exe = Path(sys.executable).with_name("memstrata")
    params = StdioServerParameters(
        command=str(exe),
        args=["mcp", "--user", "alice", "--data-dir", str(tmp_path / "mem")],
        env=_env(),
    )

    async def go() -> None:
        async with Client(params, mode="legacy") as client:
            assert client.protocol_version.startswith("2025-")
            await _ok(client, "remember", {"turns": [{"text": "I collect stamps"}]})
            hits = (await _ok(client, "search", {"q": "stamps"}))["items"]
            assert hits and hits[0]["text"].endswith("I collect stamps")

    anyio.run(go)
