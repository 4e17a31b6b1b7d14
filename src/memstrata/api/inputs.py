"""What callers hand the facade and what it hands back: scopes and turns coerced and checked,
facts' fields, times, slots and units read, the reports of an import or a deletion, the scrub
of captured text, and the passages of curated documents."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Literal

from memstrata.codec import parse_time
from memstrata.errors import InvalidInputError
from memstrata.model import (
    Category,
    DeleteReason,
    Document,
    Episode,
    Fact,
    JsonValue,
    Role,
    Scope,
    Turn,
    When,
    check_slot,
    utc,
)

if TYPE_CHECKING:
    from memstrata.index.scope_index import Passage

TurnLike = str | Turn | Mapping[str, Any]
ScopeLike = Scope | str
Record = Episode | Fact | Document
ListKind = Literal["episode", "fact", "document"]

FACT_FIELDS: Final = frozenset(
    {
        "text",
        "category",
        "confidence",
        "importance",
        "topic",
        "sources",
        "valid_from",
        "valid_to",
        "superseded_by",
        "when",
        "slot",
        "value",
    }
)
#: the keys of a fact's ``when`` given as a mapping (``text`` may be left out)
WHEN_KEYS: Final = frozenset({"text", "start", "end"})
TURN_KEYS: Final = frozenset({"text", "speaker", "role", "time", "session_id", "metadata"})
#: the state document of a scope that holds the audit flags a person kept (``api/audit``)
AUDIT_STATE_KEY: Final = "audit"


def as_scope(scope: ScopeLike) -> Scope:
    if isinstance(scope, Scope):
        return scope
    if isinstance(scope, str):
        return Scope(scope)
    raise InvalidInputError(f"a scope must be a Scope or a user id, not {type(scope).__name__}")


def as_turn(value: TurnLike) -> Turn:
    if isinstance(value, Turn):
        return value
    if isinstance(value, str):
        return Turn(text=value)
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - TURN_KEYS)
        if unknown:
            raise InvalidInputError(f"unknown turn field(s): {', '.join(unknown)}")
        if "text" not in value:
            raise InvalidInputError("a turn needs a 'text'")
        try:
            role = Role(value.get("role") or "user")
        except ValueError:
            raise InvalidInputError(f"unknown role {value.get('role')!r}") from None
        time = value.get("time")
        if time is not None:
            time = time_of("time", time)
        metadata = value.get("metadata") or {}
        if not isinstance(metadata, Mapping):
            raise InvalidInputError(
                f"turn metadata must be a mapping, not {type(metadata).__name__}"
            )
        return Turn(
            text=value["text"],
            speaker=value.get("speaker"),
            role=role,
            time=time,
            session_id=value.get("session_id"),
            metadata=dict(metadata),
        )
    raise InvalidInputError(f"a turn must be text, a Turn or a mapping, not {type(value).__name__}")


@dataclass(frozen=True, slots=True)
class ImportSource:
    """One source of an import (a conversation, the facts, a document) in its report: what it
    adds (``turns``, ``facts``, ``bullets``) and what was there already (``present``)."""

    source: str
    kind: Literal["conversation", "facts", "document"]
    title: str
    turns: int = 0
    facts: int = 0
    bullets: int = 0
    present: int = 0


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What an import stored (or, for a dry run, would store).

    ``turns``, ``facts`` and ``bullets`` count what is new; ``present`` what an earlier import
    stored already; ``skipped`` pairs a place in the file with the reason it is left out;
    ``unresolved`` counts citations that name nothing in memory (the import episode is cited
    instead)."""

    source: str
    format: str
    conversations: int
    turns: int
    questions: int
    scopes: tuple[Scope, ...]
    seconds: float
    facts: int = 0
    bullets: int = 0
    present: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    unresolved: int = 0
    dry_run: bool = False
    sources: tuple[ImportSource, ...] = ()

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.seconds if self.seconds > 0 else float("inf")


@dataclass(frozen=True, slots=True)
class DeleteReport:
    """What a delete removed: the item(s) and what cascaded from them."""

    deleted: tuple[str, ...]
    cascaded: tuple[str, ...] = field(default_factory=tuple)
    #: how many records of each kind went (episodes, facts, documents, bullets, history
    #: entries rewritten, raw trace lines erased)
    counts: Mapping[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "deleted": list(self.deleted),
            "cascaded": list(self.cascaded),
            "counts": dict(self.counts),
        }


def document_passages(doc: Document) -> list[Passage]:
    """A curated document's bullets as search passages, each led by its document's title (and
    its section's heading when that says more)."""
    return [p for _, p in content_passages(doc.content)]


def content_passages(content: Mapping[str, Any]) -> list[tuple[str, Passage]]:
    """The passages of curated document content (a document, or a version in its history),
    each with its bullet's own text; none for content that is not a readable curated
    document."""
    from memstrata.document.service import document_from_json
    from memstrata.index.scope_index import Passage

    try:
        curated = document_from_json(content)
    except InvalidInputError:  # stored malformed by an older version: not searchable
        return []
    out: list[tuple[str, Passage]] = []
    for section in curated.sections:
        lead = curated.title
        if section.heading and section.heading.casefold() != curated.title.casefold():
            lead = f"{curated.title} · {section.heading}"
        out.extend((b.text, Passage(b.id, f"{lead}: {b.text}")) for b in section.bullets)
    return out


def scrubbed(text: str, scope: Scope, *, secrets_only: bool) -> str:
    from memstrata.curate.scrubbing import scrub_for_storage

    return scrub_for_storage(text, scope, secrets_only=secrets_only)


def scrubbed_json(value: Mapping[str, JsonValue], scope: Scope) -> dict[str, JsonValue]:
    """``value`` with the secrets scrubbed from every string in it (keys stay as they are)."""

    def clean(item: JsonValue) -> JsonValue:
        if isinstance(item, str):
            return scrubbed(item, scope, secrets_only=True)
        if isinstance(item, list):
            return [clean(i) for i in item]
        if isinstance(item, dict):
            return {k: clean(v) for k, v in item.items()}
        return item

    return {k: clean(v) for k, v in value.items()}


def category_of(value: Category | str) -> Category:
    try:
        return Category(value)
    except ValueError:
        raise InvalidInputError(
            f"unknown category {value!r}; expected one of {', '.join(c.value for c in Category)}"
        ) from None


def reason_of(value: DeleteReason | str) -> DeleteReason:
    try:
        return DeleteReason(value)
    except ValueError:
        raise InvalidInputError(
            f"unknown delete reason {value!r}; expected one of "
            + ", ".join(r.value for r in DeleteReason)
        ) from None


def time_of(name: str, value: object) -> datetime:
    """A time given as a datetime or ISO 8601 text, in UTC; anything else is refused."""
    if isinstance(value, str):
        return parse_time(value)
    if isinstance(value, datetime):
        return utc(value)
    raise InvalidInputError(f"{name} must be a time (ISO 8601 text), got {value!r}")


def when_of(value: object) -> When | None:
    """A fact's ``when`` as a caller gives it: a :class:`When`, None, or a mapping with
    ``start`` and ``end`` (datetimes or ISO 8601 text; a time without a zone is UTC) and
    ``text``, the words that named the interval. Without ``text`` (or with null) the words
    are a rendering of the interval (:meth:`When.between`); given text is stripped."""
    if value is None or isinstance(value, When):
        return value
    if not isinstance(value, Mapping):
        raise InvalidInputError(
            f'when must be {{"text", "start", "end"}} or null, not {type(value).__name__}'
        )
    unknown = sorted(str(k) for k in set(value) - WHEN_KEYS)
    if unknown:
        raise InvalidInputError(f"unknown when field(s): {', '.join(unknown)}")
    times = []
    for name in ("start", "end"):
        if value.get(name) is None:
            raise InvalidInputError(f"when needs its {name} (an ISO 8601 time)")
        try:
            times.append(time_of(f"when {name}", value[name]))
        except InvalidInputError as exc:
            raise InvalidInputError(f"when {name}: {exc}") from None
    text = value.get("text")
    if text is None:
        return When.between(times[0], times[1])
    if not isinstance(text, str):
        raise InvalidInputError(f"when text must be text, not {type(text).__name__}")
    return When(text.strip(), times[0], times[1])


def slot_of(value: object, what: str = "slot") -> str | None:
    """A fact's ``slot`` as a caller gives it (None, or text: surrounding spaces stripped)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be text, not {type(value).__name__}")
    check_slot(value.strip(), what)
    return value.strip()


def check_unit(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"{name} must be a number between 0 and 1, got {value!r}")
