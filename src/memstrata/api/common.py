"""What the facade's parts share: scope and turn coercion, reports, argument checks."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, Literal

from memstrata.codec import parse_time
from memstrata.errors import InvalidInputError, TooLargeError
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
    utc,
)
from memstrata.ports import Clock, Embedder, RecordStore, SystemClock, TraceSink
from memstrata.settings import DEFAULT_MAX_TURN_CHARS, Settings
from memstrata.textio import check_unicode

if TYPE_CHECKING:
    from memstrata.curate.queue import DebounceQueue
    from memstrata.curate.runs import RunRegistry
    from memstrata.index.config import RankingConfig
    from memstrata.index.manager import IndexManager
    from memstrata.layers import FactCache

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
    }
)
TURN_KEYS: Final = frozenset({"text", "speaker", "role", "time", "session_id", "metadata"})


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
class IngestReport:
    """What an import stored."""

    source: str
    format: str
    conversations: int
    turns: int
    questions: int
    scopes: tuple[Scope, ...]
    seconds: float

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


class MemoryState:
    """What every part of the facade shares: the store, the trace, the clock, the settings and
    the lazily built parts (indexes, runs, queue, caches). The parts stack in this order, each
    using those below it: capture, documents, records, curation, then :class:`Memory`."""

    def __init__(
        self,
        store: RecordStore,
        *,
        trace: TraceSink | None = None,
        clock: Clock | None = None,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        ranking: RankingConfig | None = None,
    ) -> None:
        self.store = store
        self.trace = trace
        self.clock = clock or SystemClock()
        self.settings = settings
        self._embedder = embedder
        self._ranking = ranking
        self._indexes: IndexManager | None = None
        self._runs: RunRegistry | None = None
        self._queue: DebounceQueue | None = None
        self._fact_cache: FactCache | None = None
        self._index_lock = threading.Lock()

    @property
    def max_turn_chars(self) -> int:
        """The longest turn (and search query) accepted, in characters."""
        return DEFAULT_MAX_TURN_CHARS if self.settings is None else self.settings.max_turn_chars

    def check_size(self, text: str, what: str) -> None:
        """Refuse ``text`` longer than :attr:`max_turn_chars` as :class:`TooLargeError`, and
        text no store can keep (lone surrogates) as :class:`InvalidInputError`."""
        check_unicode(text, what)
        limit = self.max_turn_chars
        if len(text) > limit:
            raise TooLargeError(
                f"{what} has {len(text)} characters, over the limit of {limit} "
                f"(setting max_turn_chars {limit}); split it or raise the limit",
                limit=limit,
                size=len(text),
            )


def scrubbed(text: str, scope: Scope, *, secrets_only: bool) -> str:
    from memstrata.curate.scrubbing import scrub_for_storage

    return scrub_for_storage(text, scope, secrets_only=secrets_only)


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


def check_unit(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"{name} must be a number between 0 and 1, got {value!r}")
