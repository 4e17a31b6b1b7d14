"""MCP over stdio (``memstrata mcp --user U``): stdout carries protocol messages only.

While the server runs, the SDK's transport writes the protocol to a private duplicate of
file descriptor 1 and points descriptor 1 itself at stderr, so a native library writing to
stdout lands on stderr, not on the wire; ``sys.stdout`` is stderr for the whole run (from
before the memory opens), so a stray ``print`` does too. Log records go to stderr. The
protocol is read from a private duplicate of descriptor 0, which itself reads the null device
while the server runs (a child process reading stdin gets nothing of the protocol).

Every line is read by :class:`ScreenedLines` before the SDK sees it, with the limits of the
HTTP server: a line over the ``max_request_bytes`` setting is refused (only its start is
kept), and a line :func:`.server.read_message` refuses (not JSON, a lone surrogate, nesting
too deep, no JSON-RPC message) is answered with its JSON-RPC error on the transport's own
writer. Every request gets an answer, and the server reads on.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager, redirect_stdout
from typing import TYPE_CHECKING, Any, BinaryIO, Final, Protocol, cast

import anyio
import anyio.to_thread
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from memstrata.server.mcp.server import (
    MessageRefused,
    ScopeResolver,
    create_mcp_server,
    oversized,
    read_message,
)
from memstrata.settings import DEFAULT_MAX_REQUEST_BYTES

if TYPE_CHECKING:
    from memstrata.api import Memory

log = logging.getLogger(__name__)

#: how much of a line is read at once
_CHUNK: Final = 64 * 1024
#: the white space of JSON: a line of nothing else is skipped
_BLANK: Final = b" \t\r"


def run_stdio(
    open_memory: Callable[[], Memory], resolver: Callable[[Memory], ScopeResolver]
) -> None:
    """Serve MCP on stdin and stdout until stdin closes: the memory ``open_memory`` opens,
    every call in the scope of ``resolver(memory)``. A memory that cannot be opened, or a
    resolver that refuses, raises before anything is served."""
    sys.stdout.flush()
    with redirect_stdout(sys.stderr):
        memory = open_memory()
    try:
        with redirect_stdout(sys.stderr):
            server = create_mcp_server(memory, resolver(memory))
        settings = memory.settings
        max_bytes = (
            settings.max_request_bytes if settings is not None else DEFAULT_MAX_REQUEST_BYTES
        )
        anyio.run(_serve, server, max_bytes)
    finally:
        memory.close()


async def _serve(server: Server[Any], max_bytes: int) -> None:
    with _wire_input(max_bytes) as lines:
        # the transport claims descriptor 1 while sys.stdout is still the real stdout; then
        # sys.stdout becomes stderr for the run. It only iterates the stdin it is given.
        stdin = cast("anyio.AsyncFile[str]", lines)
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            lines.answer_on(write_stream.clone())
            with redirect_stdout(sys.stderr):
                await server.run(read_stream, write_stream, server.create_initialization_options())


@contextmanager
def _wire_input(max_bytes: int) -> Iterator[ScreenedLines]:
    """The wire's lines, read from a private duplicate of descriptor 0, which itself reads
    the null device until the server stops (then it is the wire again)."""
    try:
        private = os.dup(0)
    except OSError:  # no descriptor 0 to claim
        yield ScreenedLines(sys.stdin.buffer, max_bytes)
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    # the file object never closes the descriptor: it is closed here once read to its end,
    # never while a worker thread may still be reading it
    lines = ScreenedLines(os.fdopen(private, "rb", closefd=False), max_bytes)
    try:
        yield lines
    finally:
        os.dup2(private, 0)
        if lines.ended:
            os.close(private)


class _Answers(Protocol):
    async def send(self, item: SessionMessage, /) -> None: ...

    def close(self) -> None: ...


class ScreenedLines:
    """The lines of ``source`` that :func:`.server.read_message` reads as JSON-RPC messages,
    as the SDK's stdio transport iterates its stdin (text, one line at a time). A line over
    ``max_bytes`` is read to its end but only its start is kept; it and every line refused
    are answered on the stream given to :meth:`answer_on` (the transport's writer, so the
    answers never tear the transport's own lines), unless it is a notification or a
    response, which JSON-RPC never answers. A line of white space only is skipped."""

    def __init__(self, source: BinaryIO, max_bytes: int) -> None:
        self.source = source
        self.max_bytes = max_bytes
        self.ended = False
        self._answers: _Answers | None = None
        self._ready = anyio.Event()

    def answer_on(self, answers: _Answers) -> None:
        """Send the answers to refused lines on ``answers`` (closed when the input ends)."""
        self._answers = answers
        self._ready.set()

    async def __aiter__(self) -> AsyncIterator[str]:
        try:
            while (read := await self._line()) is not None:
                kept, size = read
                if not kept.strip(_BLANK):
                    continue
                try:
                    if size > self.max_bytes:
                        raise oversized(kept, size, self.max_bytes)
                    read_message(kept)
                except MessageRefused as refused:
                    if not await self._answer(refused):
                        return
                    continue
                yield kept.decode("utf-8")
        finally:
            if self._answers is not None:
                self._answers.close()

    async def _line(self) -> tuple[bytes, int] | None:
        """The next line without its newline, its first ``max_bytes + 1`` bytes at most, and
        its whole length; None at the end of the input."""
        kept = bytearray()
        size = 0
        while True:
            chunk = await anyio.to_thread.run_sync(
                self.source.readline, _CHUNK, abandon_on_cancel=True
            )
            if not chunk:
                self.ended = True
                return (bytes(kept), size) if size else None
            end = chunk.endswith(b"\n")
            if end:
                chunk = chunk[:-1]
            size += len(chunk)
            if len(kept) <= self.max_bytes:
                kept += chunk[: self.max_bytes + 1 - len(kept)]
            if end:
                return bytes(kept), size

    async def _answer(self, refused: MessageRefused) -> bool:
        """Answer a refused line; False once the transport no longer writes."""
        log.info("MCP message refused (%d): %s", refused.code, refused.message)
        if not refused.answered:
            return True
        await self._ready.wait()
        assert self._answers is not None
        try:
            await self._answers.send(SessionMessage(refused.answer()))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return False
        return True
