"""The proxy's message handling: the query, the memory block in the system message, the
answer assembled from what the upstream sent."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from memstrata.server.proxy_messages import (
    AnswerCollector,
    last_user_text,
    strip_memory,
    with_memory,
)

BLOCK = "<memory>\nfact: likes tea\n</memory>"


def test_the_query_is_the_last_user_message_text_parts_included() -> None:
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url"}]},
        {"role": "tool", "content": "result"},
    ]
    assert last_user_text(messages) == "a"
    assert last_user_text([{"role": "system", "content": "x"}]) == ""


def test_the_block_heads_the_system_message_or_a_new_one() -> None:
    with_system = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "q"}]
    assert with_memory(with_system, BLOCK)[0]["content"] == BLOCK + "\n\nBe brief."
    assert with_system[0]["content"] == "Be brief."  # the caller's list is not changed
    developer = [{"role": "developer", "content": "Rules."}, {"role": "user", "content": "q"}]
    assert with_memory(developer, BLOCK)[0]["content"] == BLOCK + "\n\nRules."
    bare = [{"role": "user", "content": "q"}]
    assert with_memory(bare, BLOCK) == [{"role": "system", "content": BLOCK}, *bare]
    parts = [{"role": "system", "content": [{"type": "text", "text": "Be brief."}]}]
    assert with_memory(parts, BLOCK)[0]["content"] == [
        {"type": "text", "text": BLOCK},
        {"type": "text", "text": "Be brief."},
    ]


def test_a_block_sent_back_is_replaced_not_stacked() -> None:
    once = with_memory([{"role": "system", "content": "Be brief."}], BLOCK)
    newer = "<memory>\nfact: likes coffee\n</memory>"
    twice = with_memory(once, newer)
    assert twice[0]["content"] == newer + "\n\nBe brief."
    parts = with_memory([{"role": "system", "content": [{"type": "text", "text": "x"}]}], BLOCK)
    assert with_memory(parts, newer)[0]["content"] == [
        {"type": "text", "text": newer},
        {"type": "text", "text": "x"},
    ]
    assert strip_memory("<memory> not ours") == "<memory> not ours"
    assert strip_memory("<memory>\nunclosed") == "<memory>\nunclosed"


@given(st.text(), st.text(min_size=1).map(lambda t: t.replace("\n</memory>", "")))
def test_injecting_is_idempotent_for_any_system_text(system: str, fact: str) -> None:
    block = "<memory>\n" + fact.replace("\n", " ") + "\n</memory>"
    once = with_memory([{"role": "system", "content": system}], block)
    assert with_memory(once, block) == once


def test_the_answer_is_assembled_from_a_stream_or_a_json_body() -> None:
    stream = AnswerCollector(streaming=True, limit=10_000)
    events = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"index": 0, "delta": {"content": "你好，"}}]},
        {"choices": [{"index": 1, "delta": {"content": "other choice"}}]},
        {"choices": [{"index": 0, "delta": {"content": "Alice"}}]},
    ]
    raw = "".join(f"data: {json.dumps(e)}\r\n\r\n" for e in events).encode() + b"data: [DONE]\n\n"
    for i in range(0, len(raw), 7):  # chunks that cut events and characters anywhere
        stream.feed(raw[i : i + 7])
    assert stream.text() == "你好，Alice"
    body = AnswerCollector(streaming=False, limit=10_000)
    body.feed(json.dumps({"choices": [{"index": 0, "message": {"content": "hi"}}]}).encode())
    assert body.text() == "hi"
    broken = AnswerCollector(streaming=False, limit=10_000)
    broken.feed(b"{not json")
    assert broken.text() == ""


def test_an_answer_past_the_limit_is_kept_in_part() -> None:
    collector = AnswerCollector(streaming=True, limit=40)
    collector.feed(b'data: {"choices": [{"delta": {"content": "abc"}}]}\n\n')
    collector.feed(b"more")
    assert collector.truncated
    assert collector.text() == ""  # the one event was cut: nothing whole to keep


def test_a_role_that_is_not_text_is_no_system_message() -> None:
    messages = [{"role": ["system"], "content": "x"}, {"role": {"a": 1}}, {"role": "user"}]
    out = with_memory(messages, BLOCK)
    assert out == [{"role": "system", "content": BLOCK}, *messages]
    assert last_user_text([{"role": ["user"], "content": "x"}]) == ""


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=10,
)
_ROLES = st.sampled_from(["system", "developer", "user", "assistant"]) | _JSON
_MESSAGES = st.lists(
    st.fixed_dictionaries({"role": _ROLES}, optional={"content": _JSON}) | _JSON, max_size=4
)


@given(_MESSAGES)
def test_any_json_messages_are_read_and_rewritten_without_failing(messages: list[object]) -> None:
    """What a client may send: the proxy reads it, injects and relays the rest untouched."""
    question = last_user_text(messages)
    assert isinstance(question, str)
    out = with_memory(messages, BLOCK)
    assert len(out) in (len(messages), len(messages) + 1)
    assert json.loads(json.dumps(out)) == out
