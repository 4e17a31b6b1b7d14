"""A memory on a memstrata server, as an agent uses one: :func:`connect` and
:class:`RemoteMemory`, the :class:`~memstrata.agent.AgentMemory` verbs over the HTTP API.

The answers are decoded into the types :class:`memstrata.Memory` returns (episodes, facts,
hits, the context, wake-up and recall results, curated documents, delete reports), and the
errors into the same classes of :mod:`memstrata.errors`: the server's ``{"error": <class>,
"message": ...}`` is raised as that class with that message (a ``ConflictError`` with the
versions of its ``details``, a ``TooLargeError`` with the limit and the size); a class the
tree has no name for as its status's class (422 :class:`InvalidInputError`, 404
:class:`NotFoundError`...) or, failing that, :class:`RemoteError`. A server that cannot be
reached, or does not answer within the timeout, is :class:`RemoteError` naming its URL; the
API key goes in the ``Authorization`` header only, never into a message.

Input is checked here as the facade checks it before anything is sent (turns, scopes, ids,
document keys and operations), so the same mistakes are the same errors; the server checks
everything again. Thread-safe: one pool of connections, kept alive between calls.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote, urlencode, urlsplit, urlunsplit

import httpx2

from memstrata import errors
from memstrata.codec import (
    episode_from_json,
    fact_from_json,
    format_time,
    hit_from_json,
    record_from_json,
    scope_from_json,
    scope_to_json,
)
from memstrata.context import Context, Item
from memstrata.document.format import parse
from memstrata.document.ops import Operation, operation_to_json
from memstrata.errors import (
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    LLMUnavailableError,
    MemstrataError,
    NotFoundError,
    RemoteError,
    StoreError,
    TooLargeError,
    UnauthenticatedError,
    UpstreamError,
)
from memstrata.ids import kind_of
from memstrata.model import (
    Category,
    Episode,
    Fact,
    Granularity,
    JsonValue,
    SearchFilter,
    SearchHits,
    Turn,
    When,
)

if TYPE_CHECKING:
    from memstrata.agent import AgentMemory
    from memstrata.api.browse import FactView, Validity
    from memstrata.api.common import DeleteReport, ListKind, Record, ScopeLike, TurnLike
    from memstrata.document.format import Document as CuratedDocument
    from memstrata.layers import Recall, WakeUp

#: the most items one page of an HTTP list holds (``server.deps.MAX_HTTP_PAGE``)
_HTTP_PAGE: Final = 1000
#: the most items one call of ``facts`` or ``list`` returns, as in process
_MAX_LIMIT: Final = 10_000
#: the longest query string a request's URL carries, encoded (the HTTP client's bound)
_MAX_QUERY: Final = 65_536
#: the class of an error the tree has no name for, by the status it came with
_BY_STATUS: Final[Mapping[int, type[MemstrataError]]] = {
    401: UnauthenticatedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    413: TooLargeError,
    422: InvalidInputError,
    502: UpstreamError,
    503: StoreError,
}


def connect(url: str, key: str | None = None, *, timeout: float = 30) -> RemoteMemory:
    """The memory served at ``url`` (``http://host:port``, with a path if the API is served
    under one), reached with the API key ``key`` (None: a server in local mode), each call
    answered within ``timeout`` seconds. Asks the server who is calling first, so a server
    that cannot be reached (:class:`RemoteError`) or a key it does not take
    (:class:`UnauthenticatedError`) is said here, not at the first call."""
    memory = RemoteMemory(url, key, timeout=timeout)
    try:
        memory.me()
    except BaseException:
        memory.close()
        raise
    return memory


class RemoteMemory:
    """The :class:`~memstrata.agent.AgentMemory` verbs of a memstrata server, over its HTTP
    API (see :func:`connect`). A context manager; :meth:`close` closes its connections."""

    def __init__(self, url: str, key: str | None = None, *, timeout: float = 30) -> None:
        parts = urlsplit(url.strip()) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise InvalidInputError(
                "the memory server's URL is http:// or https:// and a host, "
                f"e.g. http://127.0.0.1:8765, not {_shown_url(url)!r}"
            )
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise InvalidInputError(f"timeout is a number of seconds above 0, not {timeout!r}")
        headers = {"Accept": "application/json"}
        if key:
            if not isinstance(key, str) or not key.isascii() or not key.isprintable():
                raise InvalidInputError("the API key must be printable ASCII text (ms_...)")
            headers["Authorization"] = f"Bearer {key.strip()}"
        #: the server's URL as errors name it: without credentials, query or fragment
        self.url = _shown_url(url)
        self.timeout = float(timeout)
        base = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self._http = httpx2.Client(base_url=base, headers=headers, timeout=self.timeout)

    def __repr__(self) -> str:
        return f"RemoteMemory({self.url!r})"

    # the connection ------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteMemory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def me(self) -> dict[str, Any]:
        """Who the server takes the caller for: ``mode`` (``keys`` or ``local``), ``role``,
        the ``users`` the key serves (None: every user) and the key's public fields."""
        answer: dict[str, Any] = self._call("GET", "/v1/me")
        return answer

    # capture -------------------------------------------------------------------------
    def remember(
        self,
        turns: TurnLike | Iterable[TurnLike],
        scope: ScopeLike,
        *,
        surface: str = "chat",
        session_id: str | None = None,
    ) -> list[Episode]:
        from memstrata.api.common import as_turn

        if isinstance(turns, str | Turn | Mapping):
            items: builtins.list[TurnLike] = [turns]
        elif isinstance(turns, Iterable):
            items = builtins.list(turns)
        else:
            raise InvalidInputError(
                f"turns are text, a Turn, a mapping or a list of them, not {type(turns).__name__}"
            )
        if not items:
            raise InvalidInputError("no turns to remember")
        body = {
            "scope": _scope_json(scope),
            "turns": [_turn_json(as_turn(t)) for t in items],
            "surface": surface,
            "session_id": session_id,
        }
        return [episode_from_json(e) for e in self._call("POST", "/v1/remember", body=body)]

    # search and serving --------------------------------------------------------------
    def search(
        self,
        query: str,
        scope: ScopeLike,
        *,
        k: int = 10,
        granularity: Granularity | str = Granularity.TURN,
        filters: SearchFilter | None = None,
        rerank: bool = False,
        wait: bool | None = None,
    ) -> SearchHits:
        if filters is not None and not isinstance(filters, SearchFilter):
            raise InvalidInputError(f"filters must be a SearchFilter, not {type(filters).__name__}")
        params: dict[str, Any] = {"q": query, "k": k, "granularity": str(granularity)}
        params.update(_filter_params(filters or SearchFilter()))
        if rerank:
            params["rerank"] = True
        if wait is not None:
            params["wait"] = wait
        page = self._call("GET", "/v1/search", scope=scope, params=params)
        return SearchHits([hit_from_json(h) for h in page["items"]], pending=page["pending"])

    def context(self, query: str, scope: ScopeLike, *, budget: int = 1000) -> Context:
        params = {"q": query, "budget": budget, "explain": True}
        answer = self._call("GET", "/v1/context", scope=scope, params=params)
        items = [(_item_from_json(e), bool(e["included"])) for e in answer["explain"] or ()]
        return Context(
            text=answer["text"],
            tokens=answer["tokens"],
            budget=answer["budget"],
            route=answer["route"],
            topic=answer["topic"],
            included=[i for i, included in items if included],
            cut=[i for i, included in items if not included],
        )

    def wake_up(self, scope: ScopeLike, *, budget: int = 800) -> WakeUp:
        from memstrata.layers import WakeUp

        answer = self._call("GET", "/v1/wake-up", scope=scope, params={"budget": budget})
        return WakeUp(
            text=answer["text"],
            tokens=answer["tokens"],
            budget=answer["budget"],
            scope=scope_from_json(answer["scope"]),
            facts_included=builtins.list(answer["facts"]),
            left_out=dict(answer["left_out"]),
        )

    def recall(self, topic: str, scope: ScopeLike, *, budget: int = 1200) -> Recall:
        from memstrata.layers import Recall

        params = {"topic": topic, "budget": budget}
        answer = self._call("GET", "/v1/recall", scope=scope, params=params)
        return Recall(
            topic=answer["topic"],
            text=answer["text"],
            tokens=answer["tokens"],
            budget=answer["budget"],
            documents=builtins.list(answer["documents"]),
            facts_included=builtins.list(answer["facts"]),
            left_out=answer["left_out"],
        )

    # forgetting ----------------------------------------------------------------------
    def forget(self, item_id: str, scope: ScopeLike) -> DeleteReport:
        from memstrata.api.common import DeleteReport

        path = f"/v1/items/{_item_path(item_id)}/forget"
        answer = self._call("POST", path, scope=scope)
        return DeleteReport(
            tuple(answer["deleted"]), tuple(answer["cascaded"]), dict(answer["counts"])
        )

    # facts and records ---------------------------------------------------------------
    def add_fact(
        self,
        text: str,
        scope: ScopeLike,
        *,
        category: Category | str = Category.OTHER,
        confidence: float = 1.0,
        importance: float = 0.5,
        topic: str | None = None,
        sources: Sequence[str] = (),
        when: When | Mapping[str, Any] | None = None,
        slot: str | None = None,
        value: str | None = None,
    ) -> Fact:
        from memstrata.api.common import when_of

        if isinstance(sources, str):
            raise InvalidInputError("sources is a list of turn ids, not one text")
        fact_when = when_of(when)
        body = {
            "scope": _scope_json(scope),
            "text": text,
            "category": str(category),
            "confidence": confidence,
            "importance": importance,
            "topic": topic,
            "sources": builtins.list(sources),
            "when": None
            if fact_when is None
            else {
                "text": fact_when.text,
                "start": format_time(fact_when.start),
                "end": format_time(fact_when.end),
            },
            "slot": slot,
            "value": value,
        }
        return fact_from_json(self._call("POST", "/v1/facts", body=body))

    def facts(
        self,
        scope: ScopeLike,
        *,
        category: str | None = None,
        topic: str | None = None,
        valid: Validity = "current",
        after: str | None = None,
        limit: int = 100,
        slot: str | None = None,
        slot_kind: str | None = None,
    ) -> builtins.list[FactView]:
        from memstrata.api.browse import FactView

        _check_limit(limit)
        params: dict[str, Any] = {"valid": valid}
        for name, given in (
            ("category", category),
            ("topic", topic),
            ("slot", slot),
            ("slot_kind", slot_kind),
        ):
            if given is not None:
                params[name] = str(given)
        items = self._pages("/v1/facts", scope, params, limit=limit, after=after)
        return [FactView(fact_from_json(i), i.get("superseded_by_text")) for i in items]

    def get(self, item_id: str, scope: ScopeLike) -> Record:
        return record_from_json(self._call("GET", f"/v1/items/{_item_path(item_id)}", scope=scope))

    # curated documents ---------------------------------------------------------------
    def doc(self, key: str, scope: ScopeLike) -> tuple[CuratedDocument, int]:
        answer = self._call("GET", f"/v1/docs/{_doc_path(key)}", scope=scope)
        return parse(answer["markdown"]), int(answer["version"])

    def apply_doc(
        self, key: str, scope: ScopeLike, ops: Sequence[Operation], *, expected_version: int
    ) -> tuple[CuratedDocument, int]:
        if isinstance(ops, Operation) or not all(isinstance(op, Operation) for op in ops):
            raise InvalidInputError("ops is a list of document operations (Operation)")
        body = {
            "operations": [operation_to_json(op) for op in ops],
            "expected_version": expected_version,
        }
        path = f"/v1/docs/{_doc_path(key)}/apply"
        answer = self._call("POST", path, scope=scope, body=body)
        return parse(answer["after"]), int(answer["version"])

    # last: the method named ``list`` shadows the type in the class's later annotations
    def list(
        self,
        scope: ScopeLike,
        kind: ListKind = "episode",
        *,
        limit: int = 100,
        after: str | None = None,
    ) -> builtins.list[Record]:
        if kind not in ("episode", "fact", "document"):
            raise InvalidInputError(f"unknown kind {kind!r}; expected episode, fact or document")
        _check_limit(limit)
        if after is not None:
            kind_of(after)  # a cursor is an id
        items = self._pages("/v1/list", scope, {"kind": kind}, limit=limit, after=after)
        return [record_from_json(i) for i in items]

    # the wire ------------------------------------------------------------------------
    def _pages(
        self,
        path: str,
        scope: ScopeLike,
        params: dict[str, Any],
        *,
        limit: int,
        after: str | None,
    ) -> builtins.list[dict[str, Any]]:
        """Up to ``limit`` items of a list, page after page from the cursor ``after``."""
        items: builtins.list[dict[str, Any]] = []
        cursor = after
        while len(items) < limit:
            query = {**params, "limit": min(limit - len(items), _HTTP_PAGE)}
            if cursor is not None:
                query["cursor"] = cursor
            page = self._call("GET", path, scope=scope, params=query)
            items.extend(page["items"])
            cursor = page["next_cursor"]
            if cursor is None:
                break
        return items[:limit]

    def _call(
        self,
        method: str,
        path: str,
        *,
        scope: ScopeLike | None = None,
        params: Mapping[str, Any] | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> Any:
        """The decoded JSON answer of ``method path``; an error answer raised as its class
        of the tree (:func:`error_of`)."""
        query = {**(_scope_json(scope) if scope is not None else {}), **(params or {})}
        encoded = len(urlencode(query, quote_via=quote))
        if encoded > _MAX_QUERY:
            raise TooLargeError(
                f"the query of {method} {path} is {encoded} characters once encoded for its "
                f"URL, over the {_MAX_QUERY} a URL carries; shorten it",
                limit=_MAX_QUERY,
                size=encoded,
            )
        try:
            response = self._http.request(
                method, path, params=query or None, json=None if body is None else dict(body)
            )
        except httpx2.TimeoutException as exc:
            raise RemoteError(
                f"the memory server at {self.url} did not answer within {self.timeout:g} s"
            ) from exc
        except httpx2.HTTPError as exc:
            raise RemoteError(f"cannot reach the memory server at {self.url}: {exc}") from exc
        if response.is_success:
            try:
                return response.json()
            except ValueError as exc:
                raise RemoteError(
                    f"the memory server at {self.url} did not answer JSON "
                    f"({method} {path}: {response.status_code})",
                    status=response.status_code,
                ) from exc
        raise error_of(response, self.url)


def error_of(response: httpx2.Response, url: str) -> MemstrataError:
    """The error an answer of the HTTP API stands for: the class of the tree it names, with
    its message (and the fields of its ``details``); a class the tree does not name, by the
    status; :class:`RemoteError` for anything else (``url`` names the server)."""
    status = response.status_code
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or not isinstance(body.get("message"), str):
        return RemoteError(
            f"the memory server at {url} answered {status} without an error of the API",
            status=status,
        )
    name, message = body.get("error"), body["message"]
    details = [d for d in body.get("details") or () if isinstance(d, dict)]
    found = getattr(errors, name, None) if isinstance(name, str) and name.isidentifier() else None
    cls: type[MemstrataError]
    if isinstance(found, type) and issubclass(found, MemstrataError) and found is not RemoteError:
        cls = found
    else:
        cls = _BY_STATUS.get(status, RemoteError)
    if cls is RemoteError or cls is MemstrataError:
        shown = name if isinstance(name, str) else "an error"
        return RemoteError(
            f"the memory server at {url} answered {status} {shown}: {message}",
            status=status,
            error=name if isinstance(name, str) else None,
        )
    return _rebuilt(cls, message, details, response)


def _rebuilt(
    cls: type[MemstrataError],
    message: str,
    details: Sequence[dict[str, Any]],
    response: httpx2.Response,
) -> MemstrataError:
    """An error of class ``cls`` with the server's message and what its details say."""

    def detail(kind: str) -> dict[str, Any]:
        return next((d for d in details if d.get("type") == kind), {})

    exc: MemstrataError
    if issubclass(cls, ConflictError):
        found = detail("conflict")
        exc = cls(
            str(found.get("item_id", "")),
            int(found.get("expected_version", 0)),
            found.get("current_version"),
        )
    elif issubclass(cls, TooLargeError):
        found = detail("too-large")
        exc = cls(message, limit=int(found.get("limit", 0)), size=int(found.get("size", 0)))
    elif issubclass(cls, LLMUnavailableError):
        from memstrata.httpjson import retry_after_seconds

        wait = retry_after_seconds(response.headers.get("Retry-After"))
        exc = cls(message, status=response.status_code, retry_after_s=wait)
    else:
        exc = cls(message)
    exc.args = (message,)  # the server's words, whatever a constructor makes of them
    return exc


def _shown_url(url: object) -> str:
    """``url`` as a message may show it: no user or password, no query, no fragment."""
    if not isinstance(url, str):
        return repr(url)[:100]
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return url.strip()[:100].split("@")[-1]
    if ":" in host:
        host = f"[{host}]"
    return urlunsplit((parts.scheme, f"{host}{port}", parts.path, "", ""))[:200]


def _scope_json(scope: ScopeLike) -> dict[str, JsonValue]:
    from memstrata.api.common import as_scope

    return scope_to_json(as_scope(scope))


def _turn_json(turn: Turn) -> dict[str, JsonValue]:
    return {
        "text": turn.text,
        "speaker": turn.speaker,
        "role": turn.role.value,
        "time": None if turn.time is None else format_time(turn.time),
        "session_id": turn.session_id,
        "metadata": dict(turn.metadata),
    }


def _filter_params(filters: SearchFilter) -> dict[str, Any]:
    """A search filter as the query parameters of ``GET /v1/search`` (those not at their
    default)."""
    params: dict[str, Any] = {}
    for name in ("speaker", "session_id", "surface", "topic"):
        given = getattr(filters, name)
        if given is not None:
            params[name] = given
    for name in ("since", "until"):
        at = getattr(filters, name)
        if at is not None:
            params[name] = format_time(at)
    if filters.category is not None:
        params["category"] = str(filters.category)
    if filters.layer is not None:
        params["layer"] = str(filters.layer)
    if filters.include_archived:
        params["include_archived"] = True
    if not filters.current_only:
        params["current_only"] = False
    return params


def _item_from_json(entry: Mapping[str, Any]) -> Item:
    """An item of a context from its entry of ``explain`` (``ExplainOut``)."""
    relevance = entry.get("relevance")
    return Item(
        kind=entry["kind"],
        id=entry["id"],
        line=entry.get("line", ""),
        reason=entry.get("reason", ""),
        rank=int(entry.get("rank", 0)),
        relevance=None if relevance is None else float(relevance),
        scored=entry.get("scored", ""),
        sources=tuple(entry.get("sources", ())),
        position=entry.get("position"),
        cut=entry.get("cut", ""),
        text=entry.get("text", ""),
    )


def _item_path(item_id: str) -> str:
    """An item's id for a path, checked as the facade checks it."""
    kind_of(item_id)
    return quote(item_id, safe="")


def _doc_path(key: str) -> str:
    """A document key for a path, checked as the facade checks it."""
    from memstrata.document.service import kind_for

    if not isinstance(key, str):
        raise InvalidInputError(f"a document key is text, not {type(key).__name__}")
    kind_for(key)
    return quote(key, safe="")


def _check_limit(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= _MAX_LIMIT:
        raise InvalidInputError(f"limit must be between 1 and {_MAX_LIMIT}, got {limit!r}")


__all__ = ["RemoteMemory", "connect", "error_of"]


if TYPE_CHECKING:  # checked by mypy: the client is an AgentMemory

    def _remote(memory: RemoteMemory) -> AgentMemory:
        return memory
