"""``memstrata proxy``: the OpenAI-compatible memory proxy in front of a chat server."""

from __future__ import annotations

from pathlib import Path

import click

from memstrata.cli.base import cli, data_dir_option, settings_for


@cli.command(
    name="proxy",
    help="Serve an OpenAI-compatible chat API that puts each user's memory into the system "
    "message, forwards to --upstream (any OpenAI-compatible server, e.g. "
    "http://127.0.0.1:11434/v1), streams the answer back unchanged and stores the exchange. "
    "The memory user is the --user-header header, else the request's 'user' field (with API "
    "keys, a key bound to one user needs neither). The upstream's key: "
    "MEMSTRATA_PROXY__UPSTREAM_API_KEY.",
)
@click.option("--upstream", default=None, help="Base URL of the upstream chat API.")
@click.option("--host", default=None, help="Address to bind (default 127.0.0.1).")
@click.option("--port", default=None, type=click.IntRange(1, 65535), help="Port (default 8766).")
@click.option(
    "--user-header", default=None, help="Header naming the memory user (default X-Memstrata-User)."
)
@click.option(
    "--budget",
    default=None,
    type=click.IntRange(50, 100_000),
    help="Tokens of memory in the system message (default 800).",
)
@click.option("--no-capture", is_flag=True, help="Do not store the exchanges.")
@click.option(
    "--local",
    is_flag=True,
    help="Serve without API keys: binds only the loopback; the client's Authorization header "
    "then goes to the upstream when no upstream key is set.",
)
@data_dir_option
def proxy(
    upstream: str | None,
    host: str | None,
    port: int | None,
    user_header: str | None,
    budget: int | None,
    no_capture: bool,
    local: bool,
    data_dir: Path | None,
) -> None:
    from memstrata.server.proxy import check_upstream, serve_proxy

    settings = settings_for(data_dir=data_dir, host=host, auth="local" if local else None)
    flags = {
        "upstream": upstream,
        "port": port,
        "user_header": user_header,
        "budget": budget,
        "capture": False if no_capture else None,
    }
    config = settings.proxy.model_copy(update={k: v for k, v in flags.items() if v is not None})
    check_upstream(config.upstream)  # before the port is taken and the memory opened
    serve_proxy(settings, config)
