"""The server: the HTTP API, MCP over HTTP and the workbench in one process or several
workers (:mod:`memstrata.server.run`), and the proxy (:mod:`memstrata.server.proxy`)."""

from __future__ import annotations

from memstrata.server.run import serve

__all__ = ["serve"]
