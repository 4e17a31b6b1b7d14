"""A generic JSONL of turns: one JSON object per line.

Fields: ``text`` (required); optional ``speaker``, ``role`` (user, assistant, system, tool,
other), ``time`` (ISO 8601), ``session_id``, ``thread`` (turns with the same thread form one
conversation; default ``"default"``) and ``metadata`` (an object). Blank lines are skipped;
unknown fields are an error so that typos do not pass silently.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from memstrata.codec import parse_time
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.importers.base import Conversation, ImportBatch, read_text
from memstrata.model import Role, Turn

_FIELDS: Final = {"text", "speaker", "role", "time", "session_id", "thread", "metadata"}


def parse_jsonl_line(line: str, *, source: str, number: int) -> tuple[str, Turn]:
    """Parse one line into ``(thread, turn)``."""
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"invalid JSON: {exc.msg}", source=source, line=number) from exc
    if not isinstance(raw, dict):
        raise ImportFormatError("each line must be a JSON object", source=source, line=number)
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise ImportFormatError(
            f"unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_FIELDS))}",
            source=source,
            line=number,
        )
    try:
        for key in ("text", "speaker", "session_id", "thread", "role", "time"):
            if raw.get(key) is not None and not isinstance(raw[key], str):
                raise InvalidInputError(f"field {key!r} must be a string")
        if "metadata" in raw and not isinstance(raw["metadata"], dict):
            raise InvalidInputError("field 'metadata' must be an object")
        if "text" not in raw:
            raise InvalidInputError("missing field 'text'")
        role = raw.get("role") or "user"
        if role not in Role.__members__.values():
            raise InvalidInputError(f"unknown role {role!r}")
        turn = Turn(
            text=raw["text"],
            speaker=raw.get("speaker"),
            role=Role(role),
            time=parse_time(raw["time"]) if raw.get("time") else None,
            session_id=raw.get("session_id"),
            metadata=raw.get("metadata") or {},
        )
    except InvalidInputError as exc:
        raise ImportFormatError(str(exc), source=source, line=number) from exc
    return raw.get("thread") or "default", turn


def load_jsonl(path: Path) -> ImportBatch:
    source = str(path)
    threads: dict[str, list[Turn]] = {}
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if not line.strip():
            continue
        thread, turn = parse_jsonl_line(line, source=source, number=number)
        threads.setdefault(thread, []).append(turn)
    conversations = tuple(Conversation(key=k, turns=tuple(v)) for k, v in threads.items())
    return ImportBatch(source=source, format="jsonl", conversations=conversations)
