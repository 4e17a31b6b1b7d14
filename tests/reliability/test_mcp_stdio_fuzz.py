"""A schema-driven fuzzer of MCP over stdio: every request gets exactly one answer, none an
internal error, and the server lives on.

``memstrata mcp --user alice`` runs as a subprocess over a temporary data directory with the
hashing embedder, and a ``max_request_bytes`` of 64 KiB (so that oversized lines stay cheap).
Hypothesis builds batches of lines: tool calls whose arguments are drawn from the input
schemas ``tools/list`` returns, resource reads, other methods and notifications, and the same
broken the ways a client breaks them: a lone surrogate or an invalid UTF-8 byte in a text, a
non-finite number (``NaN``, ``Infinity``), nesting from just past the body limit to far past
the stack, a line cut short, a line over the size limit, wrong types for any part of the
message, an id of a wrong type, JSON that is no object, random bytes. Every line with an id
must get one answer with that id, every line that cannot show one (cut short, a wrong id,
no object) one answer with id null, a notification none; each batch ends with a ``ping``
whose answer must come after all of them (nothing answered twice). The default run sends a
few hundred lines, ``CI=true`` several thousand.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final, Literal

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.mcp_stdio import StdioServer, line
from tests.reliability.sizes import report, size

#: batches of lines per run
EXAMPLES = size(400, 3000)
#: the size limit of a line the server is started with
LIMIT: Final = 64 * 1024
#: how long a batch may wait for each of its answers
TIMEOUT: Final = 15.0
INTERNAL_ERROR: Final = -32603
#: ids count up from here, so that every id has the same number of digits
ID_BASE: Final = 10**12

Expect = Literal["id", "null", "none"]


@dataclass
class Line:
    """A line to send, what it is, and the answer it must get: one with ``request_id``, one
    with id null, or none."""

    kind: str
    data: bytes
    expect: Expect
    request_id: int | str | None = None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StdioServer]:
    served = StdioServer(tmp_path_factory.mktemp("fuzz"), max_request_bytes=str(LIMIT))
    try:
        yield served
    finally:
        assert served.close() == 0
        assert "Traceback" not in served.stderr()


# -- values from the tools' input schemas ----------------------------------------------------

WORDS = st.sampled_from(
    ["Mochi", "puppy", "Hangzhou", "龙井茶", "aisle seats", "chess", "essentials", "home", "x"]
)
TEXT = st.one_of(WORDS, st.text(max_size=40))
JSON_LEAF = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False), TEXT
)
ANY_JSON = st.recursive(
    JSON_LEAF,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


def _from_schema(schema: dict[str, Any], defs: dict[str, Any], depth: int = 0) -> Any:
    """A strategy of values shaped by a JSON schema (pydantic's: ``$ref``, ``anyOf``,
    ``oneOf``, ``const``, ``enum``, the JSON types), not always within its constraints: the
    server must answer either way."""
    if "$ref" in schema:
        return _from_schema(defs[schema["$ref"].rsplit("/", 1)[-1]], defs, depth)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    for union in ("anyOf", "oneOf"):
        if union in schema:
            return st.one_of([_from_schema(s, defs, depth) for s in schema[union]])
    kind = schema.get("type")
    if kind == "string":
        if schema.get("format") == "date-time":
            return st.datetimes().map(lambda t: t.isoformat() + "Z") | TEXT
        return TEXT.map(lambda t: t[: schema.get("maxLength", 10_000)]) | WORDS
    if kind == "integer":
        low, high = schema.get("minimum", -(2**40)), schema.get("maximum", 2**40)
        return st.integers(low, high) | st.integers()
    if kind == "number":
        low, high = schema.get("minimum"), schema.get("maximum")
        return st.floats(low, high, allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        items = schema.get("items", {})
        inner = _from_schema(items, defs, depth + 1) if depth < 4 else JSON_LEAF
        return st.lists(inner, min_size=min(schema.get("minItems", 0), 3), max_size=3)
    if kind == "object" and depth < 4:
        properties = schema.get("properties", {})
        required = set(schema.get("required", ()))
        shaped = st.fixed_dictionaries(
            {k: _from_schema(v, defs, depth + 1) for k, v in properties.items() if k in required},
            optional={
                k: _from_schema(v, defs, depth + 1)
                for k, v in properties.items()
                if k not in required
            },
        )
        if schema.get("additionalProperties") is True:
            return shaped | st.dictionaries(TEXT, JSON_LEAF, max_size=3)
        return shaped
    return ANY_JSON


# -- lines -------------------------------------------------------------------------------------

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
#: stands for a value spliced into the text after encoding
_SPLICE = "\x00splice\x00"
_SPLICED = json.dumps(_SPLICE).encode("ascii")
INVALID_UTF8 = [b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf"]
SURROGATES = [b"\\ud800", b"\\udfff", b"\\udbff\\u0041", b"\\udc00\\ud800"]
NON_FINITE = [b"NaN", b"Infinity", b"-Infinity"]
WRONG = st.one_of(
    st.integers(), st.floats(allow_nan=False), st.booleans(), st.none(), TEXT, st.lists(JSON_LEAF)
)
OTHER_METHODS = [
    "ping",
    "tools/list",
    "resources/list",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "resources/subscribe",
    "no/such/method",
]


class Lines:
    """Draws the lines of a batch, each with a fresh id."""

    def __init__(self, data: st.DataObject, schemas: dict[str, Any], serial: Iterator[int]) -> None:
        self.data = data
        self.schemas = schemas
        self.serial = serial

    def draw(self, strategy: st.SearchStrategy[Any], label: str) -> Any:
        return self.data.draw(strategy, label=label)

    def new_id(self) -> int | str:
        """A fresh id of a fixed width: what is drawn after it (where a line is cut, where a
        byte goes in) must not depend on how many ids came before, or Hypothesis, replaying a
        choice sequence it has seen, finds the strategy drawing differently."""
        n = ID_BASE + next(self.serial)
        return n if self.draw(st.booleans(), "int id") else f"r-{n}"

    def request(self, request_id: int | str) -> dict[str, Any]:
        """A tools/call from a tool's schema, a resource read, or another method."""
        what = self.draw(st.sampled_from(["tool", "tool", "tool", "resource", "other"]), "what")
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if what == "tool":
            name = self.draw(st.sampled_from(sorted(self.schemas)) | TEXT, "tool")
            schema = self.schemas.get(name, {"type": "object"})
            arguments = self.draw(_from_schema(schema, schema.get("$defs", {})), "arguments")
            message |= {"method": "tools/call", "params": {"name": name, "arguments": arguments}}
        elif what == "resource":
            uris = st.sampled_from(["memstrata://identity", "memstrata://essentials"]) | TEXT
            message |= {"method": "resources/read", "params": {"uri": self.draw(uris, "uri")}}
        else:
            method = self.draw(st.sampled_from(OTHER_METHODS), "method")
            message |= {"method": method, "params": self.draw(st.none() | ANY_JSON, "params")}
            if message["params"] is None:
                del message["params"]
        return message

    def line(self) -> Line:
        kind = self.draw(
            st.sampled_from(
                [
                    "valid",
                    "valid",
                    "surrogate",
                    "invalid_utf8",
                    "non_finite",
                    "deep",
                    "truncated",
                    "oversized",
                    "wrong_type",
                    "wrong_id",
                    "not_object",
                    "notification",
                    "bytes",
                ]
            ),
            "kind",
        )
        request_id = self.new_id()
        message = self.request(request_id)
        expect: Expect = "id"
        if kind == "valid":
            data = line(message)
        elif kind in ("surrogate", "invalid_utf8"):
            data = self._into_a_text(message, kind)
        elif kind == "non_finite":
            data = self._spliced(message, self.draw(st.sampled_from(NON_FINITE), "non-finite"))
        elif kind == "deep":
            levels = self.draw(st.sampled_from([33, 150, 199, 201, 260, 1_200, 6_000]), "depth")
            opening, closing = self.draw(st.sampled_from([(b"[", b"]"), (b'{"a":', b"}")]), "of")
            data = self._spliced(message, opening * levels + b"1" + closing * levels)
        elif kind == "truncated":
            data = line(message)
            data = data[: self.draw(st.integers(1, len(data) - 1), "cut at")]
            expect = "null"
        elif kind == "oversized":
            over = self.draw(st.integers(1, 3 * LIMIT), "over by")
            data = self._spliced(message, json.dumps("y" * (LIMIT + over)).encode("ascii"))
        elif kind == "wrong_type":
            data = line(self._wrong_type(message))
        elif kind == "wrong_id":
            bad = self.draw(st.sampled_from([1.5, 1.0, True, None, [1], {"n": 1}, -0.5]), "id")
            data = line({**message, "id": bad})
            expect = "null"
        elif kind == "not_object":
            value = self.draw(st.lists(ANY_JSON, max_size=2) | JSON_LEAF, "not an object")
            data = line({"v": value})[len(b'{"v": ') : -1]
            expect = "null"
        elif kind == "notification":
            method = self.draw(
                st.sampled_from(["notifications/initialized", "notifications/progress"]) | TEXT,
                "notification",
            )
            params = self.draw(st.none() | st.dictionaries(TEXT, JSON_LEAF, max_size=3), "params")
            note = {"jsonrpc": "2.0", "method": method}
            data = line(note if params is None else {**note, "params": params})
            expect = "none"
        else:  # random bytes, one line of them
            data = self.draw(st.binary(min_size=1, max_size=200), "bytes").replace(b"\n", b" ")
            expect = "none" if not data.strip(b" \t\r") else "null"
        if expect != "id":
            return Line(kind, data, expect)
        return Line(kind, data, expect, request_id)

    def _params_start(self, data: bytes) -> int:
        return data.index(b'"params"') if b'"params"' in data else len(data)

    def _into_a_text(self, message: dict[str, Any], kind: str) -> bytes:
        """The message with a lone surrogate, or bytes that are not UTF-8, put into one of the
        texts of its params (a key or a value); the id stays readable."""
        if not isinstance(message.get("params"), dict):
            message["params"] = {}
        message["params"]["note"] = "text"
        data = json.dumps(message, ensure_ascii=True).encode("ascii")
        start = self._params_start(data)
        spots = [m.start() + 1 for m in _JSON_STRING.finditer(data) if m.start() > start]
        at = self.draw(st.sampled_from(spots), "at")
        pool = SURROGATES if kind == "surrogate" else INVALID_UTF8
        put: bytes = self.draw(st.sampled_from(pool), "put")
        return data[:at] + put + data[at:]

    def _spliced(self, message: dict[str, Any], value: bytes) -> bytes:
        """The message with ``value`` as one of its params' values (an argument of a tool)."""
        params = message.setdefault("params", {})
        if not isinstance(params, dict):
            params = message["params"] = {}
        arguments = params.get("arguments")
        target: dict[str, Any] = arguments if isinstance(arguments, dict) else params
        keys = [*sorted(target), "fuzzed"]
        target[self.draw(st.sampled_from(keys), "replaced")] = _SPLICE
        return line(message).replace(_SPLICED, value, 1)

    def _wrong_type(self, message: dict[str, Any]) -> dict[str, Any]:
        """The message with one of its parts (jsonrpc, method, params, a tool's name or its
        arguments) of another type; the id stays."""
        part = self.draw(
            st.sampled_from(["jsonrpc", "method", "params", "params.name", "params.arguments"]),
            "part",
        )
        value = self.draw(WRONG, "wrong value")
        if part.startswith("params."):
            params = message.get("params")
            if not isinstance(params, dict):
                params = message["params"] = {}
            params[part.split(".", 1)[1]] = value
        else:
            message[part] = value
        return message


# -- the run -----------------------------------------------------------------------------------


def _outcome(answer: dict[str, Any]) -> str:
    if "error" in answer:
        return f"rpc_error_{-answer['error']['code']}"
    if answer.get("result", {}).get("isError"):
        return "tool_error"
    return "result"


def _check_answer(answer: dict[str, Any], sent: Line | None) -> None:
    """No answer is an internal error or shows a traceback."""
    where = (sent.kind, sent.data[:300]) if sent is not None else answer
    text = json.dumps(answer, ensure_ascii=False)
    assert "Traceback" not in text, where
    if "error" in answer:
        error = answer["error"]
        assert error["code"] != INTERNAL_ERROR, (where, answer)
        assert isinstance(error["message"], str) and error["message"], (where, answer)
    else:
        structured = answer.get("result", {}).get("structuredContent") or {}
        if answer.get("result", {}).get("isError"):
            assert structured.get("error") not in (None, "InternalError"), (where, answer)


def _collect(server: StdioServer, batch: list[Line], sync: str) -> list[dict[str, Any]]:
    """Every answer to ``batch`` and then to the ping ``sync``: fails if one is missing,
    or if anything else comes."""
    pending = {ln.request_id: ln for ln in batch if ln.expect == "id"}
    nulls = sum(ln.expect == "null" for ln in batch)
    answers: list[dict[str, Any]] = []
    while pending or nulls:
        answer = server.answer(TIMEOUT)
        missing = [(ln.kind, ln.data[:200]) for ln in pending.values()]
        assert answer is not None, f"unanswered: {missing}, {nulls} that cannot show an id"
        answers.append(answer)
        if answer["id"] is None:
            assert nulls > 0, f"an answer with id null too many: {answer}"
            nulls -= 1
            _check_answer(answer, None)
        else:
            sent = pending.pop(answer["id"], None)
            assert sent is not None, f"an answer to no pending request: {answer}"
            _check_answer(answer, sent)
    server.send(line({"jsonrpc": "2.0", "id": sync, "method": "ping"}))
    last = server.answer(TIMEOUT)
    assert last == {"jsonrpc": "2.0", "id": sync, "result": {}}, f"after the batch: {last}"
    return answers


def test_every_request_on_stdio_gets_one_answer_and_none_is_internal(
    server: StdioServer,
) -> None:
    listed = server.ask(line({"jsonrpc": "2.0", "id": "list", "method": "tools/list"}))
    schemas = {tool["name"]: tool["inputSchema"] for tool in listed["result"]["tools"]}
    assert len(schemas) >= 10
    serial = iter(range(1, 10**9))
    kinds: Counter[str] = Counter()
    expected: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    clean = [True]  # False while a batch runs: one that failed may leave answers behind

    @given(data=st.data())
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
        # no shrinking: the server is one process whose state each batch changes, and a
        # batch left unanswered would wait out the timeout at every replay
        phases=[Phase.explicit, Phase.generate],
    )
    def fuzz(data: st.DataObject) -> None:
        if not clean[0]:
            while server.answer(2.0) is not None:
                pass
        lines = Lines(data, schemas, serial)
        batch = [lines.line() for _ in range(data.draw(st.integers(1, 6), label="lines"))]
        clean[0] = False  # (a batch Hypothesis gives up on while drawing sends nothing)
        for sent in batch:
            server.send(sent.data)
        answers = _collect(server, batch, f"sync-{ID_BASE + next(serial)}")
        assert server.alive()
        clean[0] = True
        kinds.update(ln.kind for ln in batch)
        expected.update(ln.expect for ln in batch)
        outcomes.update(_outcome(a) for a in answers)
        outcomes.update("with_id" if a["id"] is not None else "with_id_null" for a in answers)

    fuzz()
    assert server.alive()
    found = server.ask(server.call("last", "search", {"q": "Mochi"}))
    assert "result" in found and not found["result"]["isError"], found
    report(
        "mcp_stdio_fuzz",
        lines=sum(kinds.values()),
        requests_with_id=expected["id"],
        lines_without_id=expected["null"],
        notifications_and_blank=expected["none"],
        answered=outcomes["with_id"] + outcomes["with_id_null"],
        **{f"answered_{key}": n for key, n in sorted(outcomes.items())},
        **{f"sent_{kind}": n for kind, n in sorted(kinds.items())},
    )
