"""What importers produce, and the file reading they share."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from memstrata import textio
from memstrata.codec import parse_time
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.model import Category, JsonValue, Scope, Turn

#: the turn metadata field holding a turn's stable source identity (see :func:`stable_id`)
IMPORT_KEY: Final = "import_key"
_TO_CROCKFORD: Final = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
)


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
class ImportedFact:
    """A fact another memory system kept, with the record it came from.

    ``key`` is its stable source identity; ``record`` the original record, kept verbatim in the
    import episode the fact cites; ``category_from`` the source's own category when it had to
    be mapped to the closest memstrata one.
    """

    key: str
    text: str
    category: Category
    confidence: float
    time: datetime | None
    record: dict[str, JsonValue]
    category_from: str | None = None
    topic: str | None = None
    lineage: str | None = None


@dataclass(frozen=True, slots=True)
class ImportedNote:
    """A bullet of a curated document another system kept: ``section`` of document ``doc``.

    ``key`` names this version of the bullet, ``bullet`` the bullet across versions (a new
    text for the same ``bullet`` edits it; empty: the ``key``). ``cites`` are the sources the
    original named (``surface:id``); ``record`` is what the import episode holding the bullet
    keeps.
    """

    key: str
    doc: str
    title: str
    section: str
    text: str
    time: datetime | None
    record: dict[str, JsonValue]
    cites: tuple[str, ...] = ()
    bullet: str = ""


@dataclass(frozen=True, slots=True)
class MarkdownSource:
    """A curated document in memstrata's markdown form, read but not yet parsed (the parser
    lives with the documents; the facade parses it before anything is stored)."""

    doc: str
    text: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """Something in the file that is not imported, where it is and why."""

    where: str
    reason: str


@dataclass(frozen=True, slots=True)
class ImportBatch:
    """Everything parsed from one file.

    ``keyed`` batches give every turn, fact and note a stable source identity
    (:data:`IMPORT_KEY`), so importing the same file again adds nothing and a re-export adds
    only what is new.
    """

    source: str
    format: str
    conversations: tuple[Conversation, ...]
    facts: tuple[ImportedFact, ...] = ()
    notes: tuple[ImportedNote, ...] = ()
    markdown: tuple[MarkdownSource, ...] = ()
    skipped: tuple[Skipped, ...] = ()
    keyed: bool = False

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
    return parse_json(read_text(path), source=str(path))


def parse_json(text: str, *, source: str) -> Any:
    """``text`` as JSON; malformed or nested too deeply to read is an
    :class:`ImportFormatError` naming ``source`` (and the line)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFormatError(f"invalid JSON: {exc.msg}", source=source, line=exc.lineno) from exc
    except RecursionError:
        raise ImportFormatError("JSON nested too deeply to read", source=source) from None


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


def stable_id(prefix: str, key: str, when: datetime | None = None) -> str:
    """A deterministic id ``<prefix>_<ULID>`` for a source identity: the ULID's time is
    ``when`` (so ids still sort by time) and its 80 random bits are a SHA-256 of ``key``."""
    ms = 0 if when is None else max(0, int(when.timestamp() * 1000)) & ((1 << 48) - 1)
    rnd = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:10], "big")
    # 130 bits, shifted to fill 17 bytes: the first 26 base32 characters are the ULID
    packed = base64.b32encode(((ms << 80 | rnd) << 6).to_bytes(17, "big"))[:26]
    return f"{prefix}_{packed.decode('ascii').translate(_TO_CROCKFORD)}"


def digest(text: str) -> str:
    """A short content hash, for source identities of records that have no id."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def epoch_time(value: Any, *, source: str, where: str) -> datetime | None:
    """A UNIX time in seconds (int or float) as a UTC datetime; None for null."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ImportFormatError(
            f"time {value!r} should be seconds since 1970", source=source, where=where
        )
    try:
        return datetime.fromtimestamp(float(value), tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise ImportFormatError(
            f"time {value!r} is out of range", source=source, where=where
        ) from None


def iso_time(value: Any, *, source: str, where: str) -> datetime | None:
    """An ISO 8601 time as a UTC datetime (no zone: UTC); None for null or empty."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ImportFormatError(f"time {value!r} is not ISO 8601 text", source=source, where=where)
    try:
        return parse_time(value)
    except InvalidInputError:
        raise ImportFormatError(
            f"time {value!r} is not ISO 8601", source=source, where=where
        ) from None


def thread_key(value: str, *, source: str, where: str) -> str:
    """``value`` checked to be usable as a thread name (the conversation's thread)."""
    try:
        Scope("import", value)
    except InvalidInputError as exc:
        raise ImportFormatError(str(exc), source=source, where=where) from None
    return value
