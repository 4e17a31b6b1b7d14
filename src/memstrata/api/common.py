"""What the facade's parts share: scope and turn coercion, reports, argument checks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from memstrata.api.copies import CopyHolder, Erasing, erase_copies, holders_of, prove_erased
from memstrata.codec import parse_time
from memstrata.errors import BusyError, InvalidInputError, StoreError, TooLargeError
from memstrata.model import (
    Category,
    DeleteReason,
    Document,
    Episode,
    EpisodeFilter,
    Erasure,
    ErasureRecord,
    Fact,
    JsonValue,
    Role,
    Scope,
    Turn,
    When,
    check_slot,
    utc,
)
from memstrata.ports import (
    SITE_WAIT,
    Clock,
    Embedder,
    RecordStore,
    SystemClock,
    TraceSink,
)
from memstrata.settings import DEFAULT_MAX_TURN_CHARS, Settings
from memstrata.textio import check_unicode

if TYPE_CHECKING:
    from memstrata.api.sites import ErasureSweep
    from memstrata.curate.queue import DebounceQueue
    from memstrata.curate.runs import RunRegistry
    from memstrata.index.config import RankingConfig
    from memstrata.index.indexer import BackgroundIndexer
    from memstrata.index.leader import ModelLock
    from memstrata.index.manager import IndexManager
    from memstrata.index.scope_index import Passage
    from memstrata.layers import FactCache

TurnLike = str | Turn | Mapping[str, Any]
ScopeLike = Scope | str
Record = Episode | Fact | Document
ListKind = Literal["episode", "fact", "document"]

log = logging.getLogger(__name__)

_PENDING: Final = "the erasure stays pending: a retry, or the next open, finishes it"

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
        self._indexer: BackgroundIndexer | None = None
        self._model_lock: ModelLock | None = None
        self._fact_cache: FactCache | None = None
        self._workers: list[threading.Thread] = []  # background curation runs
        self._index_lock = threading.Lock()
        self._site_id: str | None = None  # this data directory's, see memstrata.api.sites
        self._site_new = False  # the id was made here for a new directory, not yet enrolled
        self._sweep: ErasureSweep | None = None
        self._enrol_failed = False  # said once as a warning, then quietly

    def _written(self, scope: Scope) -> None:
        """Records of ``scope`` were written: the background indexer (if running) embeds
        them now rather than at its next look at the store."""
        if self._indexer is not None:
            self._indexer.notify(scope.user)

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

    def _copy_holders(self) -> list[CopyHolder]:
        """Every holder of copies of user text outside the store's rows, in the order a
        forget erases them (see :mod:`memstrata.api.copies`)."""
        settings = self.settings
        return holders_of(
            self.store,
            trace=self.trace,
            index_dir=None if settings is None else settings.index_dir,
            vector_cache=None if settings is None else Path(settings.embedding_cache_path),
            indexes=lambda: self._indexes,
            embedder=lambda: self._embedder,
        )

    def _erase_copies(
        self,
        episode_ids: Sequence[str],
        texts: Collection[str],
        *,
        user: str,
        reason: str = DeleteReason.USER_REQUEST.value,
        lost: bool = False,
        ids: Collection[str] = (),
    ) -> int:
        """Erase the copies of deleted records kept outside the record store, once the store
        change is made, through every holder of copies (:meth:`_copy_holders`): the raw
        trace lines of ``episode_ids`` (tombstones with ``reason`` stay; a damaged line
        holding one of ``texts`` is blanked), the entries of built in-process indexes, the
        saved indexes of ``user`` (overwritten and removed, then read back; the built one is
        saved again later), and the cached vectors of ``texts`` (every model), each read back.
        ``texts`` are every text the deletion removed and every text embedded from them (see
        :meth:`_derived_texts`). With ``lost`` the texts are no longer known (the journal
        dropped them before this data directory applied the erasure): the saved indexes' rows
        are found by the erased ``ids``, and the whole vector cache is dropped. Raises
        :class:`StoreError` naming each copy left and where; safe to run again. The number
        of trace lines erased."""
        job = Erasing(user, tuple(episode_ids), texts, ids, reason, lost)
        erased, left = erase_copies(self._copy_holders(), job)
        if left:
            raise StoreError(_left_message(episode_ids, left))
        return erased

    def _finish(self, record: ErasureRecord) -> DeleteReport:
        """Erase this data directory's copies outside the store (:meth:`_erase_copies`), say
        so in the journal, and once the entry is done (no other data directory still to
        erase its copies), prove the database's files free of the erased texts
        (:meth:`_prove_erased`). The entry holds the texts until it is done, so the proof (a
        WAL checkpoint and a scan) comes after :meth:`RecordStore.finish_erasure`. An entry
        done before this data directory applied it has no texts left: its copies are found
        by id, and its whole vector cache is dropped (see :meth:`_erase_copies`)."""
        try:
            lines = self._erase_copies(
                record.episode_ids,
                record.texts,
                user=record.scope.user,
                reason=record.reason,
                lost=record.done,
                ids=(*record.deleted, *record.cascaded),
            )
        except OSError as exc:
            raise StoreError(
                f"{record.target} was deleted but its raw trace line could not be erased "
                f"({exc}); {_PENDING}"
            ) from exc
        except StoreError as exc:
            raise StoreError(f"{exc}; {_PENDING}") from exc
        waiting = self._close_erasure(record, self._site_of_dir())
        counts = {**record.counts, "trace_lines": lines}
        if waiting:  # the data directories that have still to erase their copies
            counts["sites_waiting"] = waiting
        return DeleteReport(record.deleted, record.cascaded, counts)

    def _close_erasure(self, record: ErasureRecord, site: str | None = None) -> int:
        """Say that ``site`` (if any) erased its copies of ``record``; once no data directory
        is waited for, prove the store's files free of its texts. How many are waited for."""
        waiting = self.store.finish_erasure(record.id, site, wait=self._site_wait())
        if not waiting:
            self._prove_erased(record.episode_ids, record.texts, user=record.scope.user)
        return waiting

    def _site_of_dir(self) -> str | None:
        """This data directory's site id, made on first use and kept (None without a data
        directory, or one that cannot keep it); enrolling it is :meth:`_site`'s."""
        if self.settings is not None and self._site_id is None:
            from memstrata.api.sites import site_of

            self._site_id, self._site_new = site_of(self.settings.data_dir)
        return self._site_id

    def _site(self) -> str | None:
        """This data directory's site id, enrolled in the store now (None without a data
        directory, or one that cannot keep it or be enrolled)."""
        site = self._site_of_dir()
        return site if site is not None and self._enrol(site) is not None else None

    def _enrol(self, site: str, *, swept: datetime | None = None) -> bool | None:
        """Enrol this data directory (see :meth:`RecordStore.enrol_site`): None when it
        cannot be, else whether the store did not know it before."""
        from memstrata.api.sites import holds_copies, site_label

        assert self.settings is not None
        # a directory with copies from before (an id it kept, or one made to replace a damaged
        # file) that the store does not know (retired while in use) applies the whole journal
        returning = not self._site_new and holds_copies(self.settings)
        try:
            unknown = self.store.enrol_site(
                site, site_label(self.settings.data_dir), swept=swept, returning=returning
            )
        except (StoreError, BusyError) as exc:  # read-only, or busy: noted on a later turn
            # another process writing is no fault: the next opening or sweep enrols it
            quiet = self._enrol_failed or isinstance(exc, BusyError)
            level = logging.INFO if quiet else logging.WARNING
            self._enrol_failed = True
            log.log(
                level,
                "data directory %s not enrolled in the store (forgets made elsewhere reach "
                "it once it is): %s",
                self.settings.data_dir,
                exc,
            )
            return None
        self._site_new = False  # enrolled: any copies it holds from now on are known
        return unknown

    def _site_wait(self) -> timedelta:
        if self.settings is None:
            return SITE_WAIT
        return timedelta(hours=self.settings.erasure_wait_h)

    def _applied(self, record: ErasureRecord) -> bool:
        """Whether this data directory has nothing left to erase of ``record``."""
        return record.done or (self._site_id is not None and self._site_id in record.sites)

    def _erase_texts(self, scope: Scope, target: str, texts: Sequence[str]) -> None:
        """Erase the copies of ``texts`` outside the store once the store no longer holds
        them (bullets deleted on request): journalled as an erasure of no record, so that
        every data directory sharing the store erases its own (see ``ForgettingMixin``)."""

        if not texts:
            return
        erasure = Erasure(
            target=target[:200], reason=DeleteReason.USER_REQUEST.value, texts=tuple(texts)
        )
        self._finish(self.store.erase(scope, erasure))

    def _prove_erased(
        self, episode_ids: Sequence[str], texts: Collection[str], *, user: str
    ) -> None:
        """Once the store change is final (nothing in the store holds ``texts`` any more but
        what legitimately still does): the proof of every holder that waits for it (the
        database's log checkpointed into its file and both scanned for ``texts``, the user's
        saved indexes scanned). Raises :class:`StoreError` naming each file that keeps a
        copy."""
        left = prove_erased(self._copy_holders(), Erasing(user, tuple(episode_ids), texts))
        if left:
            raise StoreError(_left_message(episode_ids, left))

    def _embeds_turns_alone(self) -> bool:
        """Whether the embedder (or the one the settings describe, if none is built yet)
        embeds each turn of a context view alone (a pooled model of a blend)."""
        from memstrata.embed.blend import embeds_turns_alone
        from memstrata.settings import BlendEmbedderSettings, load_settings

        if self._embedder is not None:
            return embeds_turns_alone(self._embedder)
        chosen = (self.settings or load_settings()).embedder
        return isinstance(chosen, BlendEmbedderSettings) and any(chosen.pooled_context)

    def _derived_texts(self, episodes: Sequence[Episode]) -> set[str]:
        """The turns' texts and every text the index embeds with them (each dense view of
        each turn, and of the turns after it that have it as context), worked out from their
        sessions in the store; call it before the turns are deleted, or pass them deleted."""
        from memstrata.index.config import RankingConfig
        from memstrata.index.views import embedded_texts

        alone = self._embeds_turns_alone()

        sessions: dict[tuple[Scope, str], dict[str, Episode]] = {}
        for episode in episodes:
            sessions.setdefault((episode.scope, episode.session_id), {})[episode.id] = episode
        out = {e.text for e in episodes}
        for (scope, session_id), gone in sessions.items():
            turns = {
                e.id: e
                for e in self.store.iter_episodes(scope, EpisodeFilter(session_id=session_id))
                if e.scope == scope
            }
            turns.update(gone)
            out |= embedded_texts(
                list(turns.values()),
                gone,
                self._ranking or RankingConfig(),
                turns_alone=alone,
            )
        return out


def _left_message(episode_ids: Sequence[str], left: Sequence[str]) -> str:
    return f"{', '.join(episode_ids) or 'the item'} was deleted, but copies are left: " + "; ".join(
        left
    )


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
