"""The proxy refuses what the main API refuses, before anything is stored or sent upstream:
text that is not valid Unicode (a lone surrogate, which JSON can spell and UTF-8 cannot
encode), non-finite numbers (JSON has none; Python's reader takes ``NaN`` and ``Infinity``),
nesting past the bound, bytes that are not UTF-8, a query string that does not decode. Each
is 422 in the one error shape, never a 500."""

from __future__ import annotations

import json

import pytest

from memstrata.api import Memory
from memstrata.server.schemas import MAX_DEPTH
from tests.proxied import ScriptedUpstream, captured, proxy_client

#: the memory fixture with the hashing embedder and no sample (tests/conftest.py)
pytestmark = pytest.mark.light_memory

LONE = "\\ud800"  # a lone surrogate as JSON writes it
USER = "alice"


def chat_body(content: str = '"I prefer aisle seats."', **fields: str) -> bytes:
    """A chat-completion body as JSON text, ``content`` and each field's value spliced in
    verbatim (so that they may hold what a JSON encoder would never write)."""
    extra = "".join(f', "{name}": {value}' for name, value in fields.items())
    text = (
        '{"model": "m1", "messages": [{"role": "system", "content": "Be brief."}, '
        f'{{"role": "user", "content": {content}}}]{extra}}}'
    )
    return text.encode("utf-8")


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


REFUSED = {
    "a lone surrogate in a message": (chat_body(f'"aisle {LONE} seats"'), "messages.1.content"),
    "a lone surrogate in a text part": (
        chat_body(f'[{{"type": "text", "text": "{LONE}"}}]'),
        "messages.1.content.0.text",
    ),
    "a lone surrogate in the model": (
        b'{"model": "m' + LONE.encode() + b'", "messages": [{"role": "user", "content": "hi"}]}',
        "model",
    ),
    "a lone surrogate in a key": (chat_body(**{f"x{LONE}": "1"}), "a key of the body"),
    "a low surrogate alone": (chat_body('"\\udc80"'), "messages.1.content"),
    "NaN temperature": (chat_body(temperature="NaN"), "temperature must be a finite number"),
    "infinite max_tokens": (chat_body(max_tokens="Infinity"), "max_tokens must be a finite"),
    "negative infinity": (chat_body(top_p="-Infinity"), "top_p must be a finite number"),
    "5,000 arrays deep": (chat_body(stop=nested(5000)), f"deeper than {MAX_DEPTH} levels"),
    "deeper than the bound": (chat_body(stop=nested(MAX_DEPTH + 1)), f"deeper than {MAX_DEPTH}"),
    "bytes that are not UTF-8": (chat_body('"aisle \xff seats"').replace(b"\xc3\xbf", b"\xff"), ""),
    "an encoded surrogate": (chat_body('"aisle seats"').replace(b"aisle", b"\xed\xa0\x80"), ""),
}


@pytest.mark.parametrize(("body", "says"), REFUSED.values(), ids=REFUSED.keys())
def test_a_body_the_api_refuses_is_422_in_the_one_shape_and_goes_nowhere(
    memory: Memory, body: bytes, says: str
) -> None:
    upstream = ScriptedUpstream()
    with proxy_client(memory, upstream, users=[USER]) as (client, app):
        answer = client.post(
            "/v1/chat/completions", content=body, headers={"content-type": "application/json"}
        )
        app.state.captures.drain(30)
    assert answer.status_code == 422, answer.text
    error = json.loads(answer.content)
    assert set(error) <= {"error", "message", "details"}, error
    assert error["error"] == "InvalidInputError" and isinstance(error["message"], str)
    assert says in error["message"]
    assert "Traceback" not in answer.text
    assert upstream.requests == []  # nothing was sent upstream
    assert captured(memory, USER) == []  # nothing was stored
    assert memory.stats(USER).episodes == 0


def test_the_refusal_reads_as_the_main_apis_does(memory: Memory) -> None:
    """The same validator, so the same words and details for the same fault."""
    from tests.keyed import keyed_client

    with keyed_client(memory, raise_server_exceptions=False) as api:
        main = api.post(
            "/v1/remember",
            content=f'{{"scope": {{"user": "a"}}, "turns": [{{"text": "{LONE}"}}]}}',
            headers={"content-type": "application/json"},
        ).json()
    with proxy_client(memory, ScriptedUpstream(), users=[USER]) as (client, _):
        proxied = client.post(
            "/v1/chat/completions",
            content=chat_body(f'"{LONE}"'),
            headers={"content-type": "application/json"},
        ).json()
    assert main["details"][0]["type"] == proxied["details"][0]["type"] == "value_error"
    assert main["message"].replace("turns.0.text", "messages.1.content") == proxied["message"]


def test_a_body_within_the_bounds_goes_through_and_is_captured(memory: Memory) -> None:
    upstream = ScriptedUpstream()
    fine = chat_body(temperature="0.5", max_tokens="1e3", stop=nested(MAX_DEPTH - 1))
    with proxy_client(memory, upstream, users=[USER]) as (client, app):
        answer = client.post(
            "/v1/chat/completions", content=fine, headers={"content-type": "application/json"}
        )
        app.state.captures.drain(30)
    assert answer.status_code == 200, answer.text
    assert len(upstream.requests) == 1
    assert upstream.requests[0]["temperature"] == 0.5
    assert [text for _, _, text in captured(memory, USER)] == ["I prefer aisle seats.", "Noted."]


@pytest.mark.parametrize("query", ["q=%ED%A0%80", "q=%FF%FE", "%FF=1"])
def test_a_query_string_that_is_not_utf8_is_422_as_on_the_main_api(
    memory: Memory, query: str
) -> None:
    upstream = ScriptedUpstream()
    with proxy_client(memory, upstream, users=[USER]) as (client, app):
        answer = client.post(
            f"/v1/chat/completions?{query}",
            content=chat_body(),
            headers={"content-type": "application/json"},
        )
        models = client.get(f"/v1/models?{query}")
        app.state.captures.drain(30)
    for refused in (answer, models):
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"] == "InvalidInputError"
    assert upstream.requests == []
    assert captured(memory, USER) == []
