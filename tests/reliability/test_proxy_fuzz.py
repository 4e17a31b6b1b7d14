"""A fuzzer over the memory proxy: no 5xx, every error in the one shape, nothing stored or
sent upstream from a request that was refused.

The proxy's routes are not in an OpenAPI document (the proxy speaks OpenAI's API, not ours),
so Hypothesis builds the chat-completion bodies: well-formed ones, and ones whose fields have
the wrong types, text with lone surrogates (written as JSON escapes, which JSON can spell and
UTF-8 cannot encode), ``NaN`` and ``Infinity`` written in the JSON text, arrays nested
thousands deep, strings whose body lands just under or over the body limit, and bytes that are
not UTF-8 (an invalid byte, an encoded surrogate, an overlong form, a sequence cut short) or a
body cut off; the headers naming the user and the thread are right, wrong or absent. They
are sent in process (ASGI) to the proxy behind API keys over a memory in a temporary directory
with the hashing embedder, forwarding to a scripted upstream in place of the network. Every
body the upstream got must be strict JSON, and the turns stored must be exactly the exchanges
answered 2xx (their user's message under the user's name, the answer under the assistant's).
The default run sends :data:`EXAMPLES` requests, ``CI=true`` more.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata.api import Memory
from memstrata.embed.fake import HashingEmbedder
from memstrata.server.proxy_messages import last_user_text
from memstrata.settings import load_settings
from tests.proxied import ScriptedUpstream, captured, proxy_client
from tests.reliability.sizes import report, size

#: requests sent by one run
EXAMPLES = size(300, 2000)
#: the proxy's body limit in the fuzzed app (small, so that bodies near it are cheap)
LIMIT = 64_000
USER = "alice"


def _strict(raw: bytes) -> Any:
    """``raw`` as JSON that any JSON reader takes: UTF-8, no ``NaN`` nor ``Infinity``."""

    def refuse(constant: str) -> Any:
        raise AssertionError(f"the upstream was sent {constant}")

    return json.loads(raw.decode("utf-8"), parse_constant=refuse)


#: what users ask, English, Chinese and mixed
SENTENCES = [
    "I prefer aisle seats.",
    "我喜欢靠过道的座位",
    "what's my tea? 我喜欢什么茶",
    "I moved to Hangzhou last month. 我现在在阿里工作。",
]
#: text of any valid Unicode (lone surrogates come from a mutation of the JSON text)
texts = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    [
        "",
        " ",
        "I prefer aisle seats.",
        "我喜欢靠过道的座位",
        "what's my tea? 我喜欢什么茶",
        "\ufffe",
    ]
)
#: finite numbers (NaN and Infinity come from a mutation of the JSON text)
numbers = st.integers(-(10**30), 10**30) | st.floats(allow_nan=False, allow_infinity=False)
#: any JSON value, mostly shallow
values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def field(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field drawn as the API defines it, one time in eight of any type instead."""
    return st.integers(0, 7).flatmap(lambda n: values if n == 0 else right)


@st.composite
def contents(draw: st.DrawFn) -> Any:
    """A message's content: text, a list of parts (text and others), or a value of any type."""
    kind = draw(st.sampled_from(["text", "text", "parts", "any"]))
    if kind == "text":
        return draw(texts)
    if kind == "parts":
        part = st.fixed_dictionaries(
            {"type": st.sampled_from(["text", "image_url"]) | texts, "text": texts | values}
        )
        return draw(st.lists(part | values, max_size=4))
    return draw(values)


@st.composite
def messages(draw: st.DrawFn) -> Any:
    """A list of chat messages ending most often with the user's, sometimes not a list."""
    role = field(st.sampled_from(["system", "developer", "user", "assistant", "tool"]))
    message = st.fixed_dictionaries(
        {"role": role, "content": contents()}, optional={"name": texts, "tool_call_id": values}
    )
    asked = st.fixed_dictionaries(
        {"role": st.just("user"), "content": st.sampled_from(SENTENCES) | contents()}
    )
    return draw(field(st.tuples(st.lists(field(message), max_size=4), asked).map(_joined)))


def _joined(parts: tuple[list[Any], Any]) -> list[Any]:
    return [*parts[0], parts[1]]


@st.composite
def bodies(draw: st.DrawFn) -> Any:
    """A chat-completion body as Python data: the fields OpenAI's API defines, each drawn
    right most of the time and of any type otherwise, one time in twenty not an object."""
    body = st.fixed_dictionaries(
        {"model": field(texts), "messages": messages()},
        optional={
            "temperature": field(numbers),
            "top_p": field(numbers),
            "max_tokens": field(st.integers(-10, 10**6)),
            "stream": field(st.booleans()),
            "stop": field(st.lists(texts, max_size=3)),
            "user": field(st.sampled_from([USER, "bob", "a/b", ""])),
            "tools": values,
            "response_format": values,
            "metadata": st.dictionaries(texts, values, max_size=3),
        },
    )
    return draw(st.integers(0, 19).flatmap(lambda n: values if n == 0 else body))


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _with_field(body: dict[str, Any], name: str, value: str) -> str:
    """``body`` as JSON text with field ``name`` (written first) holding the JSON text
    ``value`` verbatim."""
    rest = json.dumps({k: v for k, v in body.items() if k != name})
    head = "{" + json.dumps(name) + ": " + value
    return head + ("}" if rest == "{}" else ", " + rest[1:])


#: bytes that are not UTF-8: an invalid byte, an encoded surrogate, an overlong slash, a
#: sequence cut short, a byte order mark of another encoding
BAD_BYTES = [b"\xff", b"\xed\xa0\x80", b"\xc0\xaf", b"\xe6\x88", b"\xfe\xff"]
#: lone surrogates as JSON writes them: high, low, the last high
LONE = ["\\ud800", "\\udc80", "\\udbff"]
#: numbers JSON has not, as Python's reader takes them, and numbers out of any range
NOT_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e999", "-1e999", "9" * 5000]
#: how a body is spoiled (Hypothesis draws the first ones more often than the rest)
MUTATIONS = ["none", "surrogate", "non-finite", "deep", "huge", "bad bytes", "cut"]
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@st.composite
def requests(draw: st.DrawFn) -> tuple[str, bytes]:
    """A request's mutation (its label, for the figures) and its body's bytes."""
    body = draw(bodies())
    text = json.dumps(body)  # ASCII: every character past it as an escape
    mutation = draw(st.sampled_from(MUTATIONS))
    if mutation in ("non-finite", "deep") and not isinstance(body, dict):
        mutation = "none"
    if mutation == "surrogate":
        spots = [m.start() + 1 for m in _JSON_STRING.finditer(text)]
        if not spots:
            return "none", text.encode()
        at = draw(st.sampled_from(spots))
        return mutation, (text[:at] + draw(st.sampled_from(LONE)) + text[at:]).encode()
    if mutation == "non-finite":
        name = draw(st.sampled_from(["temperature", "top_p", "max_tokens", "model", "stop"]))
        return mutation, _with_field(body, name, draw(st.sampled_from(NOT_NUMBERS))).encode()
    if mutation == "deep":
        depth = draw(st.sampled_from([33, 200, 1_000, 5_000, 30_000]))
        name = draw(st.sampled_from(["stop", "tools", "messages", "model", "temperature"]))
        return mutation, _with_field(body, name, _nested(depth)).encode()
    if mutation == "huge":  # a message whose body is within a few bytes of the limit
        target = draw(st.integers(LIMIT - 400, LIMIT + 400))
        unit = draw(st.sampled_from(["a", "靠", "\\ud800", " ", "\\n"]))
        frame = '{"model": "m1", "messages": [{"role": "user", "content": "%s"}]}'
        room = target - len((frame % "").encode())
        return mutation, (frame % (unit * (room // len(unit.encode())))).encode()
    raw = text.encode()
    if mutation == "bad bytes":
        spots = [i + 1 for i, c in enumerate(raw) if c == ord('"')] or [0]
        at = draw(st.sampled_from(spots))
        return mutation, raw[:at] + draw(st.sampled_from(BAD_BYTES)) + raw[at:]
    if mutation == "cut":
        return mutation, raw[: draw(st.integers(0, max(len(raw) - 1, 0)))]
    return mutation, raw


#: the headers naming the memory user and thread: absent most often, else right or not (a
#: user outside the key's tenant, a scope part with a slash, too long, bytes not UTF-8)
header_sets = st.fixed_dictionaries(
    {},
    optional={
        b"x-memstrata-user": st.sampled_from([USER.encode(), b"bob", b"a/b", b"", b"\xff"]),
        b"x-memstrata-thread": st.sampled_from(
            [b"t1", b"a/b", b" ", b"x" * 200, "ü".encode(), b"\xed\xa0\x80"]
        ),
    },
)


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[Memory, ScriptedUpstream, TestClient, Any]]:
    settings_ = load_settings(data_dir=tmp_path / "mem", load_sample=False)
    with Memory.open(settings=settings_, embedder=HashingEmbedder(dim=64)) as memory:
        memory.remember(["I live in Hangzhou", "我喜欢喝龙井茶"], USER, session_id="s1")
        upstream = ScriptedUpstream()
        with proxy_client(memory, upstream, users=[USER], max_request_bytes=LIMIT, budget=200) as (
            client,
            app,
        ):
            yield memory, upstream, client, app


def _check(raw: bytes, response: Any) -> None:
    where = f"{raw[:300]!r} ({len(raw)} bytes)"
    assert response.status_code < 500, f"{where} -> {response.status_code} {response.text:.500}"
    if response.status_code >= 400:
        body = json.loads(response.content)
        assert isinstance(body, dict), where
        assert set(body) <= {"error", "message", "details"}, (where, body)
        assert isinstance(body.get("error"), str) and isinstance(body.get("message"), str), (
            where,
            body,
        )
        assert "Traceback" not in response.text, where


def _asked(raw: bytes) -> str:
    """The user's message of a request the proxy answered (what it stores)."""
    return last_user_text(json.loads(raw)["messages"])


def test_no_request_gets_a_5xx_and_a_refused_one_goes_nowhere(
    proxied: tuple[Memory, ScriptedUpstream, TestClient, Any],
) -> None:
    memory, upstream, client, app = proxied
    outcomes: dict[int, int] = {}
    mutations: dict[str, int] = {}
    answered: list[bytes] = []

    @given(request=requests(), headers=header_sets)
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    def fuzz(request: tuple[str, bytes], headers: dict[bytes, bytes]) -> None:
        mutation, raw = request
        before = len(upstream.raw)
        response = client.post(
            "/v1/chat/completions",
            content=raw,
            headers={b"content-type": b"application/json", **headers},
        )
        _check(raw + f" {headers}".encode(), response)
        outcomes[response.status_code] = outcomes.get(response.status_code, 0) + 1
        mutations[mutation] = mutations.get(mutation, 0) + 1
        if response.status_code < 300:
            answered.append(raw)
            assert len(upstream.raw) == before + 1, "an answer came without the upstream"
            _strict(upstream.raw[-1])
        else:
            assert len(upstream.raw) == before, f"{raw[:300]!r} was refused yet sent upstream"

    fuzz()
    app.state.captures.drain(60)
    stored = captured(memory, USER)
    questions = [q for q in map(_asked, answered) if q.strip()]  # (as stored: scrubbed)
    assert len([role for role, _, _ in stored if role == "user"]) == len(questions)
    assert {speaker for role, speaker, _ in stored if role == "user"} <= {USER}
    assert [text for role, _, text in stored if role == "assistant"] == ["Noted."] * len(answered)
    assert {speaker for role, speaker, _ in stored if role == "assistant"} <= {"assistant"}
    sent = sum(outcomes.values())
    report(
        "proxy_fuzz",
        requests=sent,
        answered_2xx=sum(n for code, n in outcomes.items() if 200 <= code < 300),
        answered_4xx=sum(n for code, n in outcomes.items() if 400 <= code < 500),
        answered_5xx=sum(n for code, n in outcomes.items() if code >= 500),
        sent_upstream=len(upstream.raw),
        turns_stored=len(stored),
        **{f"status_{code}": n for code, n in sorted(outcomes.items())},
        **{f"mutation_{name.replace(' ', '_')}": n for name, n in sorted(mutations.items())},
    )
