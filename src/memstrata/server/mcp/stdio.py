"""MCP over stdio (``memstrata mcp --user U``): stdout carries protocol messages only.

While the server runs, the SDK's transport writes the protocol to a private duplicate of
file descriptor 1 and points descriptor 1 itself at stderr, so a native library writing to
stdout lands on stderr, not on the wire; ``sys.stdout`` is stderr for the whole run (from
before the memory opens), so a stray ``print`` does too. Log records go to stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from contextlib import redirect_stdout
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from memstrata.server.mcp.server import ScopeResolver, create_mcp_server

if TYPE_CHECKING:
    from memstrata.api import Memory


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
        anyio.run(_serve, server)
    finally:
        memory.close()


async def _serve(server: Server[Any]) -> None:
    # the transport claims descriptor 1 while sys.stdout is still the real stdout; then
    # sys.stdout becomes stderr for the run
    async with stdio_server() as (read_stream, write_stream):
        with redirect_stdout(sys.stderr):
            await server.run(read_stream, write_stream, server.create_initialization_options())
