"""The facade: :class:`Memory`, the one entry point the CLI, HTTP and MCP front-ends call.

Synchronous and thread-safe (the store serialises its own access). Every method takes the
scope it acts in; a bare string is taken as a user id.
"""

from memstrata.api.common import DeleteReport, IngestReport, as_scope, as_turn
from memstrata.api.facade import Memory

__all__ = ["DeleteReport", "IngestReport", "Memory", "as_scope", "as_turn"]
