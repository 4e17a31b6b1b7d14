"""The MCP server over one :class:`~memstrata.api.Memory`, on the official SDK's low-level
``Server``: the tools of :mod:`.tools` with their schemas taken from the shared pydantic
models, the user's identity and essentials as resources, and errors in the HTTP API's shape.

A tool call is validated against its input model, its scope comes from the
:class:`ScopeResolver` (the session's user on stdio, the request's key over HTTP), and the
facade runs in a worker thread (it is synchronous). An error of the exception tree comes back
as a tool error (``isError``) whose structured content is the HTTP API's one error shape,
``{"error": <class>, "message": ..., "details"?: [...]}``; anything else is an
``InternalError`` that says nothing of its cause (the log has it).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from memstrata import __version__
from memstrata.errors import InvalidInputError, MemstrataError, NotFoundError
from memstrata.model import Scope
from memstrata.server.errors import validation_details
from memstrata.server.mcp.tools import TOOLS, TOOLS_BY_NAME, ToolSpec

if TYPE_CHECKING:
    from starlette.requests import Request

    from memstrata.api import Memory

log = logging.getLogger(__name__)

#: the JSON-RPC error code of a resource that does not exist (MCP specification)
RESOURCE_NOT_FOUND: Final = -32002

INSTRUCTIONS: Final = (
    "memstrata is the user's long-term memory across sessions. Call wake_up at the start of "
    "every session. Before answering about past events or anything the user told you "
    "earlier, call search (or context for the memory relevant to a message, recall for a "
    "whole topic). Store the conversation with remember; when the user states a lasting "
    "fact or preference, store it with remember_fact. Forget only on the user's request."
)


class ScopeResolver(Protocol):
    """The scope a call acts in: from the session (stdio: ``request`` is None) or from the
    HTTP request (its API key); ``write`` says whether the tool writes, for a resolver that
    checks roles. Raises an error of the tree (the caller gets it in the one error shape)."""

    def __call__(self, request: Request | None, *, write: bool) -> Scope: ...


def fixed_scope(scope: Scope) -> ScopeResolver:
    """Every call acts in ``scope`` (``memstrata mcp --user U``)."""

    def resolve(request: Request | None, *, write: bool) -> Scope:
        del request, write
        return scope

    return resolve


def error_body(exc: BaseException) -> dict[str, Any]:
    """The HTTP API's one error shape for ``exc``."""
    if isinstance(exc, ValidationError):
        details = [{**d, "loc": ["arguments", *d["loc"]]} for d in validation_details(exc.errors())]
        message = "; ".join(f"{'.'.join(d['loc'])}: {d['msg']}" for d in details)
        return {"error": "InvalidInputError", "message": message, "details": details}
    if isinstance(exc, MemstrataError):
        return {"error": type(exc).__name__, "message": str(exc)}
    return {"error": "InternalError", "message": "internal error; the server log has details"}


def _rpc_code(exc: BaseException) -> int:
    """The JSON-RPC code of a failed resource read."""
    if isinstance(exc, NotFoundError):
        return RESOURCE_NOT_FOUND
    if isinstance(exc, InvalidInputError):
        return types.INVALID_PARAMS
    return types.INTERNAL_ERROR


def _result(data: dict[str, Any], *, error: bool = False) -> types.CallToolResult:
    """A tool result: ``data`` as structured content, and as JSON text for a client that
    reads only text."""
    text = types.TextContent(type="text", text=json.dumps(data, ensure_ascii=False))
    return types.CallToolResult(content=[text], structured_content=data, is_error=error)


def _tool(spec: ToolSpec) -> types.Tool:
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input.model_json_schema(),
        output_schema=spec.output.model_json_schema(),
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=not spec.writes,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=False,
        ),
    )


@cache
def listed_tools() -> list[types.Tool]:
    """The tools as listed (built once: the schemas do not change while a process runs)."""
    return [_tool(spec) for spec in TOOLS]


def _call(
    spec: ToolSpec, memory: Memory, resolve: ScopeResolver, request: Any, args: dict[str, Any]
) -> BaseModel:
    scope = resolve(request, write=spec.writes)
    return spec.run(memory, scope, spec.input.model_validate(args))


def create_mcp_server(memory: Memory, resolve: ScopeResolver) -> Server[Any]:
    """The MCP server over ``memory``; every call acts in the scope ``resolve`` gives."""
    tools = listed_tools()
    schemas = {tool.name: tool.input_schema for tool in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        spec = TOOLS_BY_NAME.get(params.name)
        if spec is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"unknown tool {params.name!r}",
                {"error": "NotFoundError", "message": f"unknown tool {params.name!r}"},
            )
        try:
            out = await anyio.to_thread.run_sync(
                _call, spec, memory, resolve, ctx.request, params.arguments or {}
            )
        except (MemstrataError, ValidationError) as exc:
            log.info("MCP tool %s refused: %s", spec.name, type(exc).__name__)
            return _result(error_body(exc), error=True)
        except Exception as exc:
            log.error("MCP tool %s failed", spec.name, exc_info=exc)
            return _result(error_body(exc), error=True)
        return _result(out.model_dump(mode="json"))

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    name=name,
                    uri=uri,
                    description=description,
                    mime_type="text/markdown",
                )
                for uri, (name, description, _) in RESOURCES.items()
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        entry = RESOURCES.get(params.uri)
        if entry is None:
            message = f"no resource {params.uri!r}; there are {', '.join(RESOURCES)}"
            raise MCPError(
                RESOURCE_NOT_FOUND, message, {"error": "NotFoundError", "message": message}
            )
        read = entry[2]

        def text() -> str:
            return read(memory, resolve(ctx.request, write=False))

        try:
            body = await anyio.to_thread.run_sync(text)
        except Exception as exc:
            if not isinstance(exc, MemstrataError):
                log.error("MCP resource %s failed", params.uri, exc_info=exc)
            error = error_body(exc)
            raise MCPError(_rpc_code(exc), error["message"], error) from exc
        return types.ReadResourceResult(
            contents=[
                types.TextResourceContents(uri=params.uri, mime_type="text/markdown", text=body)
            ]
        )

    return Server(
        "memstrata",
        version=__version__,
        title="memstrata memory",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
    )


def _identity(memory: Memory, scope: Scope) -> str:
    return memory.identity(scope).text


def _essentials(memory: Memory, scope: Scope) -> str:
    return memory.doc_markdown("essentials", scope)[0]


#: resources by URI: name, description, reader
RESOURCES: Final[dict[str, tuple[str, str, Callable[[Memory, Scope], str]]]] = {
    "memstrata://identity": (
        "identity",
        "L0: who the agent is and whom it serves, as the user wrote it",
        _identity,
    ),
    "memstrata://essentials": (
        "essentials",
        "L1: the user's profile, preferences and key facts, as a cited markdown document",
        _essentials,
    ),
}
