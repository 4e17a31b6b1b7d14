"""The MCP server: memstrata's tools and resources for agents, over stdio
(``memstrata mcp --user U``) and streamable HTTP (``/mcp`` on the HTTP server).

:mod:`.tools` holds the tools (names, descriptions, models), :mod:`.server` the SDK server and
the error mapping, :mod:`.stdio` and :mod:`.http` the two transports.
"""

from memstrata.server.mcp.server import (
    RESOURCES,
    ScopeResolver,
    create_mcp_server,
    error_body,
    fixed_scope,
)
from memstrata.server.mcp.tools import TOOLS

__all__ = ["RESOURCES", "TOOLS", "ScopeResolver", "create_mcp_server", "error_body", "fixed_scope"]
