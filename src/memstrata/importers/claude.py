"""Claude export (claude.ai): ``conversations.json``.

The file is a list of conversations: ``uuid``, ``name``, ``created_at`` and ``chat_messages``,
each message with ``uuid``, ``sender`` (``human`` or ``assistant``), ``created_at`` (ISO 8601)
and its words as ``content`` blocks (``{"type": "text", "text": ...}``) or, in older exports,
as ``text``. A message becomes a :class:`Turn` keyed ``claude:<conversation uuid>:<message
uuid>``. Text blocks are joined; tool calls, tool results and thinking blocks are not what was
said and are skipped; attached files are named (``[attached file: notes.pdf]``), not inlined.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from memstrata.errors import ImportFormatError
from memstrata.importers.base import (
    IMPORT_KEY,
    Conversation,
    ImportBatch,
    Skipped,
    iso_time,
    read_json,
    require,
    thread_key,
)
from memstrata.model import JsonValue, Role, Turn

_SENDERS: Final = {"human": Role.USER, "assistant": Role.ASSISTANT}
_NOT_SAID: Final = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})


def _text(message: dict[str, Any], *, source: str, where: str) -> tuple[str, list[str]]:
    """The message's text, and the kinds of blocks left out."""
    content = message.get("content")
    left_out: list[str] = []
    if isinstance(content, list) and content:
        pieces = []
        for b, block in enumerate(content):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                raise ImportFormatError(
                    f"content block {b} has no type", source=source, where=where
                )
            if block["type"] == "text":
                if not isinstance(block.get("text"), str):
                    raise ImportFormatError(
                        f"text block {b} has no text", source=source, where=where
                    )
                pieces.append(block["text"])
            elif block["type"] in _NOT_SAID:
                left_out.append(block["type"])
            else:
                pieces.append(f"[{block['type']}]")
        text = "\n\n".join(p for p in pieces if p.strip())
    elif content is None or isinstance(content, list):
        raw = message.get("text", "")
        if not isinstance(raw, str):
            raise ImportFormatError("field 'text' should be text", source=source, where=where)
        text = raw
    else:
        raise ImportFormatError("field 'content' should be a list", source=source, where=where)
    names = []
    for field in ("attachments", "files"):
        for item in message.get(field) or []:
            if isinstance(item, dict) and isinstance(item.get("file_name"), str):
                names.append(item["file_name"])
    if names:
        files = "\n".join(f"[attached file: {n}]" for n in dict.fromkeys(names))
        text = f"{text}\n{files}" if text.strip() else files
    return text, left_out


def _conversation(raw: Any, index: int, source: str, skipped: list[Skipped]) -> Conversation | None:
    where = f"conversation {index}"
    conv_id = require(raw, "uuid", str, source=source, where=where)
    where = f"conversation {conv_id}"
    key = thread_key(conv_id, source=source, where=where)
    title = raw.get("name") if isinstance(raw.get("name"), str) else ""
    started = iso_time(raw.get("created_at"), source=source, where=where)
    messages = require(raw, "chat_messages", list, source=source, where=where)
    turns: list[Turn] = []
    for m, message in enumerate(messages):
        mwhere = f"{where} message {m}"
        message_id = require(message, "uuid", str, source=source, where=mwhere)
        mwhere = f"{where} message {message_id}"
        sender = require(message, "sender", str, source=source, where=mwhere)
        if sender not in _SENDERS:
            raise ImportFormatError(
                f"unknown sender {sender!r}; expected human or assistant",
                source=source,
                where=mwhere,
            )
        text, left_out = _text(message, source=source, where=mwhere)
        for kind in left_out:
            skipped.append(Skipped(mwhere, f"non-text block ({kind})"))
        if not text.strip():
            skipped.append(Skipped(mwhere, "empty message"))
            continue
        metadata: dict[str, JsonValue] = {
            IMPORT_KEY: f"claude:{conv_id}:{message_id}",
            "message_id": message_id,
            "title": title,
        }
        turns.append(
            Turn(
                text=text,
                speaker=sender,
                role=_SENDERS[sender],
                time=iso_time(message.get("created_at"), source=source, where=mwhere) or started,
                session_id=key,
                metadata=metadata,
            )
        )
    if not turns:
        skipped.append(Skipped(where, "no messages" if not messages else "no text messages"))
        return None
    return Conversation(key=key, turns=tuple(turns), metadata={"title": title})


def load_claude(path: Path) -> ImportBatch:
    source = str(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise ImportFormatError(
            "expected a list of conversations (Claude's conversations.json)", source=source
        )
    skipped: list[Skipped] = []
    conversations = [c for i, r in enumerate(data) if (c := _conversation(r, i, source, skipped))]
    return ImportBatch(
        source=source,
        format="claude",
        conversations=tuple(conversations),
        skipped=tuple(skipped),
        keyed=True,
    )
