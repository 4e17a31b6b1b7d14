"""``memstrata mcp``: the MCP server on stdin and stdout, for one user."""

from __future__ import annotations

from pathlib import Path

import click

from memstrata.cli.base import cli, data_dir_option, memory_for
from memstrata.errors import InvalidInputError


@cli.command(
    name="mcp",
    help="Serve the memory of one user to an agent over MCP on stdin and stdout "
    "(stdout carries protocol messages only; logs go to stderr). Give --user, or --key: an "
    "API key acts for its one user, or for --user when its tenant holds it, and a reader key "
    "cannot write.",
)
@click.option("--user", default=None, help="User id (the scope's owner).")
@click.option("--thread", default=None, help="Thread id (optional).")
@click.option("--agent", default=None, help="Agent id (optional).")
@click.option("--key", default=None, help="An API key (ms_...) to act with, instead of --user.")
@data_dir_option
def mcp(
    user: str | None,
    thread: str | None,
    agent: str | None,
    key: str | None,
    data_dir: Path | None,
) -> None:
    from memstrata.api import Memory
    from memstrata.model import Scope
    from memstrata.server.mcp import ScopeResolver, fixed_scope
    from memstrata.server.mcp.stdio import run_stdio

    if key is None:
        if user is None:
            raise InvalidInputError("give --user, or --key with an API key")
        scope = Scope(user, thread, agent)
        run_stdio(lambda: memory_for(data_dir, create=True), lambda _memory: fixed_scope(scope))
        return
    secret = key

    def resolver(memory: Memory) -> ScopeResolver:
        from memstrata.server.mcp.access import key_resolver

        return key_resolver(memory.keys, secret, user, thread, agent)

    run_stdio(lambda: memory_for(data_dir, create=True), resolver)
