"""The domain model: plain, frozen records with no I/O.

Layers of memory (see DESIGN.md 1): L0 :class:`Identity`, L1 :class:`Profile` and the most
important :class:`Fact` s, L2 :class:`TopicDocument`, L3 every :class:`Fact` and every verbatim
:class:`Episode`. Every record belongs to a :class:`Scope`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Final

from memstrata.errors import InvalidInputError
from memstrata.textio import check_unicode, shown

JsonValue = Any
"""A value that survives ``json.dumps``; metadata values must be of this kind."""

#: what str.strip() removes beside the control characters: no scope part starts or ends with it
_SPACE: Final = r"\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
#: a user, thread or agent: 1-128 characters, no slash, backslash or control character, no
#: space at either end (a pattern in the syntax Python, JSON Schema and Rust regexes share)
SCOPE_PART_PATTERN: Final = (
    rf"^[^\x00-\x1f/\\{_SPACE}](?:[^\x00-\x1f/\\]{{0,126}}[^\x00-\x1f/\\{_SPACE}])?$"
)
_SCOPE_PART_RE: Final = re.compile(SCOPE_PART_PATTERN)


def _check_scope_part(name: str, value: str | None, *, required: bool) -> None:
    if value is None:
        if required:
            raise InvalidInputError(f"scope needs a {name}")
        return
    check_unicode(value, f"scope {name}")
    if not isinstance(value, str) or not _SCOPE_PART_RE.match(value) or value != value.strip():
        raise InvalidInputError(
            f"scope {name} {shown(value)} must be 1-128 characters without slashes, control "
            "characters or surrounding spaces"
        )


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a record belongs to: a user (required), optionally a thread and an agent.

    A scope *contains* another when the users are equal and every part this scope names
    (thread, agent) is equal in the other. A user scope therefore sees all of that user's
    threads, while a thread scope sees only its own thread. No scope ever sees another user.
    """

    user: str
    thread: str | None = None
    agent: str | None = None

    def __post_init__(self) -> None:
        _check_scope_part("user", self.user, required=True)
        _check_scope_part("thread", self.thread, required=False)
        _check_scope_part("agent", self.agent, required=False)

    def contains(self, other: Scope) -> bool:
        return (
            self.user == other.user
            and (self.thread is None or self.thread == other.thread)
            and (self.agent is None or self.agent == other.agent)
        )

    def user_scope(self) -> Scope:
        """The scope of this scope's user, without thread or agent."""
        return Scope(self.user)

    def __str__(self) -> str:
        parts = [f"user={self.user}"]
        if self.thread is not None:
            parts.append(f"thread={self.thread}")
        if self.agent is not None:
            parts.append(f"agent={self.agent}")
        return " ".join(parts)


def utc(value: datetime) -> datetime:
    """Return ``value`` as an aware UTC datetime (naive values are taken as UTC).

    A time whose UTC form falls outside years 1 to 9999 is refused."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise InvalidInputError(
            f"{value.isoformat()} is out of range: in UTC it falls outside years 1 to 9999"
        ) from None


class Role(StrEnum):
    """Who produced a turn, in the chat-API sense."""

    USER = "user"
    ASSISTANT = "assistant"
    SYSTEM = "system"
    TOOL = "tool"
    OTHER = "other"


class Category(StrEnum):
    """What a fact is about; confidence thresholds and decay are set per category."""

    PROFILE = "profile"
    PREFERENCE = "preference"
    PERSONAL = "personal"
    EXPERTISE = "expertise"
    DECISION = "decision"
    PLAN = "plan"
    EVENT = "event"
    RELATIONSHIP = "relationship"
    #: allergies, medical conditions, medications, dietary and accessibility needs
    HEALTH = "health"
    OTHER = "other"


#: the most characters the words of a :class:`When` and a fact's slot may have
WHEN_TEXT_MAX: Final = 200
SLOT_MAX: Final = 200
_CONTROL: Final = r"\x00-\x1f\x7f-\x9f"
#: a fact's slot: 1-200 characters, no control character, no space at either end (a pattern
#: in the syntax Python, JSON Schema and Rust regexes share)
SLOT_PATTERN: Final = (
    rf"^[^{_CONTROL}{_SPACE}](?:[^{_CONTROL}]{{0,{SLOT_MAX - 2}}}[^{_CONTROL}{_SPACE}])?$"
)
_SLOT_RE: Final = re.compile(SLOT_PATTERN)
#: a slot's kind: a slot without a colon
SLOT_KIND_PATTERN: Final = (
    rf"^[^{_CONTROL}{_SPACE}:](?:[^{_CONTROL}:]{{0,{SLOT_MAX - 2}}}[^{_CONTROL}{_SPACE}:])?$"
)


def check_slot(value: object, what: str = "slot") -> None:
    """Refuse ``value`` unless it is a slot: the state a fact sets for its subject, as
    ``kind`` or ``kind:qualifier`` (``employer``, ``allergy:shrimp``), 1-200 characters
    without control characters or surrounding spaces, case as given."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be text, not {type(value).__name__}")
    check_unicode(value, what)
    if not _SLOT_RE.match(value):
        raise InvalidInputError(
            f"{what} {shown(value)} must be 1-{SLOT_MAX} characters without control "
            "characters or surrounding spaces"
        )


def slot_kind(slot: str) -> str:
    """The kind of a slot: what comes before its first colon (``allergy`` of
    ``allergy:shrimp``), or the whole slot."""
    return slot.partition(":")[0]


def _aware(name: str, value: object) -> datetime:
    if not isinstance(value, datetime):
        raise InvalidInputError(f"{name} must be a datetime, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInputError(f"{name} {value.isoformat()} has no time zone")
    return utc(value)


def _interval(start: object, end: object) -> tuple[datetime, datetime]:
    """``start`` and ``end`` in UTC, if both are aware and ``start`` comes first."""
    first, last = _aware("when start", start), _aware("when end", end)
    if not first < last:
        raise InvalidInputError(
            f"when start {first.isoformat()} must be before its end {last.isoformat()}"
        )
    return first, last


@dataclass(frozen=True, slots=True)
class When:
    """The time a fact speaks of: the words that said it (``"last Friday"``, ``"下个月"``,
    ``"in May"``) and the interval they name, half-open ``[start, end)``, resolved against
    the date of the turn the fact came from.

    ``start`` and ``end`` are timezone-aware and kept in UTC (a time in another zone is
    converted), ``start`` before ``end``; ``text`` is 1-200 characters, not only spaces.
    A fact filed by hand with an interval and no words is given :meth:`between`, whose
    text renders the interval."""

    text: str
    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise InvalidInputError(f"when text must be text, not {type(self.text).__name__}")
        check_unicode(self.text, "when text")
        if not self.text.strip():
            raise InvalidInputError("when text is empty")
        if len(self.text) > WHEN_TEXT_MAX:
            raise InvalidInputError(
                f"when text has {len(self.text)} characters; at most {WHEN_TEXT_MAX}"
            )
        start, end = _interval(self.start, self.end)
        object.__setattr__(self, "start", start)  # frozen: set once, here, in UTC
        object.__setattr__(self, "end", end)

    @classmethod
    def between(cls, start: datetime, end: datetime) -> When:
        """The interval ``[start, end)`` with its rendering as its words (see
        :func:`interval_text`)."""
        first, last = _interval(start, end)
        return cls(interval_text(first, last), first, last)


def _midnight(t: datetime) -> bool:
    return (t.hour, t.minute, t.second, t.microsecond) == (0, 0, 0, 0)


def _next_month(t: datetime) -> datetime | None:
    if t.year == 9999 and t.month == 12:
        return None
    return t.replace(year=t.year + 1, month=1) if t.month == 12 else t.replace(month=t.month + 1)


def _instant(t: datetime) -> str:
    if _midnight(t):
        return f"{t.year:04d}-{t.month:02d}-{t.day:02d}"
    text = f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:{t.second:02d}"
    return (text + (f".{t.microsecond:06d}" if t.microsecond else "")) + "Z"


def interval_text(start: datetime, end: datetime) -> str:
    """The UTC interval ``[start, end)`` as text: a whole day as ``2026-05-01``, a whole
    month as ``2026-05``, a whole year as ``2026``, anything else as an ISO 8601 interval
    ``start/end`` whose end is not part of it (``2026-05-01/2026-05-08``: seven days;
    ``2026-05-01T09:00:00Z/2026-05-01T10:30:00Z``)."""
    s, e = utc(start), utc(end)
    if _midnight(s) and _midnight(e):
        if (s.month, s.day) == (1, 1) and s.year < 9999 and e == s.replace(year=s.year + 1):
            return f"{s.year:04d}"
        if s.day == 1 and e == _next_month(s):
            return f"{s.year:04d}-{s.month:02d}"
        if e - s == timedelta(days=1):
            return _instant(s)
    return f"{_instant(s)}/{_instant(e)}"


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn as a caller hands it to ``remember``: text plus what is known about it."""

    text: str
    speaker: str | None = None
    role: Role = Role.USER
    time: datetime | None = None
    session_id: str | None = None
    metadata: Mapping[str, JsonValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise InvalidInputError(f"turn text must be a string, not {type(self.text).__name__}")
        if not self.text.strip():
            raise InvalidInputError("turn text is empty")
        for name in ("speaker", "session_id"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise InvalidInputError(f"turn {name} must be text, not {type(value).__name__}")
        if not isinstance(self.metadata, Mapping):
            raise InvalidInputError(
                f"turn metadata must be a mapping, not {type(self.metadata).__name__}"
            )
        check_unicode(self.text, "turn text")
        check_unicode(self.speaker, "turn speaker")
        check_unicode(self.session_id, "turn session_id")
        check_unicode(self.metadata, "turn metadata")
        try:  # strict JSON: what every reader of the record (HTTP, export) can parse back
            json.dumps(dict(self.metadata), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"turn metadata is not JSON: {exc}") from None


@dataclass(frozen=True, slots=True)
class Episode:
    """One verbatim turn as stored in the L3 archive. Episodes are never edited."""

    id: str
    scope: Scope
    surface: str
    session_id: str
    speaker: str | None
    role: Role
    text: str
    time: datetime
    metadata: Mapping[str, JsonValue] = field(default_factory=dict)
    archived: bool = False


def _check_when_and_slot(what: str, when: object, slot: object) -> None:
    if when is not None and not isinstance(when, When):
        raise InvalidInputError(f"{what} when must be a When, not {type(when).__name__}")
    if slot is not None:
        check_slot(slot, f"{what} slot")


#: the most characters a fact's value may have
VALUE_MAX: Final = 500


def check_value(value: object, what: str = "value") -> None:
    """Refuse ``value`` unless it is a slot's value: non-empty text of at most
    :data:`VALUE_MAX` characters, valid Unicode."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be text, not {type(value).__name__}")
    check_unicode(value, what)
    if not value.strip():
        raise InvalidInputError(f"{what} is empty")
    if len(value) > VALUE_MAX:
        raise InvalidInputError(f"{what} has {len(value)} characters; at most {VALUE_MAX}")


@dataclass(frozen=True, slots=True)
class Fact:
    """One atomic fact, with provenance and a validity interval.

    ``sources`` are the ids of the episodes the fact rests on. A fact whose ``valid_to`` is
    set has been superseded (``superseded_by``) or expired; it stays queryable by time.
    ``version`` counts writes and guards compare-and-swap updates. ``when`` is the time the
    fact speaks of (see :class:`When`), if it names one; ``slot`` the state it sets for its
    subject (the speaker of the turn it cites first), as ``kind`` or ``kind:qualifier``
    (``employer``, ``allergy:shrimp``, ``plan:trip to kyoto``): facts of one subject with
    the same slot supersede each other. ``value`` is the slot's value as the person said it
    ("CATL", "husband 王磊"): what a profile shows for the slot; None for a fact that ends a
    state ("no longer drinks coffee") or that names no value.
    """

    id: str
    scope: Scope
    text: str
    category: Category
    confidence: float
    importance: float
    topic: str | None
    sources: tuple[str, ...]
    valid_from: datetime
    valid_to: datetime | None
    superseded_by: str | None
    created_at: datetime
    updated_at: datetime
    access_count: int = 0
    version: int = 1
    when: When | None = None
    slot: str | None = None
    value: str | None = None

    def __post_init__(self) -> None:
        _check_when_and_slot("fact", self.when, self.slot)
        if self.value is not None:
            check_value(self.value, "fact value")

    @property
    def current(self) -> bool:
        return self.valid_to is None

    def evolve(self, **changes: Any) -> Fact:
        return replace(self, **changes)


class DocumentKind(StrEnum):
    """The kinds of versioned documents kept per scope."""

    IDENTITY = "identity"
    PROFILE = "profile"
    ESSENTIALS = "essentials"
    TOPIC = "topic"
    STATE = "state"  # bookkeeping of curation runs (e.g. what consolidation has read)


@dataclass(frozen=True, slots=True)
class Document:
    """A versioned document of a scope: identity (L0), profile (L1) or a topic (L2).

    ``key`` is unique per scope and kind (``"identity"``, ``"profile"`` or a topic slug);
    ``content`` is the kind's JSON body. Writes are compare-and-swap on ``version``.
    """

    id: str
    scope: Scope
    kind: DocumentKind
    key: str
    content: Mapping[str, JsonValue]
    version: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Identity:
    """L0: the text the user writes about who the agent is and whom it serves."""

    text: str
    version: int = 0

    def to_content(self) -> dict[str, JsonValue]:
        return {"text": self.text}

    @classmethod
    def from_document(cls, doc: Document) -> Identity:
        return cls(text=str(doc.content.get("text", "")), version=doc.version)


@dataclass(frozen=True, slots=True)
class Slot:
    """One profile or preference value with the episodes it rests on, and since when (or as
    of when) it holds, for a value that changes over a life ("as of 2026-05-20", "since week of
    2026-05-11"), shown beside the value, never part of it."""

    value: str
    sources: tuple[str, ...] = ()
    confidence: float = 1.0
    as_of: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {
            "value": self.value,
            "sources": list(self.sources),
            "confidence": self.confidence,
        }
        if self.as_of is not None:
            out["as_of"] = self.as_of
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, JsonValue]) -> Slot:
        as_of = data.get("as_of")
        return cls(
            value=str(data["value"]),
            sources=tuple(str(s) for s in data.get("sources", ())),
            confidence=float(data.get("confidence", 1.0)),
            as_of=str(as_of) if isinstance(as_of, str) and as_of else None,
        )

    def shown(self) -> str:
        """The value as served: with since or as of when it holds, when known."""
        return f"{self.value} ({self.as_of})" if self.as_of else self.value


PROFILE_FIELDS: Final = ("name", "role", "expertise", "language", "context")
PREFERENCE_FIELDS: Final = ("tone", "verbosity", "code_style", "other")


@dataclass(frozen=True, slots=True)
class Profile:
    """L1: the structured profile and preferences of a scope."""

    fields: Mapping[str, Slot] = field(default_factory=dict)
    preferences: Mapping[str, Slot] = field(default_factory=dict)
    version: int = 0

    def to_content(self) -> dict[str, JsonValue]:
        return {
            "fields": {k: v.to_json() for k, v in self.fields.items()},
            "preferences": {k: v.to_json() for k, v in self.preferences.items()},
        }

    @classmethod
    def from_document(cls, doc: Document) -> Profile:
        return cls(
            fields={k: Slot.from_json(v) for k, v in doc.content.get("fields", {}).items()},
            preferences={
                k: Slot.from_json(v) for k, v in doc.content.get("preferences", {}).items()
            },
            version=doc.version,
        )


@dataclass(frozen=True, slots=True)
class TopicDocument:
    """L2: the summary document of one topic, as markdown with footnote citations."""

    topic: str
    title: str
    markdown: str
    sources: tuple[str, ...] = ()
    version: int = 0

    def to_content(self) -> dict[str, JsonValue]:
        return {"title": self.title, "markdown": self.markdown, "sources": list(self.sources)}

    @classmethod
    def from_document(cls, doc: Document) -> TopicDocument:
        return cls(
            topic=doc.key,
            title=str(doc.content.get("title", doc.key)),
            markdown=str(doc.content.get("markdown", "")),
            sources=tuple(str(s) for s in doc.content.get("sources", ())),
            version=doc.version,
        )


class DeleteReason(StrEnum):
    """Why an item was deleted; kept in its history."""

    CONTRADICTED = "contradicted"
    SUPERSEDED = "superseded"
    STALE = "stale"
    LOW_SIGNAL = "low-signal"
    USER_REQUEST = "user-request"
    SOURCE_DELETED = "source-deleted"


class HistoryOp(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    SUPERSEDE = "supersede"
    MOVE = "move"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class ItemEvent:
    """A change to an item that lives inside a document (a bullet), for the item's history.

    Written in the same transaction as the document version it belongs to."""

    item_id: str
    op: HistoryOp
    reason: str | None
    data: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class ItemVersion:
    """One entry of an item's history: the item as it was after ``op`` at ``version``.

    A delete entry keeps no content (``data`` is empty): deletion on request removes the
    text from history too, and leaves only the fact that it happened, when and why.
    """

    item_id: str
    version: int
    op: HistoryOp
    at: datetime
    reason: str | None
    data: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class DocumentWrite:
    """A new version of a stored document, made by compare-and-swap inside an
    :class:`Erasure` (its bullets or slots that cite erased episodes taken out)."""

    document_id: str
    content: Mapping[str, JsonValue]
    expected_version: int
    item_events: tuple[ItemEvent, ...] = ()


@dataclass(frozen=True, slots=True)
class HistoryRewrite:
    """A history entry whose content is replaced (erased text taken out, or ``{}``)."""

    item_id: str
    scope: Scope
    version: int
    data: Mapping[str, JsonValue]


@dataclass(frozen=True, slots=True)
class Erasure:
    """Everything one deletion changes in the record store, applied in one transaction.

    ``episode_ids`` are deleted; every fact of the user citing one of them loses that
    citation, and a fact left citing nothing is deleted (reason ``source-deleted``); with
    ``derived`` (deletion on request) every fact citing one is deleted, with ``reason``.
    ``fact_ids`` and ``document_ids`` are deleted with ``reason``. With ``whole_scope``
    every episode, fact, document and history entry the scope contains goes too.
    ``documents`` and ``history`` rewrite what derives from the erased records (versions
    checked by compare-and-swap). ``target`` names what was asked (an item id or a scope);
    ``texts`` are other texts removed (bullets), kept until the derived copies are erased.
    ``settled`` are episodes whose facts were deleted on purpose: extraction does not read
    them again (see :meth:`RecordStore.settled_episodes`).
    """

    target: str
    reason: str
    episode_ids: tuple[str, ...] = ()
    fact_ids: tuple[str, ...] = ()
    document_ids: tuple[str, ...] = ()
    whole_scope: bool = False
    derived: bool = False
    documents: tuple[DocumentWrite, ...] = ()
    history: tuple[HistoryRewrite, ...] = ()
    texts: tuple[str, ...] = ()
    settled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ErasureRecord:
    """The journal entry of an :class:`Erasure`, written in its transaction.

    While ``done`` is false the copies outside the record store (the raw trace lines of
    ``episode_ids``, vectors of ``texts``) may still exist in some data directory; each data
    directory erases its copies and says so (``sites`` are the ones that did), and once every
    data directory that could hold copies did, the entry is done, which also drops ``texts``
    (see :meth:`memstrata.ports.RecordStore.finish_erasure`). ``deleted`` and ``cascaded``
    are the ids removed; ``counts`` how many records of each kind."""

    id: str
    scope: Scope
    target: str
    reason: str
    at: datetime
    episode_ids: tuple[str, ...]
    texts: tuple[str, ...]
    deleted: tuple[str, ...]
    cascaded: tuple[str, ...]
    counts: Mapping[str, int]
    done: bool = False
    sites: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Site:
    """A data directory using the store (see :meth:`memstrata.ports.RecordStore.enrol_site`):
    where it is, when it was first and last seen, and how many erasures not yet done it has
    still to apply."""

    id: str
    label: str
    first_seen: datetime
    last_seen: datetime
    waiting: int


class ChangeOp(StrEnum):
    UPSERT = "upsert"
    DELETE = "delete"


@dataclass(frozen=True, slots=True)
class Change:
    """One entry of a user's change feed: an item was written (upsert) or deleted.

    ``seq`` grows with every change, across processes; it carries ids only, never text.
    """

    seq: int
    item_id: str
    op: ChangeOp


@dataclass(frozen=True, slots=True)
class ScopeSummary:
    """What one thread and agent of a user holds (None: records outside any thread or
    agent): turns (archived too), distinct sessions, facts (current and superseded),
    documents, and the times of its first and last turn."""

    thread: str | None
    agent: str | None
    episodes: int
    sessions: int
    facts: int
    documents: int
    first_time: datetime | None
    last_time: datetime | None


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """One session (a session id in one thread and agent): its turns (archived too), the
    times of its first and last turn, its speakers (sorted) and its surfaces, in the order
    they first appear (by time, then id)."""

    session_id: str
    thread: str | None
    agent: str | None
    first_time: datetime
    last_time: datetime
    turns: int
    speakers: tuple[str, ...]
    surfaces: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Stats:
    """Counts of what a scope holds."""

    scope: Scope
    episodes: int
    archived_episodes: int
    sessions: int
    speakers: int
    facts_current: int
    facts_superseded: int
    documents: dict[str, int]
    first_time: datetime | None
    last_time: datetime | None


@dataclass(frozen=True, slots=True)
class EpisodeFilter:
    """Optional narrowing of an episode listing (the scope is always applied)."""

    session_id: str | None = None
    speaker: str | None = None
    surface: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    include_archived: bool = True


@dataclass(frozen=True, slots=True)
class FactFilter:
    """Optional narrowing of a fact listing (the scope is always applied)."""

    category: Category | None = None
    topic: str | None = None
    current_only: bool = False
    #: only facts a newer fact superseded (``superseded_by`` set)
    superseded_only: bool = False
    valid_at: datetime | None = None
    source: str | None = None
    #: only facts with exactly this slot
    slot: str | None = None
    #: only facts whose slot is of this kind: the kind itself, or ``kind:`` and a qualifier
    slot_kind: str | None = None

    def __post_init__(self) -> None:
        if self.slot is not None:
            check_slot(self.slot, "the slot filter")
        if self.slot_kind is not None:
            check_slot(self.slot_kind, "the slot_kind filter")
            if ":" in self.slot_kind:
                raise InvalidInputError(
                    f"the slot_kind filter {shown(self.slot_kind)} holds a colon; a kind is "
                    "what comes before a slot's first colon"
                )


class Granularity(StrEnum):
    """What a search returns: single turns, whole sessions, facts, or curated topic documents
    (the L2 topics and the L1 essentials, ranked by their best bullets)."""

    TURN = "turn"
    SESSION = "session"
    FACT = "fact"
    TOPIC = "topic"


class Layer(StrEnum):
    """A memory layer a search can keep to: L1 essentials and L2 topics (curated documents,
    searched with granularity ``topic``), L3 the archive (turns and facts)."""

    ESSENTIALS = "L1"
    TOPICS = "L2"
    ARCHIVE = "L3"


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Narrowing of a search (the scope is always applied, inside the index)."""

    speaker: str | None = None
    session_id: str | None = None
    surface: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    category: Category | None = None
    topic: str | None = None
    layer: Layer | None = None
    current_only: bool = True
    include_archived: bool = False


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One search result with the parts of its score.

    ``id`` is the episode or fact id, for a session hit ``<thread>/<session id>``, for a topic
    hit the document id; ``episodes`` lists a session hit's best-matching turns, best first,
    and ``bullets`` a topic hit's best-matching bullets; ``topic`` is a fact's topic or a topic
    hit's document key. ``components`` holds ``lexical`` (BM25), ``dense`` (cosine) and
    ``fused`` (the ranking score).
    """

    id: str
    granularity: Granularity
    score: float
    components: Mapping[str, float]
    text: str
    scope: Scope
    session_id: str | None
    speaker: str | None
    time: datetime | None
    episodes: tuple[str, ...] = ()
    topic: str | None = None
    bullets: tuple[str, ...] = ()


class SearchHits(list[SearchHit]):
    """Search hits, best first, and how many entries the search could have found are still
    waiting for their dense vectors: those were ranked lexically only (``partial``)."""

    def __init__(self, hits: Iterable[SearchHit] = (), *, pending: int = 0) -> None:
        super().__init__(hits)
        self.pending = pending

    @property
    def partial(self) -> bool:
        """Whether some entries were ranked without their dense vectors."""
        return self.pending > 0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A fact an extractor proposes, before the guards: what it says, about whom, the
    episodes it rests on, and the time it speaks of and the state it sets, when known."""

    text: str
    category: Category
    confidence: float
    importance: float
    sources: tuple[str, ...]
    subject: str | None = None
    topic: str | None = None
    rule: str = ""
    #: the time the statement speaks of, resolved against its turn's date
    when: When | None = None
    #: the state it sets for its subject (see :attr:`Fact.slot`)
    slot: str | None = None
    #: the new value replaces every value of the slot's kind, not only its own slot ("I'm
    #: only allergic to shrimp" ends ``allergy:peanuts`` too)
    exclusive: bool = False
    #: the slot's value as the person said it ("CATL", "husband 王磊")
    value: str | None = None
    #: set when the statement ends a state instead of setting one: the value it ends ("I
    #: left Google": "Google"), or "" for whatever it is ("I got laid off")
    ended: str | None = None

    def __post_init__(self) -> None:
        _check_when_and_slot("candidate", self.when, self.slot)
        if self.value is not None:
            check_value(self.value, "candidate value")


@dataclass(frozen=True, slots=True)
class Extraction:
    """What one extraction step produced; ``failures`` says what went wrong, never raises."""

    candidates: tuple[Candidate, ...]
    failures: tuple[str, ...] = ()
    dropped_citations: int = 0


class KeyRole(StrEnum):
    """What an API key may do; each role may do all that the roles below it may.

    ``reader``: reads and search. ``writer``: also writes, and deleting and forgetting items
    and threads. ``admin``: everything, including forgetting a whole user and managing keys.
    """

    READER = "reader"
    WRITER = "writer"
    ADMIN = "admin"

    def allows(self, needed: KeyRole) -> bool:
        """Whether this role may do what ``needed`` may."""
        order = (KeyRole.READER, KeyRole.WRITER, KeyRole.ADMIN)
        return order.index(self) >= order.index(needed)


@dataclass(frozen=True, slots=True)
class ApiKey:
    """An API key as it is listed: never the key itself. The store keeps a hash of the key
    beside these fields; ``prefix`` is the key's first characters, public, to tell keys apart.

    ``users`` is the tenant: the users whose memory the key reaches, or None for all users.
    A revoked key (``revoked_at`` set) authenticates nothing."""

    id: str
    prefix: str
    name: str
    role: KeyRole
    users: tuple[str, ...] | None
    created_at: datetime
    revoked_at: datetime | None = None

    def __post_init__(self) -> None:
        if self.users is not None:
            if not self.users:
                raise InvalidInputError("a key serves all users or at least one named user")
            for user in self.users:
                _check_scope_part("user", user, required=True)

    @property
    def active(self) -> bool:
        return self.revoked_at is None

    def serves(self, user: str) -> bool:
        """Whether the key's tenant holds ``user``."""
        return self.users is None or user in self.users
