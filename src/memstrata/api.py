"""The facade: :class:`Memory`, the one entry point the CLI, HTTP and MCP front-ends call.

Synchronous and thread-safe (the store serialises its own access). Every method takes the
scope it acts in; a bare string is taken as a user id.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from importlib import resources
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any, Final, Literal

from memstrata import importers
from memstrata.codec import episode_to_json, parse_time, record_to_json
from memstrata.errors import ConflictError, InvalidInputError, StoreError
from memstrata.ids import kind_of, new_id
from memstrata.importers import ImportBatch
from memstrata.model import (
    Category,
    DeleteReason,
    Document,
    DocumentKind,
    Episode,
    EpisodeFilter,
    Fact,
    FactFilter,
    Granularity,
    HistoryOp,
    Identity,
    ItemVersion,
    JsonValue,
    Profile,
    Role,
    Scope,
    SearchFilter,
    SearchHit,
    Stats,
    Turn,
    utc,
)
from memstrata.ports import LLM, Clock, Embedder, Extractor, RecordStore, SystemClock, TraceSink
from memstrata.settings import Settings, load_settings

if TYPE_CHECKING:
    from memstrata.consolidate import ConsolidationReport
    from memstrata.context import Context
    from memstrata.curate.pipeline import ExtractReport
    from memstrata.curate.queue import DebounceQueue
    from memstrata.curate.runs import RunRegistry
    from memstrata.document.format import Document as CuratedDocument
    from memstrata.document.ops import Operation
    from memstrata.document.service import DocPreview, DocumentService
    from memstrata.index.config import RankingConfig
    from memstrata.index.manager import IndexManager
    from memstrata.layers import FactCache, Recall, WakeUp

log = logging.getLogger(__name__)

TurnLike = str | Turn | Mapping[str, Any]
ScopeLike = Scope | str
Record = Episode | Fact | Document
ListKind = Literal["episode", "fact", "document"]

_FACT_FIELDS: Final = frozenset(
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
_TURN_KEYS: Final = frozenset({"text", "speaker", "role", "time", "session_id", "metadata"})


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
        unknown = sorted(set(value) - _TURN_KEYS)
        if unknown:
            raise InvalidInputError(f"unknown turn field(s): {', '.join(unknown)}")
        if "text" not in value:
            raise InvalidInputError("a turn needs a 'text'")
        try:
            role = Role(value.get("role") or "user")
        except ValueError:
            raise InvalidInputError(f"unknown role {value.get('role')!r}") from None
        time = value.get("time")
        if isinstance(time, str):
            time = parse_time(time)
        return Turn(
            text=value["text"],
            speaker=value.get("speaker"),
            role=role,
            time=time,
            session_id=value.get("session_id"),
            metadata=dict(value.get("metadata") or {}),
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
    """What a delete removed: the item and what cascaded from it."""

    deleted: tuple[str, ...]
    cascaded: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, JsonValue]:
        return {"deleted": list(self.deleted), "cascaded": list(self.cascaded)}


class Memory:
    """Long-term memory for agents: capture, curate, serve.

    ``Memory.open()`` uses the settings (data directory, trace); tests and embedders can pass
    their own ``store``, ``trace`` and ``clock``.
    """

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

    @classmethod
    def open(
        cls,
        data_dir: str | Path | None = None,
        *,
        settings: Settings | None = None,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        ranking: RankingConfig | None = None,
    ) -> Memory:
        """Open (creating if needed) the embedded memory in ``data_dir``."""
        from memstrata.store.sqlite import SqliteStore
        from memstrata.trace import JsonlTrace

        settings = settings or load_settings(data_dir=data_dir)
        store = SqliteStore(settings.db_path, clock=clock)
        trace = JsonlTrace(settings.trace_dir, clock=clock) if settings.trace else None
        return cls(
            store, trace=trace, clock=clock, settings=settings, embedder=embedder, ranking=ranking
        )

    @property
    def embedder(self) -> Embedder:
        """The embedder (built from the settings on first use, cached by content hash)."""
        with self._index_lock:
            if self._embedder is None:
                from memstrata.embed import create_embedder
                from memstrata.embed.cache import with_cache

                settings = self.settings or load_settings()
                self._embedder = with_cache(
                    create_embedder(settings.embedder), settings.embedding_cache_path
                )
            return self._embedder

    @property
    def indexes(self) -> IndexManager:
        embedder = self.embedder
        with self._index_lock:
            if self._indexes is None:
                from memstrata.index.manager import IndexManager

                self._indexes = IndexManager(self.store, embedder, self._ranking)
            return self._indexes

    def start_auto_curation(self, delay_s: float = 30.0) -> DebounceQueue:
        """Extract and consolidate each thread once it has been quiet for ``delay_s``."""
        from memstrata.curate.queue import DebounceQueue

        def curate(scope: Scope) -> None:
            self.extract(scope)
            self.consolidate(scope)

        if self._queue is None:
            self._queue = DebounceQueue(curate, delay_s=delay_s, clock=self.clock)
            self._queue.start()
        return self._queue

    def close(self) -> None:
        if self._queue is not None:
            self._queue.stop()
        if self._embedder is not None and hasattr(self._embedder, "close"):
            self._embedder.close()
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # capture ---------------------------------------------------------------------
    def remember(
        self,
        turns: TurnLike | Iterable[TurnLike],
        scope: ScopeLike,
        *,
        surface: str = "chat",
        session_id: str | None = None,
    ) -> list[Episode]:
        """Store turns verbatim as episodes (L3) and append them to the raw trace.

        ``turns`` is one turn or several: text, :class:`Turn` or a mapping with the same
        fields. All turns are checked before any is stored; the batch is stored whole.
        """
        scope = as_scope(scope)
        items = [turns] if isinstance(turns, str | Turn | Mapping) else list(turns)
        if not items:
            raise InvalidInputError("no turns to remember")
        parsed = [self._capture_text(as_turn(t), scope) for t in items]
        episodes = self._episodes(parsed, scope, surface=surface, session_id=session_id)
        self.store.add_episodes(scope, episodes)
        self._capture(surface, episodes)
        if self._queue is not None:
            self._queue.touch(scope)
        return episodes

    def _capture_text(self, turn: Turn, scope: Scope) -> Turn:
        """Secrets are scrubbed from verbatim capture unless configured off."""
        if self.settings is not None and not self.settings.scrub_capture:
            return turn
        text = _scrubbed(turn.text, scope, secrets_only=True)
        return turn if text == turn.text else replace(turn, text=text)

    def _episodes(
        self, turns: Sequence[Turn], scope: Scope, *, surface: str, session_id: str | None
    ) -> list[Episode]:
        if not surface or not surface.strip():
            raise InvalidInputError("surface must not be empty")
        now = self.clock.now()
        default_session = session_id or now.strftime("%Y-%m-%d")
        return [
            Episode(
                id=new_id("ep"),
                scope=scope,
                surface=surface,
                session_id=t.session_id or default_session,
                speaker=t.speaker if t.speaker is not None else t.role.value,
                role=t.role,
                text=t.text,
                time=utc(t.time) if t.time is not None else now,
                metadata=dict(t.metadata),
            )
            for t in turns
        ]

    def _capture(self, surface: str, episodes: Sequence[Episode]) -> None:
        if self.trace is None:
            return
        events: list[Mapping[str, JsonValue]] = [
            {"event": "episode", **episode_to_json(e)} for e in episodes
        ]
        self.trace.append(surface, events)

    def ingest(
        self,
        source: str | Path | ImportBatch,
        user: str,
        *,
        fmt: str | None = None,
    ) -> IngestReport:
        """Import a conversation file; each conversation goes to thread ``<key>`` of ``user``.

        The whole file is parsed and checked before anything is stored.
        """
        started = perf_counter()
        if isinstance(source, ImportBatch):
            batch = source
        else:
            if fmt is None:
                raise InvalidInputError(
                    "name the import format (locomo, longmemeval, madial or jsonl)"
                )
            batch = importers.load(source, fmt)
        prepared = []
        for conv in batch.conversations:
            scope = Scope(user, conv.key)
            prepared.append(
                (
                    scope,
                    self._episodes(
                        [self._capture_text(t, scope) for t in conv.turns],
                        scope,
                        surface="import",
                        session_id=None,
                    ),
                )
            )
        everything = [e for _, episodes in prepared for e in episodes]
        self.store.add_episodes(Scope(user), everything)  # one transaction: all or nothing
        self._capture("import", everything)
        return IngestReport(
            source=batch.source,
            format=batch.format,
            conversations=len(batch.conversations),
            turns=batch.turn_count,
            questions=batch.question_count,
            scopes=tuple(s for s, _ in prepared),
            seconds=perf_counter() - started,
        )

    # search ----------------------------------------------------------------------
    def search(
        self,
        query: str,
        scope: ScopeLike,
        *,
        k: int = 10,
        granularity: Granularity | str = Granularity.TURN,
        filters: SearchFilter | None = None,
    ) -> list[SearchHit]:
        """Hybrid (lexical + dense) search of the scope's turns, sessions or facts.

        Each hit carries its score components. The index follows every write, made here or
        by any other process, before it answers.
        """
        scope = as_scope(scope)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the search query is empty")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
            raise InvalidInputError(f"k must be between 1 and 1000, got {k!r}")
        try:
            level = Granularity(granularity)
        except ValueError:
            raise InvalidInputError(
                f"unknown granularity {granularity!r}; expected turn, session or fact"
            ) from None
        from memstrata.index.query import build_query

        index = self.indexes.index(scope.user)
        plan = build_query(query, self.embedder, index.config)
        return index.search(plan, scope, k=k, granularity=level, filters=filters or SearchFilter())

    # facts -----------------------------------------------------------------------
    def add_fact(
        self,
        text: str,
        scope: ScopeLike,
        *,
        category: Category | str = Category.OTHER,
        confidence: float = 1.0,
        importance: float = 0.5,
        topic: str | None = None,
        sources: Sequence[str] = (),
        valid_from: datetime | None = None,
        supersede: bool = True,
    ) -> Fact:
        """Add a fact. With no ``sources`` the statement itself is captured as an episode
        (surface ``manual``) and cited, so every fact keeps its provenance. A fact that
        contradicts a current one (same subject, same single-valued slot, another value)
        supersedes it: the old fact is closed, not deleted."""
        scope = as_scope(scope)
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("fact text is empty")
        category = _category(category)
        text = _scrubbed(text, scope, secrets_only=False)
        _check_unit("confidence", confidence)
        _check_unit("importance", importance)
        if not sources:
            sources = [
                self.remember(Turn(text=text, role=Role.USER), scope, surface="manual")[0].id
            ]
        now = self.clock.now()
        fact = Fact(
            id=new_id("fa"),
            scope=scope,
            text=text.strip(),
            category=category,
            confidence=float(confidence),
            importance=float(importance),
            topic=topic,
            sources=tuple(sources),
            valid_from=utc(valid_from) if valid_from else now,
            valid_to=None,
            superseded_by=None,
            created_at=now,
            updated_at=now,
        )
        stored = self.store.add_fact(scope, fact)
        if supersede:
            from memstrata.curate.supersede import supersede_older

            supersede_older(self.store, scope, stored, now=now)
        return stored

    # reading and changing any item ------------------------------------------------
    def get(self, item_id: str, scope: ScopeLike) -> Record:
        """The episode, fact or document with this id, if the scope contains it."""
        scope = as_scope(scope)
        kind = kind_of(item_id)
        if kind == "episode":
            return self.store.get_episode(scope, item_id)
        if kind == "fact":
            return self.store.get_fact(scope, item_id)
        if kind == "document":
            return self.store.get_document_by_id(scope, item_id)
        raise InvalidInputError(f"{item_id} names a {kind}, which is not a stored record")

    def update(
        self,
        item_id: str,
        scope: ScopeLike,
        *,
        expected_version: int | None = None,
        **changes: Any,
    ) -> Fact | Document:
        """Change a fact's fields or a document's ``content``.

        With ``expected_version`` the write is a strict compare-and-swap; without it the
        current version is read and the write retried once if another writer got in first.
        Episodes are verbatim and cannot be edited.
        """
        scope = as_scope(scope)
        kind = kind_of(item_id)
        if kind == "episode":
            raise InvalidInputError("episodes are verbatim and cannot be edited; delete it instead")
        if not changes:
            raise InvalidInputError("nothing to update")
        attempts = 1 if expected_version is not None else 2
        for attempt in range(attempts):
            try:
                if kind == "fact":
                    return self._update_fact(item_id, scope, expected_version, changes)
                if kind == "document":
                    return self._update_document(item_id, scope, expected_version, changes)
                raise InvalidInputError(f"{item_id} names a {kind}, which cannot be updated")
            except ConflictError:
                if attempt + 1 == attempts:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _update_fact(
        self, fact_id: str, scope: Scope, expected: int | None, changes: dict[str, Any]
    ) -> Fact:
        unknown = sorted(set(changes) - _FACT_FIELDS)
        if unknown:
            raise InvalidInputError(
                f"cannot update fact field(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(sorted(_FACT_FIELDS))}"
            )
        current = self.store.get_fact(scope, fact_id)
        values = dict(changes)
        if "category" in values:
            values["category"] = _category(values["category"])
        for name in ("confidence", "importance"):
            if name in values:
                _check_unit(name, values[name])
                values[name] = float(values[name])
        if "text" in values and (not isinstance(values["text"], str) or not values["text"].strip()):
            raise InvalidInputError("fact text is empty")
        if "sources" in values:
            values["sources"] = tuple(values["sources"])
        for name in ("valid_from", "valid_to"):
            if values.get(name) is not None:
                values[name] = utc(values[name])
        updated = current.evolve(**values, updated_at=self.clock.now())
        op = "supersede" if values.get("superseded_by") else "update"
        return self.store.update_fact(
            scope,
            updated,
            expected_version=current.version if expected is None else expected,
            op=op,
        )

    def _update_document(
        self, doc_id: str, scope: Scope, expected: int | None, changes: dict[str, Any]
    ) -> Document:
        if set(changes) != {"content"} or not isinstance(changes["content"], Mapping):
            raise InvalidInputError(
                "a document update takes exactly one field, content (a mapping)"
            )
        current = self.store.get_document_by_id(scope, doc_id)
        return self.store.put_document(
            current.scope,
            current.kind,
            current.key,
            changes["content"],
            expected_version=current.version if expected is None else expected,
        )

    def delete(
        self,
        item_id: str,
        scope: ScopeLike,
        *,
        reason: DeleteReason | str = DeleteReason.USER_REQUEST,
    ) -> DeleteReport:
        """Delete an item. Deleting an episode erases its raw trace line (a tombstone stays),
        removes it from the facts that cite it, and deletes facts left citing nothing (reason
        ``source-deleted``). Search indexes and the embedding cache drop their copies when they
        next read the change feed."""
        scope = as_scope(scope)
        why = _reason(reason)
        kind = kind_of(item_id)
        if kind == "fact":
            self.store.delete_fact(scope, item_id, reason=why.value)
            return DeleteReport(deleted=(item_id,))
        if kind == "document":
            self.store.delete_document(scope, item_id, reason=why.value)
            return DeleteReport(deleted=(item_id,))
        if kind != "episode":
            raise InvalidInputError(f"{item_id} names a {kind}, which cannot be deleted")
        self.store.get_episode(scope, item_id)  # NotFoundError when absent
        citing = self.store.facts_citing(scope, [item_id])
        self.store.delete_episodes(scope, [item_id])
        if self.trace is not None:
            try:
                self.trace.redact([item_id], why.value)
            except OSError as exc:
                raise StoreError(
                    f"{item_id} was deleted but its raw trace line could not be erased: {exc}"
                ) from exc
        cascaded = []
        for fact in citing:
            remaining = tuple(s for s in fact.sources if s != item_id)
            if remaining:
                self.store.update_fact(
                    scope,
                    fact.evolve(sources=remaining, updated_at=self.clock.now()),
                    expected_version=fact.version,
                )
            else:
                self.store.delete_fact(scope, fact.id, reason=DeleteReason.SOURCE_DELETED.value)
                cascaded.append(fact.id)
        return DeleteReport(deleted=(item_id,), cascaded=tuple(cascaded))

    def forget(self, item_id: str, scope: ScopeLike) -> DeleteReport:
        """Delete on request, with what derives from it: facts citing only a forgotten episode,
        and every curated bullet citing it or a forgotten fact's episodes (their history text
        is erased too), and the episode's raw trace line (see :meth:`delete`). The search
        indexes and the embedding cache drop theirs on their next read of the change feed."""
        from memstrata.document.ops import Operation, OpKind
        from memstrata.document.service import document_from_json

        scope = as_scope(scope)
        report = self.delete(item_id, scope, reason=DeleteReason.USER_REQUEST)
        forgotten = set(report.deleted) | set(report.cascaded)
        removed_bullets: list[str] = []
        for stored in self.store.list_documents(scope):
            if stored.kind not in (DocumentKind.TOPIC, DocumentKind.ESSENTIALS):
                continue
            ops = [
                Operation(OpKind.DELETE, b.id, reason=DeleteReason.USER_REQUEST)
                for sec in document_from_json(stored.content).sections
                for b in sec.bullets
                if any(c.episode_id in forgotten for c in b.citations) or b.id in forgotten
            ]
            if ops:
                self.apply_doc(stored.key, stored.scope, ops, expected_version=stored.version)
                removed_bullets.extend(op.id for op in ops)
        return DeleteReport(report.deleted, report.cascaded + tuple(removed_bullets))

    def history(self, item_id: str, scope: ScopeLike) -> list[ItemVersion]:
        """Every version of a fact or document, oldest first (episodes never change)."""
        scope = as_scope(scope)
        if kind_of(item_id) == "episode":
            episode = self.store.get_episode(scope, item_id)
            return [
                ItemVersion(
                    item_id, 1, HistoryOp.CREATE, episode.time, None, episode_to_json(episode)
                )
            ]
        return self.store.history(scope, item_id)

    def list(
        self,
        scope: ScopeLike,
        kind: ListKind = "episode",
        *,
        limit: int = 100,
        after: str | None = None,
        episode_filter: EpisodeFilter | None = None,
        fact_filter: FactFilter | None = None,
    ) -> list[Record]:
        """One page of the scope's records of one kind, in id order."""
        scope = as_scope(scope)
        if kind == "episode":
            return list(self.store.list_episodes(scope, episode_filter, after=after, limit=limit))
        if kind == "fact":
            return list(self.store.list_facts(scope, fact_filter, after=after, limit=limit))
        if kind == "document":
            docs = [d for d in self.store.list_documents(scope) if after is None or d.id > after]
            return list(sorted(docs, key=lambda d: d.id)[:limit])
        raise InvalidInputError(f"unknown kind {kind!r}; expected episode, fact or document")

    def stats(self, scope: ScopeLike) -> Stats:
        return self.store.stats(as_scope(scope))

    def export(self, scope: ScopeLike) -> Iterator[dict[str, JsonValue]]:
        """Every record of the scope as JSON objects: episodes, then facts, then documents."""
        scope = as_scope(scope)
        for episode in self.store.iter_episodes(scope):
            yield record_to_json(episode)
        for fact in self.store.iter_facts(scope):
            yield record_to_json(fact)
        for doc in self.store.list_documents(scope):
            yield record_to_json(doc)

    # curation --------------------------------------------------------------------
    @property
    def llm(self) -> LLM | None:
        """The chat model the settings name (``llm``), or None: everything works without."""
        settings = self.settings or load_settings()
        if settings.llm is None:
            return None
        from memstrata.llm.openai_compat import OpenAIChat

        return OpenAIChat.from_settings(settings.llm)

    def extractor(self) -> Extractor:
        """The configured extractor: the LLM one when a chat model is set, else the rules."""
        llm = self.llm
        if llm is None:
            from memstrata.curate.extract_rules import RuleExtractor

            return RuleExtractor()
        from memstrata.curate.extract_llm import LLMExtractor

        return LLMExtractor(llm)

    def extract(
        self,
        scope: ScopeLike,
        *,
        extractor: Extractor | None = None,
        episode_ids: Sequence[str] | None = None,
    ) -> ExtractReport:
        """Extract facts from the scope's episodes that no fact cites yet (or from the given
        episodes), through the guards, into the store. Failures are reported, never raised."""
        from memstrata.curate.pipeline import extract_into, unextracted

        scope = as_scope(scope)
        episodes = (
            self.store.get_episodes(scope, episode_ids)
            if episode_ids is not None
            else unextracted(self.store, scope)
        )
        from memstrata.curate.guards import DEFAULT_THRESHOLDS, GuardConfig

        settings = self.settings or load_settings()
        thresholds = {
            **DEFAULT_THRESHOLDS,
            **{Category(k): v for k, v in settings.confidence_thresholds.items()},
        }
        return extract_into(
            self.store,
            scope,
            extractor or self.extractor(),
            episodes,
            now=self.clock.now(),
            config=GuardConfig(thresholds=thresholds),
        )

    @property
    def runs(self) -> RunRegistry:
        """This process's curation runs (one per layer and key at a time)."""
        with self._index_lock:
            if self._runs is None:
                from memstrata.curate.runs import RunRegistry

                self._runs = RunRegistry(clock=self.clock)
            return self._runs

    def consolidate(
        self, scope: ScopeLike, *, mode: str = "update", remove: bool = False
    ) -> ConsolidationReport:
        """Consolidate curated documents. ``update``: facts new since the last run become
        bullets of their topic documents (and essentials), citing the same episodes, and
        superseded ones are removed. ``audit``: bullets are checked against their evidence and
        unsupported ones flagged (deleted with ``remove``). ``dedup``: near-duplicate bullets
        are merged, their citations united."""
        from memstrata.consolidate import Consolidator

        consolidator = Consolidator(self.store, self.documents, self.runs)
        scope = as_scope(scope)
        if mode == "update":
            return consolidator.update(scope)
        if mode == "audit":
            return consolidator.audit(scope, remove=remove)
        if mode == "dedup":
            return consolidator.dedup(scope)
        raise InvalidInputError(f"unknown mode {mode!r}; expected update, audit or dedup")

    # serving -----------------------------------------------------------------------
    @property
    def fact_cache(self) -> FactCache:
        """Current facts per scope, kept in step with the change feed (for wake_up, recall)."""
        with self._index_lock:
            if self._fact_cache is None:
                from memstrata.layers import FactCache

                self._fact_cache = FactCache(self.store)
            return self._fact_cache

    def wake_up(
        self, scope: ScopeLike, *, budget: int = 800, fall_back_to_user: bool = True
    ) -> WakeUp:
        """L0 identity and L1 essentials (profile, preferences, the most important current
        facts by topic) within ``budget`` tokens; says what was left out."""
        from memstrata.layers import wake_up

        return wake_up(
            self.store,
            as_scope(scope),
            now=self.clock.now(),
            budget=budget,
            fall_back_to_user=fall_back_to_user,
            cache=self.fact_cache,
        )

    def recall(self, topic: str, scope: ScopeLike, *, budget: int = 1200) -> Recall:
        """L2: the topic's document(s) with their citations and its most important facts,
        within ``budget`` tokens."""
        from memstrata.layers import recall

        return recall(
            self.store,
            as_scope(scope),
            topic,
            now=self.clock.now(),
            budget=budget,
            cache=self.fact_cache,
        )

    def context(
        self, query: str, scope: ScopeLike, *, budget: int = 1000, fall_back_to_user: bool = True
    ) -> Context:
        """A ``<memory>`` block for ``query`` within ``budget`` tokens: routed, gathered from
        the layers by priority, deduplicated, escaped; ``.explain()`` says why. A thread with
        no memory of its own uses its user's (unless ``fall_back_to_user`` is off)."""
        from memstrata.context import assemble
        from memstrata.layers import serving_scope

        scope = serving_scope(
            self.store, as_scope(scope), fall_back_to_user=fall_back_to_user, turns_count=True
        )
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the query is empty")
        if budget < 50:
            raise InvalidInputError("a context budget needs at least 50 tokens")

        def search(q: str, s: Scope, k: int, level: Granularity) -> list[SearchHit]:
            return self.search(q, s, k=k, granularity=level)

        llm = self.llm
        router = None
        if llm is not None:
            from memstrata.context import llm_router

            router = llm_router(llm)
        return assemble(query, scope, self.store, search, budget=budget, router=router)

    # curated documents (L1 essentials, L2 topics) ------------------------------------
    @property
    def documents(self) -> DocumentService:
        from memstrata.document.service import DocumentService

        def capture(text: str, scope: Scope) -> str:
            return self.remember(Turn(text=text), scope, surface="manual")[0].id

        def clean(text: str, scope: Scope) -> str:
            return _scrubbed(text, scope, secrets_only=False)

        return DocumentService(self.store, capture, clean)

    def doc(self, key: str, scope: ScopeLike) -> tuple[CuratedDocument, int]:
        """A curated document (``essentials`` or a topic key) and its version."""
        return self.documents.get(as_scope(scope), key)

    def doc_markdown(self, key: str, scope: ScopeLike) -> tuple[str, int]:
        return self.documents.markdown(as_scope(scope), key)

    def preview_doc(
        self,
        key: str,
        scope: ScopeLike,
        change: str | Sequence[Operation],
        *,
        expected_version: int | None = None,
    ) -> DocPreview:
        """What a batch (operations, or the whole edited markdown) would do; writes nothing."""
        return self.documents.plan(as_scope(scope), key, change, expected_version=expected_version)

    def apply_doc(
        self, key: str, scope: ScopeLike, ops: Sequence[Operation], *, expected_version: int
    ) -> tuple[CuratedDocument, int]:
        """Apply a batch atomically against ``expected_version`` (compare-and-swap)."""
        return self.documents.apply(as_scope(scope), key, ops, expected_version=expected_version)

    def export_markdown(self, scope: ScopeLike, directory: str | Path) -> dict[str, Any]:
        """Write the scope's memory as markdown documents and JSONL (see :mod:`exchange`)."""
        from memstrata.exchange import export_directory

        return export_directory(self.store, as_scope(scope), Path(directory))

    def import_markdown(self, directory: str | Path, *, user: str | None = None) -> Scope:
        """Restore an exported directory into an empty scope (of ``user`` if given)."""
        from memstrata.exchange import import_directory

        return import_directory(self.store, Path(directory), user=user)

    # L0 and L1 documents -----------------------------------------------------------
    def identity(self, scope: ScopeLike) -> Identity:
        doc = self.store.get_document(as_scope(scope), DocumentKind.IDENTITY, "identity")
        return Identity(text="") if doc is None else Identity.from_document(doc)

    def set_identity(
        self, text: str, scope: ScopeLike, *, expected_version: int | None = None
    ) -> Identity:
        scope = as_scope(scope)
        version = self.identity(scope).version if expected_version is None else expected_version
        doc = self.store.put_document(
            scope,
            DocumentKind.IDENTITY,
            "identity",
            Identity(text).to_content(),
            expected_version=version,
        )
        return Identity.from_document(doc)

    def profile(self, scope: ScopeLike) -> Profile:
        doc = self.store.get_document(as_scope(scope), DocumentKind.PROFILE, "profile")
        return Profile() if doc is None else Profile.from_document(doc)

    def put_profile(self, profile: Profile, scope: ScopeLike) -> Profile:
        """Store a profile; ``profile.version`` must be the version it was read at."""
        scope = as_scope(scope)
        from memstrata.citations import missing_episodes

        slots = [*profile.fields.values(), *profile.preferences.values()]
        for slot in slots:
            if not slot.sources:
                raise InvalidInputError(f"profile value {slot.value!r} cites no episode")
        missing = set(missing_episodes(self.store, scope, (s for x in slots for s in x.sources)))
        for slot in slots:
            if missing & set(slot.sources):
                raise InvalidInputError(
                    f"profile value {slot.value!r} cites episodes not in scope: "
                    + ", ".join(sorted(missing & set(slot.sources)))
                )
        doc = self.store.put_document(
            scope,
            DocumentKind.PROFILE,
            "profile",
            profile.to_content(),
            expected_version=profile.version,
        )
        return Profile.from_document(doc)

    # sample memory -----------------------------------------------------------------
    def is_empty(self) -> bool:
        return not self.store.users()

    def load_sample(self, user: str = "demo") -> IngestReport:
        """Load the small bilingual sample memory shipped with memstrata into ``user``."""
        package = resources.files("memstrata.sample")
        with resources.as_file(package.joinpath("sample.jsonl")) as path:
            report = self.ingest(path, user, fmt="jsonl")
        scope = Scope(user)
        episodes = list(self.store.iter_episodes(scope))
        for item in json.loads(package.joinpath("facts.json").read_text(encoding="utf-8")):
            cited = [episodes[i] for i in item["turns"]]
            self.add_fact(
                item["text"],
                cited[0].scope,
                category=item["category"],
                importance=item["importance"],
                topic=item["topic"],
                sources=[e.id for e in cited],
                valid_from=cited[-1].time,
            )
        if not self.identity(scope).text:
            self.set_identity(
                "I am a helpful assistant for a bilingual (English/中文) software engineer. "
                "I remember their projects and preferences and say where each memory comes from.",
                scope,
            )
        self.consolidate(scope)  # the sample shows its topic documents and essentials too
        return report


def _scrubbed(text: str, scope: Scope, *, secrets_only: bool) -> str:
    from memstrata.curate.scrubbing import scrub_for_storage

    return scrub_for_storage(text, scope, secrets_only=secrets_only)


def _category(value: Category | str) -> Category:
    try:
        return Category(value)
    except ValueError:
        raise InvalidInputError(
            f"unknown category {value!r}; expected one of {', '.join(c.value for c in Category)}"
        ) from None


def _reason(value: DeleteReason | str) -> DeleteReason:
    try:
        return DeleteReason(value)
    except ValueError:
        raise InvalidInputError(
            f"unknown delete reason {value!r}; expected one of "
            + ", ".join(r.value for r in DeleteReason)
        ) from None


def _check_unit(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise InvalidInputError(f"{name} must be a number between 0 and 1, got {value!r}")


__all__ = ["DeleteReport", "IngestReport", "Memory", "as_scope", "as_turn"]
