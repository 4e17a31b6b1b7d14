"""The conversation files of ``memstrata bench handed``: their format, read and checked.

The format is written out in ``docs/benchmarks.md`` ("What every session is handed"): one JSON
file per conversation, with its sessions of turns, what is expected of the memory at its
``now`` (current, stale, safety, trivia, events, slots) and questions. The shipped sets are
``handed/dev`` and ``handed/heldout`` beside this module. A malformed file is refused with an
:class:`ImportFormatError` naming the file and the place in it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final, NoReturn

from memstrata.bench.handed_lines import Alternatives, valid_expected_date
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.importers.base import read_json
from memstrata.model import Role, Turn

SETS_DIR: Final = Path(__file__).with_name("handed")
SETS: Final = ("dev", "heldout")
KINDS: Final = ("current", "safety", "event", "stale-check")
LANGUAGES: Final = ("en", "zh", "mixed")
CATEGORIES: Final = ("current", "stale", "safety", "trivia", "events", "slots")


@dataclass(frozen=True, slots=True)
class Item:
    """An expected item: found when one served line holds every term of one alternative."""

    id: str
    note: str
    any: Alternatives
    date: str | None = None  # events: the expected date (YYYY, YYYY-MM, YYYY-MM-DD, YYYY-Www)


@dataclass(frozen=True, slots=True)
class SlotItem:
    """A profile slot whose value must be served whole: its label and its value terms."""

    id: str
    note: str
    label: Alternatives
    value: Alternatives


@dataclass(frozen=True, slots=True)
class Question:
    q: str
    answer: Alternatives
    stale: Alternatives
    kind: str


@dataclass(frozen=True, slots=True)
class Session:
    date: datetime
    turns: tuple[tuple[Role, str], ...]

    @property
    def end(self) -> datetime:
        """The time of the session's last turn."""
        return self.date + timedelta(minutes=len(self.turns) - 1)


@dataclass(frozen=True, slots=True)
class Expect:
    current: tuple[Item, ...]
    stale: tuple[Item, ...]
    safety: tuple[Item, ...]
    trivia: tuple[Item, ...]
    events: tuple[Item, ...]
    slots: tuple[SlotItem, ...]


@dataclass(frozen=True, slots=True)
class HandedConversation:
    id: str
    language: str
    description: str
    speakers: Mapping[Role, str | None]
    now: datetime
    sessions: tuple[Session, ...]
    expect: Expect
    questions: tuple[Question, ...]
    source: str
    set: str

    def turns(self) -> list[Turn]:
        """Every turn as ``remember`` takes it: the session's date plus a minute per turn."""
        return [
            Turn(
                text,
                speaker=self.speakers[role],
                role=role,
                time=session.date + timedelta(minutes=i),
                session_id=f"s{number}",
            )
            for number, session in enumerate(self.sessions, start=1)
            for i, (role, text) in enumerate(session.turns)
        ]


class _File:
    """One file being read: every refusal names it and the place in it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> NoReturn:
        raise ImportFormatError(message, source=str(self.path), where=where)

    def obj(
        self, value: Any, where: str, required: Sequence[str], optional: Sequence[str] = ()
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, f"expected an object, got {type(value).__name__}")
        missing = [k for k in required if k not in value]
        if missing:
            self.fail(where, "missing key " + ", ".join(repr(k) for k in missing))
        unknown = sorted(set(value) - set(required) - set(optional))
        if unknown:
            known = ", ".join(repr(k) for k in (*required, *optional))
            self.fail(where, f"unknown key {unknown[0]!r} (the keys are {known})")
        return value

    def list(self, value: Any, where: str, *, empty: bool = True) -> list[Any]:
        if not isinstance(value, list):
            self.fail(where, f"expected a list, got {type(value).__name__}")
        if not value and not empty:
            self.fail(where, "is empty")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self.fail(where, "expected a non-empty string")
        return value

    def time(self, value: Any, where: str) -> datetime:
        text = self.text(value, where)
        try:
            when = datetime.fromisoformat(text)
        except ValueError:
            self.fail(where, f"{text!r} is not an ISO 8601 time (e.g. 2026-02-03T20:15:00Z)")
        if when.tzinfo is None:
            self.fail(where, f"{text!r} has no time zone (end it with Z)")
        return when.astimezone(UTC)

    def alternatives(self, value: Any, where: str) -> Alternatives:
        if not isinstance(value, list) or not value:
            self.fail(where, "has no alternatives (a list of lists of terms)")
        out = []
        for i, alt in enumerate(value):
            if not isinstance(alt, list) or not alt:
                self.fail(f"{where}[{i}]", "an alternative is a non-empty list of terms")
            out.append(tuple(self.text(term, f"{where}[{i}]") for term in alt))
        return tuple(out)


_ID_RE: Final = re.compile(r"^[a-z0-9][a-z0-9-]*$")


def _expected_date(f: _File, value: Any, where: str) -> str:
    text = f.text(value, where)
    if not valid_expected_date(text):
        f.fail(where, f"{text!r} is not a date: YYYY, YYYY-MM, YYYY-MM-DD or YYYY-Www")
    return text


def _items(f: _File, raw: Any, where: str, seen: dict[str, str]) -> tuple[Item, ...]:
    event = where.endswith("events")
    out = []
    for i, value in enumerate(f.list(raw, where)):
        at = f"{where}[{i}]"
        obj = f.obj(value, at, ("id", "note", "any", "date") if event else ("id", "note", "any"))
        item_id = _item_id(f, obj["id"], at, seen)
        out.append(
            Item(
                item_id,
                f.text(obj["note"], f"{at}.note"),
                f.alternatives(obj["any"], f"{at}.any"),
                _expected_date(f, obj["date"], f"{at}.date") if event else None,
            )
        )
    return tuple(out)


def _item_id(f: _File, value: Any, where: str, seen: dict[str, str]) -> str:
    item_id = f.text(value, f"{where}.id")
    if item_id in seen:
        f.fail(f"{where}.id", f"duplicate item id {item_id!r} (also {seen[item_id]})")
    seen[item_id] = where
    return item_id


def _slots(f: _File, raw: Any, seen: dict[str, str]) -> tuple[SlotItem, ...]:
    out = []
    for i, value in enumerate(f.list(raw, "expect.slots")):
        at = f"expect.slots[{i}]"
        obj = f.obj(value, at, ("id", "note", "label", "value"))
        out.append(
            SlotItem(
                _item_id(f, obj["id"], at, seen),
                f.text(obj["note"], f"{at}.note"),
                f.alternatives(obj["label"], f"{at}.label"),
                f.alternatives(obj["value"], f"{at}.value"),
            )
        )
    return tuple(out)


def _sessions(f: _File, raw: Any) -> tuple[Session, ...]:
    out: list[Session] = []
    for i, value in enumerate(f.list(raw, "sessions", empty=False)):
        at = f"sessions[{i}]"
        obj = f.obj(value, at, ("date", "turns"))
        when = f.time(obj["date"], f"{at}.date")
        turns = []
        for j, turn in enumerate(f.list(obj["turns"], f"{at}.turns", empty=False)):
            t = f.obj(turn, f"{at}.turns[{j}]", ("role", "text"))
            if t["role"] not in ("user", "assistant"):
                f.fail(f"{at}.turns[{j}].role", f"{t['role']!r} is not 'user' or 'assistant'")
            turns.append((Role(t["role"]), f.text(t["text"], f"{at}.turns[{j}].text")))
        if not any(role is Role.USER for role, _ in turns):
            f.fail(at, "the session has no user turn")
        session = Session(when, tuple(turns))
        if out and session.date <= out[-1].end:
            f.fail(
                f"{at}.date",
                f"dates not in order: {obj['date']} is not after the last turn of the session "
                f"before ({out[-1].end.isoformat()})",
            )
        out.append(session)
    return tuple(out)


def _questions(f: _File, raw: Any) -> tuple[Question, ...]:
    out = []
    for i, value in enumerate(f.list(raw, "questions", empty=False)):
        at = f"questions[{i}]"
        obj = f.obj(value, at, ("q", "answer", "kind"), ("stale",))
        if obj["kind"] not in KINDS:
            f.fail(f"{at}.kind", f"{obj['kind']!r} is not one of {', '.join(KINDS)}")
        stale = f.alternatives(obj["stale"], f"{at}.stale") if "stale" in obj else ()
        out.append(
            Question(
                f.text(obj["q"], f"{at}.q"),
                f.alternatives(obj["answer"], f"{at}.answer"),
                stale,
                obj["kind"],
            )
        )
    return tuple(out)


#: the largest conversation file read (a file of months of sessions is well under 1 MB)
MAX_FILE_BYTES: Final = 20_000_000


def load_conversation(path: Path, set_name: str = "") -> HandedConversation:
    """Read and check one conversation file; a malformed one is refused, saying where."""
    f = _File(path)
    try:
        too_large = path.stat().st_size > MAX_FILE_BYTES
    except OSError as exc:
        f.fail("", f"cannot be read: {exc.strerror}")
    if too_large:
        f.fail("", f"larger than {MAX_FILE_BYTES // 1_000_000} MB: no conversation file is")
    raw = read_json(path)  # not UTF-8, not JSON, nested too deeply: refused saying where
    keys = ("id", "language", "description", "speakers", "now", "sessions", "expect")
    top = f.obj(raw, "top level", (*keys, "questions"))
    conv_id = f.text(top["id"], "id")
    if not _ID_RE.match(conv_id):
        f.fail("id", f"{conv_id!r} is not lowercase letters, digits and dashes")
    if top["language"] not in LANGUAGES:
        f.fail("language", f"{top['language']!r} is not one of {', '.join(LANGUAGES)}")
    speakers = f.obj(top["speakers"], "speakers", ("user", "assistant"))
    named: dict[Role, str | None] = {}
    for role in (Role.USER, Role.ASSISTANT):
        name = speakers[role.value]
        named[role] = None if name is None else f.text(name, f"speakers.{role.value}")
    now = f.time(top["now"], "now")
    sessions = _sessions(f, top["sessions"])
    if now <= sessions[-1].end:
        f.fail(
            "now",
            f"dates not in order: {top['now']} is not after the last turn "
            f"({sessions[-1].end.isoformat()})",
        )
    expect_raw = f.obj(top["expect"], "expect", CATEGORIES)
    seen: dict[str, str] = {}
    lists = {
        name: _items(f, expect_raw[name], f"expect.{name}", seen)
        for name in CATEGORIES
        if name != "slots"
    }
    expect = Expect(**lists, slots=_slots(f, expect_raw["slots"], seen))
    return HandedConversation(
        conv_id,
        top["language"],
        f.text(top["description"], "description"),
        named,
        now,
        sessions,
        expect,
        _questions(f, top["questions"]),
        str(path),
        set_name,
    )


def load_paths(paths: Iterable[Path], set_name: str = "") -> list[HandedConversation]:
    """Conversation files (a directory: its ``*.json``, by name), ids unique across them."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.glob("*.json")))
        elif path.is_file():
            files.append(path)
        else:
            raise InvalidInputError(f"{path}: no such file or directory")
    out: list[HandedConversation] = []
    where: dict[str, str] = {}
    for file in files:
        conv = load_conversation(file, set_name)
        if conv.id in where:
            raise ImportFormatError(
                f"conversation id {conv.id!r} is also the id of {where[conv.id]}",
                source=str(file),
                where="id",
            )
        where[conv.id] = str(file)
        out.append(conv)
    return out


def load_sets(which: str = "all", root: Path = SETS_DIR) -> list[HandedConversation]:
    """The shipped conversations of ``dev``, ``heldout`` or ``all`` the sets that exist."""
    if which not in (*SETS, "all"):
        raise InvalidInputError(f"unknown set {which!r}; expected dev, heldout or all")
    names = SETS if which == "all" else (which,)
    present = [n for n in names if any((root / n).glob("*.json"))]
    if not present:
        raise InvalidInputError(f"no conversation files in {root / names[0]}")
    out: list[HandedConversation] = []
    seen: dict[str, str] = {}
    for name in present:
        for conv in load_paths([root / name], name):
            if conv.id in seen:
                raise ImportFormatError(
                    f"conversation id {conv.id!r} is also the id of {seen[conv.id]}",
                    source=conv.source,
                    where="id",
                )
            seen[conv.id] = conv.source
            out.append(conv)
    return out
