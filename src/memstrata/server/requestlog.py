"""Request ids and the server's log lines: one JSON object a line, or text for a person.

Each HTTP request gets an id: the client's ``X-Request-ID`` when it is sane (1 to 128
characters of letters, digits and ``._:-``), else a new one. The id goes back in the
``X-Request-ID`` response header and, through a context variable that the thread running a
route inherits, onto every log line written while the request is served. When the request is
answered, one access line is logged on ``memstrata.access``: method, route template (for a
request refused before it reached its route, the one its path names: :func:`route_of`),
status, duration in milliseconds, request id and the user when a route named it
(:func:`note_user`). Never a query string, a header value or a body: no API key, no memory
text reaches the log.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import sys
import time
import traceback
import uuid
import weakref
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, Literal, TextIO

from memstrata.server.metrics import UNMATCHED, route_label

if TYPE_CHECKING:
    from memstrata.server.limits import ASGIApp, Message, Receive, Scope, Send

HEADER: Final = "x-request-id"
_SANE_ID: Final = re.compile(r"[A-Za-z0-9._:-]{1,128}")
#: the fields of an access line, beside the message
ACCESS_FIELDS: Final = ("method", "route", "status", "duration_ms", "user", "client")

access_log = logging.getLogger("memstrata.access")

LogFormat = Literal["auto", "json", "text"]


@dataclass(slots=True)
class RequestInfo:
    """What the log knows of the request being served."""

    id: str
    user: str | None = None


_current: ContextVar[RequestInfo | None] = ContextVar("memstrata_request", default=None)


def current_request_id() -> str | None:
    """The id of the request being served in this context, if any."""
    info = _current.get()
    return None if info is None else info.id


def note_user(user: str) -> None:
    """Name the user the current request acts for (its access line says so). The info is
    shared with the request's context, so a route running in a worker thread can set it."""
    info = _current.get()
    if info is not None:
        info.user = user


def request_id_from(headers: Iterable[tuple[bytes, bytes]]) -> str:
    """The client's request id when it is sane, else a new one."""
    for name, value in headers:
        if name.lower() == HEADER.encode():
            text = value.decode("latin-1")
            if _SANE_ID.fullmatch(text):
                return text
            break
    return uuid.uuid4().hex


def route_of(scope: Scope) -> str:
    """The template of the route that took the request, or, for a request answered before
    routing (refused by the key check or the body limits), of the route its path names in the
    app's routes (a route of the path that does not take the method still names it);
    :data:`UNMATCHED` for a path no route takes."""
    label = route_label(scope)
    if label != UNMATCHED:
        return label
    app = scope.get("app")
    if app is None:
        return UNMATCHED
    path = str(scope.get("path", ""))
    root = str(scope.get("root_path", ""))
    if root and path.startswith(root + "/"):  # the path within the app, as routing sees it
        path = path[len(root) :]
    method = str(scope.get("method", "")).upper()
    partial: str | None = None
    for pattern, template, methods in _templates(app):
        if pattern.match(path) is None:
            continue
        if methods is None or method in methods:
            return template
        if partial is None:
            partial = template
    return partial if partial is not None else UNMATCHED


#: a route's template: the pattern its paths match, the template, its methods (None: any)
_Template = tuple[re.Pattern[str], str, frozenset[str] | None]
#: each app's route templates, made once
_TEMPLATES: weakref.WeakKeyDictionary[Any, list[_Template]] = weakref.WeakKeyDictionary()


def _templates(app: Any) -> list[_Template]:
    """The templates of ``app``'s routes, with the patterns their paths match, in the order
    the router tries them (a mount matches every path under it)."""
    try:
        return _TEMPLATES[app]
    except (KeyError, TypeError):
        pass
    from starlette.routing import Mount, compile_path

    routes = list(getattr(app, "routes", ()))
    try:  # FastAPI 0.16x lists an included router as one route; this lists what it holds
        from fastapi.routing import iter_route_contexts
    except ImportError:
        listed: list[Any] = routes
    else:
        listed = list(iter_route_contexts(routes))
    found: list[_Template] = []
    for route in listed:
        template = getattr(route, "path", None)
        if not isinstance(template, str) or not template:
            continue
        if isinstance(getattr(route, "original_route", route), Mount):
            pattern, _, _ = compile_path(template.rstrip("/") + "/{path:path}")
            found.append((pattern, template, None))
            continue
        pattern, _, _ = compile_path(template)
        methods = getattr(route, "methods", None)
        found.append(
            (pattern, template, frozenset(m.upper() for m in methods) if methods else None)
        )
    with contextlib.suppress(TypeError):
        _TEMPLATES[app] = found
    return found


class RequestContext:
    """ASGI middleware: gives each HTTP request its id, returns it in ``X-Request-ID`` and
    logs the access line once the request is answered."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        info = RequestInfo(request_id_from(scope.get("headers", ())))
        token = _current.set(info)
        start = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [
                    (k, v) for k, v in message.get("headers", ()) if k.lower() != HEADER.encode()
                ]
                headers.append((HEADER.encode(), info.id.encode()))
                message["headers"] = headers
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            client = scope.get("client")
            fields = {
                "method": str(scope.get("method", "")),
                "route": route_of(scope),
                "status": status,
                "duration_ms": round((time.perf_counter() - start) * 1000, 2),
                "user": info.user,
                "client": client[0] if client else None,
            }
            access_log.info(
                "%s %s %d", fields["method"], fields["route"], status, extra={"access": fields}
            )
            _current.reset(token)


class RequestIdFilter(logging.Filter):
    """Puts the current request id on every record (``record.request_id``, None outside a
    request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "request_id"):
            record.request_id = current_request_id()
        return True


def _time(record: logging.LogRecord) -> str:
    at = datetime.fromtimestamp(record.created, tz=UTC)
    return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class JsonFormatter(logging.Formatter):
    """One JSON object a line: time, level, logger, message, pid, request id, the access
    fields of an access line, and the traceback of an exception."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _time(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "pid": record.process,
            "request_id": getattr(record, "request_id", None),
        }
        access = getattr(record, "access", None)
        if isinstance(access, dict):
            line.update({k: access[k] for k in ACCESS_FIELDS if access.get(k) is not None})
        if record.exc_info and record.exc_info[1] is not None:
            line["exception"] = "".join(traceback.format_exception(*record.exc_info)).rstrip()
        return json.dumps(line, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``<time> <level> <logger> [<request id>] <message> <k=v>...`` for a person."""

    def format(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "request_id", None)
        text = f"{_time(record)} {record.levelname:<7} {record.name}"
        if rid:
            text += f" [{rid}]"
        text += f" {record.getMessage()}"
        access = getattr(record, "access", None)
        if isinstance(access, dict):
            text += f" {access['duration_ms']}ms"
            if access.get("user"):
                text += f" user={access['user']}"
        if record.exc_info and record.exc_info[1] is not None:
            text += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
        return text


#: the loggers a served process writes through the configured handler
_LOGGERS: Final = ("memstrata", "uvicorn", "uvicorn.error")


class StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever ``sys.stderr`` is when a record is emitted (never a stream that
    was replaced and closed since, as under a test runner that captures it)."""

    def __init__(self) -> None:
        super().__init__(sys.stderr)

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, value: TextIO) -> None:
        del value  # always the current stderr


def resolve_format(log_format: LogFormat, stream: TextIO) -> Literal["json", "text"]:
    """``auto`` is text on a terminal, JSON otherwise."""
    if log_format != "auto":
        return log_format
    try:
        return "text" if stream.isatty() else "json"
    except (AttributeError, ValueError):
        return "json"


def configure_server_logging(log_format: LogFormat = "auto", stream: TextIO | None = None) -> str:
    """Send memstrata's and uvicorn's log records, at INFO and up, to ``stream`` (stderr) in
    ``log_format``, each with its request id; returns the format chosen. Idempotent."""
    chosen = resolve_format(log_format, stream if stream is not None else sys.stderr)
    handler = logging.StreamHandler(stream) if stream is not None else StderrHandler()
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter() if chosen == "json" else TextFormatter())
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        # the server's lines have one handler: a console handler of uvicorn's or the CLI's
        # one-line stderr handler would write each line a second time
        logger.handlers.clear()
        if name == "uvicorn.error":
            logger.propagate = True
            continue
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logger.propagate = False
    return chosen
