"""The MCP server over one :class:`~memstrata.api.Memory`, on the official SDK's low-level
``Server``: the tools of :mod:`.tools` with their schemas taken from the shared pydantic
models, the user's identity and essentials as resources, and errors in the HTTP API's shape.

A tool call is validated against its input model, its scope comes from the
:class:`ScopeResolver` (the session's user on stdio, the request's key over HTTP), and the
facade runs in a worker thread (it is synchronous). An error of the exception tree comes back
as a tool error (``isError``) whose structured content is the HTTP API's one error shape,
``{"error": <class>, "message": ..., "details"?: [...]}``; anything else is an
``InternalError`` that says nothing of its cause (the log has it).

Every message a client sends, over either transport, is read by :func:`read_message` before
the SDK sees it: the SDK's own JSON reader and message model, and for what they refuse the
JSON-RPC error that answers it, with the request's id whenever the message shows one.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, Final, Protocol

import anyio.to_thread
import mcp_types as types
import pydantic_core
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from memstrata import __version__
from memstrata.errors import InvalidInputError, MemstrataError, NotFoundError
from memstrata.model import Scope
from memstrata.server.errors import validation_details
from memstrata.server.mcp.tools import TOOLS, TOOLS_BY_NAME, ToolSpec
from memstrata.server.schemas.common import MAX_DEPTH
from memstrata.textio import surrogate_at

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


# -- what clients send -----------------------------------------------------------------------

#: how much of the start of a message that cannot be read whole is searched for its id
_HEAD_BYTES: Final = 64 * 1024
#: a JSON token: a whole string, a structural character, a bare scalar, or a string's opening
#: quote with no end (the message is cut short)
_TOKEN: Final = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+|"', re.DOTALL)


class MessageRefused(Exception):
    """A message that is not handed to the SDK: the JSON-RPC error ``code`` and ``message``
    that answer it, for the request ``request_id`` (None: the message shows no id).
    ``answered`` is False for a notification or a response, which JSON-RPC never answers."""

    def __init__(
        self,
        code: int,
        message: str,
        request_id: types.RequestId | None,
        *,
        answered: bool = True,
        error: str = "InvalidInputError",
    ) -> None:
        # text a client sent may be quoted in the message: it is shown, never left unencodable
        message = message.encode("utf-8", "backslashreplace").decode("utf-8")
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id
        self.answered = answered
        self.error = error

    def answer(self) -> types.JSONRPCError:
        """The JSON-RPC error, its data the HTTP API's one error shape."""
        data = {"error": self.error, "message": self.message}
        return types.JSONRPCError(
            jsonrpc="2.0",
            id=self.request_id,
            error=types.ErrorData(code=self.code, message=self.message, data=data),
        )


def read_message(data: bytes) -> types.JSONRPCMessage:
    """``data`` (a line on stdio, a request body over HTTP) as the JSON-RPC message the SDK
    reads: read by the SDK's own JSON reader (as its HTTP transport reads a body), then
    checked against its message model. What either refuses raises :class:`MessageRefused`
    with the error that answers it: a parse error (-32700, id null) for text that is not
    JSON; for JSON, an invalid request (-32600) or, when the fault is in ``params``, invalid
    params (-32602), with the request's id: a lone surrogate or a byte that is not UTF-8 (at
    its place), objects and arrays nested deeper than the reader reads, a number out of
    range, a message that is no request, notification or response, an id that is neither a
    string nor an integer."""
    try:
        raw = pydantic_core.from_json(data)
        data.decode("utf-8")
    except ValueError as exc:  # UnicodeDecodeError is one
        raise _unreadable(data, str(exc)) from None
    try:
        message = types.jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValidationError as exc:
        raise _not_a_message(raw, exc) from None
    if isinstance(message, types.JSONRPCNotification) and isinstance(raw, dict) and "id" in raw:
        # the message model takes a request with an id of another type for a notification,
        # which nobody answers: the client would wait for ever
        raise MessageRefused(
            types.INVALID_REQUEST, "id must be a string or an integer; nothing was done", None
        )
    return message


def oversized(head: bytes, size: int, limit: int) -> MessageRefused:
    """The refusal of a message of ``size`` bytes, over ``limit``, that starts with ``head``
    (the rest was not kept): an invalid request, with the request's id if ``head`` shows it."""
    return MessageRefused(
        types.INVALID_REQUEST,
        f"the message is {size} bytes, over the limit of {limit} bytes; the setting "
        "max_request_bytes sets the limit; nothing was done",
        _scan(head[:_HEAD_BYTES])[0],
        error="TooLargeError",
    )


def _unreadable(data: bytes, reason: str) -> MessageRefused:
    """Why the SDK's reader refused ``data``, found by Python's reader, which takes lone
    surrogates, nests as deep as the stack allows, and is given bytes that are not UTF-8 as
    lone surrogates (``surrogateescape``) so that it finds where they are."""
    try:
        data.decode("utf-8")
        utf8 = True
    except UnicodeDecodeError:
        utf8 = False
    try:
        value = json.loads(data.decode("utf-8", "surrogateescape"))
    except RecursionError:
        request_id, deep_in = _scan(data[:_HEAD_BYTES])
        return _too_deep((deep_in,) if deep_in else (), request_id)
    except json.JSONDecodeError:
        return MessageRefused(
            types.PARSE_ERROR, f"the message is not JSON ({reason}); nothing was done", None
        )
    except ValueError:  # JSON, but a number Python does not read either
        return MessageRefused(
            types.INVALID_REQUEST,
            f"the message cannot be read ({reason}); nothing was done",
            _scan(data[:_HEAD_BYTES])[0],
        )
    request_id, answered = _request_id(value), _answered(value)
    bad = _bad_text(value)
    if bad is not None:
        path, where, at = bad
        what = (
            "is not valid UTF-8 text (a byte that is not UTF-8, or a lone surrogate, "
            f"at character {at})"
            if not utf8
            else f"is not valid Unicode (a lone surrogate at position {at})"
        )
        return MessageRefused(
            _code(path),
            f"{where} {what}; nothing was done",
            request_id,
            answered=answered,
        )
    deep = _deep_path(value)
    if deep is not None:
        return _too_deep(deep, request_id, answered=answered)
    return MessageRefused(
        types.INVALID_REQUEST,
        f"the message cannot be read ({reason}); nothing was done",
        request_id,
        answered=answered,
    )


def _not_a_message(raw: Any, exc: ValidationError) -> MessageRefused:
    """The refusal of JSON that the message model does not take."""
    if not isinstance(raw, dict):
        kind = "an array (batches are not part of MCP)" if isinstance(raw, list) else "a scalar"
        return MessageRefused(
            types.INVALID_REQUEST,
            f"a message is one JSON object, not {kind}; nothing was done",
            None,
        )
    if "method" in raw:
        model = "JSONRPCRequest" if "id" in raw else "JSONRPCNotification"
    elif "error" in raw:
        model = "JSONRPCError"
    elif "result" in raw:
        model = "JSONRPCResponse"
    else:
        model = ""
    problems = [
        f"{'.'.join(str(part) for part in e['loc'][1:]) or 'the message'}: {e['msg']}"
        for e in exc.errors(include_url=False)
        if e["loc"][:1] == (model,)
    ]
    why = "; ".join(problems) if problems else "it has no method, result or error"
    return MessageRefused(
        types.INVALID_REQUEST,
        f"not a JSON-RPC 2.0 request, notification or response: {why}; nothing was done",
        _request_id(raw),
        answered=_answered(raw),
    )


def _too_deep(
    path: tuple[str, ...], request_id: types.RequestId | None, *, answered: bool = True
) -> MessageRefused:
    return MessageRefused(
        _code(path),
        f"objects and arrays in {_where(path)} nest deeper than {MAX_DEPTH} levels (the limit "
        "of every request); nothing was done",
        request_id,
        answered=answered,
    )


def _code(path: tuple[str, ...]) -> int:
    return types.INVALID_PARAMS if path[:1] == ("params",) else types.INVALID_REQUEST


def _where(path: tuple[str, ...]) -> str:
    """Where a fault is: the first parts of its path (``params.arguments.q``)."""
    if not path:
        return "the message"
    return ".".join(path[:4]) + (".…" if len(path) > 4 else "")


def _request_id(value: Any) -> types.RequestId | None:
    """The message's id, if it is one an answer can carry (an integer, or text that UTF-8
    can encode)."""
    found = value.get("id") if isinstance(value, dict) else None
    if isinstance(found, bool):
        return None
    if isinstance(found, int) or (isinstance(found, str) and surrogate_at(found) is None):
        return found
    return None


def _answered(value: Any) -> bool:
    """Whether JSON-RPC answers the message: not for a notification (a method, no id) nor for
    a response (a result or an error, no method)."""
    if not isinstance(value, dict):
        return True
    if "method" in value:
        return "id" in value
    return not ("result" in value or "error" in value)


def _nodes(value: Any) -> Iterator[tuple[tuple[str, ...], Any, bool]]:
    """Every value in ``value`` with its path, and every key with the path of its object
    (flagged True), in the order of the text (without recursion: what Python's reader read
    may nest near the stack's limit)."""
    stack: list[tuple[tuple[str, ...], Any]] = [((), value)]
    while stack:
        path, node = stack.pop()
        yield path, node, False
        if isinstance(node, dict):
            for key in node:
                yield path, key, True
            stack.extend(((*path, str(k)), v) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend(((*path, str(i)), v) for i, v in reversed(list(enumerate(node))))


def _bad_text(value: Any) -> tuple[tuple[str, ...], str, int] | None:
    """The first text in ``value`` that UTF-8 cannot encode: its path, what it is there (the
    value, or a key of the object), and where in it."""
    for path, node, is_key in _nodes(value):
        if isinstance(node, str):
            at = surrogate_at(node)
            if at is not None:
                return path, f"a key of {_where(path)}" if is_key else _where(path), at
    return None


def _deep_path(value: Any) -> tuple[str, ...] | None:
    """The path of the first object or array nested deeper than :data:`MAX_DEPTH` levels."""
    for path, node, is_key in _nodes(value):
        if not is_key and isinstance(node, dict | list) and len(path) >= MAX_DEPTH:
            return path
    return None


def _scan(head: bytes) -> tuple[types.RequestId | None, str | None]:
    """From the start of a message read by its tokens alone (it may be cut short, or nest
    too deep for a reader): the id of the top-level object, and the top-level key under which
    objects and arrays first nest deeper than :data:`MAX_DEPTH` levels (None if not seen)."""
    request_id: types.RequestId | None = None
    deep_in: str | None = None
    depth = 0
    key: str | None = None
    expect_key = after_colon = False
    for match in _TOKEN.finditer(head):
        token = match.group()
        if token in (b"{", b"["):
            if depth == 0 and token == b"[":
                break
            depth += 1
            if depth > MAX_DEPTH and deep_in is None:
                deep_in = key
            expect_key, after_colon = depth == 1, False
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                break
        elif token == b"," and depth == 1:
            expect_key, key = True, None
        elif token == b":" and depth == 1:
            after_colon = True
        elif token == b'"':
            break
        elif depth == 1 and expect_key:
            key = _token_value(token)
            key = key if isinstance(key, str) else None
            expect_key = False
        elif depth == 1 and after_colon:
            if key == "id" and request_id is None:
                request_id = _request_id({"id": _token_value(token)})
            after_colon = False
        if request_id is not None and deep_in is not None:
            break
    return request_id, deep_in


def _token_value(token: bytes) -> Any:
    try:
        return json.loads(token)
    except (ValueError, RecursionError):
        return None
