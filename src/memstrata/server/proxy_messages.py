"""The chat-completion messages the memory proxy reads and rewrites, as pure functions.

* :func:`last_user_text`: the query memory is looked up for (the last user message).
* :func:`with_memory`: the messages with a ``<memory>`` block at the head of the system
  message (a system message prepended when there is none). A block this function put there
  before (a client that sends back what it was given, or a second pass through a proxy) is
  replaced, never stacked.
* :class:`AnswerCollector`: the assistant's answer assembled from the upstream's bytes as they
  pass, either a JSON completion or a stream of server-sent events.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from memstrata.render import MEMORY_CLOSE, MEMORY_OPEN

#: roles whose message carries the instructions (``developer`` is the newer name)
SYSTEM_ROLES: Final = frozenset({"system", "developer"})
#: what separates the memory block from the system message's own text
SEPARATOR: Final = "\n\n"


def content_text(content: object) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "\n".join(
            str(part["text"])
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return ""


def _role(message: Mapping[str, Any]) -> str | None:
    """A message's role, if it is text (a client may send any JSON there)."""
    role = message.get("role")
    return role if isinstance(role, str) else None


def last_user_text(messages: Sequence[object]) -> str:
    """The text of the last message of role ``user`` ('' when there is none)."""
    for message in reversed(messages):
        if isinstance(message, Mapping) and _role(message) == "user":
            return content_text(message.get("content"))
    return ""


def strip_memory(text: str) -> str:
    """``text`` without a memory block at its head that :func:`with_memory` put there."""
    if not text.startswith(MEMORY_OPEN + "\n"):
        return text
    end = text.find("\n" + MEMORY_CLOSE)
    if end < 0:
        return text
    rest = text[end + 1 + len(MEMORY_CLOSE) :]
    return rest.removeprefix(SEPARATOR) if rest.startswith(SEPARATOR) else rest.lstrip("\n")


def _with_block(content: object, block: str) -> object:
    if isinstance(content, str) or content is None:
        rest = strip_memory(content or "")
        return block + SEPARATOR + rest if rest else block
    if isinstance(content, list):
        parts = [
            p
            for p in content
            if not (
                isinstance(p, Mapping)
                and p.get("type") == "text"
                and isinstance(p.get("text"), str)
                and strip_memory(p["text"]) != p["text"]
                and not strip_memory(p["text"]).strip()
            )
        ]
        return [{"type": "text", "text": block}, *parts]
    return content  # a content the API does not define: left as it is


def with_memory(messages: Sequence[Any], block: str) -> list[Any]:
    """``messages`` with ``block`` at the head of the first system message, or of a system
    message put first when there is none; any earlier block of ours is replaced."""
    out = list(messages)
    for i, message in enumerate(out):
        if isinstance(message, Mapping) and _role(message) in SYSTEM_ROLES:
            out[i] = {**message, "content": _with_block(message.get("content"), block)}
            return out
    return [{"role": "system", "content": block}, *out]


class AnswerCollector:
    """The assistant's text, assembled from the upstream's response bytes as they pass.

    The first ``limit`` bytes are kept; past that the answer is marked ``truncated`` and the
    text is what they hold."""

    def __init__(self, *, streaming: bool, limit: int) -> None:
        self.streaming = streaming
        self.limit = limit
        self.truncated = False
        self._chunks: list[bytes] = []
        self._size = 0

    def feed(self, chunk: bytes) -> None:
        if self._size >= self.limit:
            self.truncated = True
            return
        room = self.limit - self._size
        if len(chunk) > room:
            self.truncated = True
        kept = chunk[:room]
        self._chunks.append(kept)
        self._size += len(kept)

    def text(self) -> str:
        raw = b"".join(self._chunks).decode("utf-8", "replace")
        return _stream_text(raw) if self.streaming else _json_text(raw)


def _choice_text(choice: object, field: str) -> str:
    if not isinstance(choice, Mapping):
        return ""
    part = choice.get(field)
    if not isinstance(part, Mapping):
        return ""
    return content_text(part.get("content"))


def _first_choice(payload: object) -> Mapping[str, Any] | None:
    if not isinstance(payload, Mapping):
        return None
    choices = payload.get("choices")
    if not isinstance(choices, list):
        return None
    for choice in choices:
        if isinstance(choice, Mapping) and choice.get("index", 0) == 0:
            return choice
    return None


def _json_text(raw: str) -> str:
    try:
        payload = json.loads(raw)
    except ValueError:
        return ""
    return _choice_text(_first_choice(payload), "message")


def _stream_text(raw: str) -> str:
    """The content deltas of choice 0 in a stream of server-sent events, joined."""
    pieces: list[str] = []
    for line in raw.replace("\r\n", "\n").split("\n"):
        if not line.startswith("data:"):
            continue
        data = line[len("data:") :].strip()
        if not data or data == "[DONE]":
            continue
        try:
            payload = json.loads(data)
        except ValueError:
            continue
        pieces.append(_choice_text(_first_choice(payload), "delta"))
    return "".join(pieces)
