"""``memstrata mcp --user U`` as a subprocess the tests talk to line by line, over a data
directory of their own with the hashing embedder: what goes in is raw bytes (any line a
client may send, broken or not), what comes back each JSON-RPC answer as it was written."""

from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Final

#: the protocol version of the handshake the server is opened with
PROTOCOL: Final = "2025-06-18"


def _env(config: Path, extra: dict[str, str]) -> dict[str, str]:
    """This process's environment without memstrata settings, but for an empty config file,
    the hashing embedder and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTRATA_")}
    env["MEMSTRATA_CONFIG"] = str(config)
    env["MEMSTRATA_EMBEDDER__PROVIDER"] = "fake"
    return {**env, **extra}


class StdioServer:
    """One ``memstrata mcp`` process, initialised: :meth:`send` writes a line to its stdin,
    :meth:`answer` takes the next line it wrote to stdout (read by a thread as it comes, so a
    large answer never blocks the server)."""

    def __init__(self, workdir: Path, *, user: str = "alice", **settings: str) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        config = workdir / "config.toml"
        config.write_text("", encoding="utf-8")
        self.stderr_path = workdir / "stderr.txt"
        self._stderr = self.stderr_path.open("wb")
        env = _env(config, {f"MEMSTRATA_{k.upper()}": v for k, v in settings.items()})
        exe = Path(sys.executable).with_name("memstrata")
        self.process = subprocess.Popen(
            [str(exe), "mcp", "--user", user, "--data-dir", str(workdir / "mem")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.initialize()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self._lines.put(raw)
        self._lines.put(None)

    def initialize(self) -> None:
        """The handshake: ``initialize``, then ``notifications/initialized``."""
        params = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        }
        request = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": params}
        answer = self.ask(line(request), timeout=60)
        assert "result" in answer, answer
        self.send(line({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    def send(self, line: bytes) -> None:
        """``line`` and a newline on the server's stdin."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def answer(self, timeout: float) -> dict[str, Any] | None:
        """The next message the server writes, or None if none comes within ``timeout``
        seconds or stdout closed. A line that is not one JSON object fails the test."""
        try:
            raw = self._lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if raw is None:
            self._lines.put(None)  # stays closed for the next caller
            return None
        message = json.loads(raw)
        assert isinstance(message, dict) and message.get("jsonrpc") == "2.0", raw[:300]
        return message

    def ask(self, line: bytes, timeout: float = 10) -> dict[str, Any]:
        """Send ``line`` and return the answer; fails if none comes within ``timeout``."""
        self.send(line)
        answer = self.answer(timeout)
        assert answer is not None, f"no answer within {timeout} s to {line[:200]!r}"
        return answer

    def call(self, request_id: int | str, name: str, arguments: dict[str, Any]) -> bytes:
        """The line of a ``tools/call`` of ``name`` with ``arguments``."""
        params = {"name": name, "arguments": arguments}
        return line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def peak_rss(self) -> int:
        """The largest resident memory the process has had, in bytes (Linux ``/proc``)."""
        status = Path(f"/proc/{self.process.pid}/status").read_text(encoding="ascii")
        kib = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
        return int(kib) * 1024

    def alive(self) -> bool:
        return self.process.poll() is None

    def stderr(self) -> str:
        """What the server wrote to stderr so far."""
        if not self._stderr.closed:
            self._stderr.flush()
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")

    def close(self) -> int:
        """Close stdin and wait for the server to exit; its exit code."""
        assert self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.process.stdin.close()
        deadline = time.monotonic() + 30
        while self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if self.process.poll() is None:
            self.process.kill()
        code = self.process.wait()
        self._reader.join(timeout=10)
        assert self.process.stdout is not None
        self.process.stdout.close()
        self._stderr.close()
        return code


def line(message: dict[str, Any]) -> bytes:
    """``message`` as one line of JSON (UTF-8, no newline)."""
    return json.dumps(message, ensure_ascii=False).encode("utf-8")
