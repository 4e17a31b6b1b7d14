"""What importers produce, and the file reading they share."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memstrata import textio
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.model import JsonValue, Turn


@dataclass(frozen=True, slots=True)
class Question:
    """A benchmark question and the ids of the evidence it rests on, as the file gives them."""

    question: str
    answer: str
    evidence: tuple[str, ...]
    category: str
    metadata: dict[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Conversation:
    """One conversation: its key (a thread name), its turns in order, its questions."""

    key: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...] = ()
    metadata: dict[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ImportBatch:
    """Everything parsed from one file."""

    source: str
    format: str
    conversations: tuple[Conversation, ...]

    @property
    def turn_count(self) -> int:
        return sum(len(c.turns) for c in self.conversations)

    @property
    def question_count(self) -> int:
        return sum(len(c.questions) for c in self.conversations)


def read_text(path: Path) -> str:
    """Read a whole UTF-8 file, turning every failure into an :class:`ImportFormatError`."""
    try:
        return textio.read_text(path)
    except InvalidInputError as exc:
        raise ImportFormatError(str(exc)) from exc


def read_json(path: Path) -> Any:
    """Read a whole JSON file, turning every failure into an :class:`ImportFormatError`."""
    text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(
            f"invalid JSON: {exc.msg}", source=str(path), line=exc.lineno
        ) from exc


def require(obj: Any, key: str, kind: type | tuple[type, ...], *, source: str, where: str) -> Any:
    """``obj[key]``, checked to be of ``kind``; a clear error naming the place otherwise."""
    if not isinstance(obj, dict):
        raise ImportFormatError(
            f"expected an object, got {type(obj).__name__}", source=source, where=where
        )
    if key not in obj:
        raise ImportFormatError(f"missing field {key!r}", source=source, where=where)
    value = obj[key]
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise ImportFormatError(
            f"field {key!r} should be {names}, got {type(value).__name__}",
            source=source,
            where=where,
        )
    return value
