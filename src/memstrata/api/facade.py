"""The facade: :class:`Memory`, the one entry point the CLI, HTTP and MCP front-ends call.

Synchronous and thread-safe (the store serialises its own access). Every method takes the
scope it acts in; a bare string is taken as a user id. The behaviour lives in one service per
concern (``memory.capture``, ``memory.docs``, ``memory.records``, ``memory.imports``,
``memory.browse``, ``memory.keys``; docs/adr/0017-services-of-the-facade.md), each method here
handing its call on with the service's full signature, so that ``Memory`` reads as the table
of contents of the API (which is why this module is long: most of its lines are those
signatures and their one-line documentation). Search, serving and the sample memory are still
here, and curation, audit and forgetting still mixins, until they become services too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from memstrata import telemetry
from memstrata.api.audit import AuditMixin
from memstrata.api.common import (
    IngestReport,
    ListKind,
    Record,
    ScopeLike,
    TurnLike,
    as_scope,
    document_passages,
    time_of,
)
from memstrata.errors import InvalidInputError
from memstrata.model import (
    Category,
    Document,
    DocumentKind,
    Episode,
    EpisodeFilter,
    Fact,
    FactFilter,
    Granularity,
    Identity,
    ItemVersion,
    JsonValue,
    Profile,
    Scope,
    ScopeSummary,
    SearchFilter,
    SearchHit,
    SearchHits,
    SessionSummary,
    Stats,
    When,
)
from memstrata.ports import Clock, Embedder, RecordStore
from memstrata.settings import DEFAULT_INDEX_MEMORY_MB, Settings, load_settings

#: topic documents a recall by meaning considers (the best of a topic search)
_NEAR_CANDIDATES: Final = 5

if TYPE_CHECKING:
    from memstrata.api.browse import FactView, UserSummary, Validity
    from memstrata.api.keys import KeyService
    from memstrata.context import Context
    from memstrata.curate.queue import DebounceQueue
    from memstrata.document.format import Document as CuratedDocument
    from memstrata.document.ops import Operation
    from memstrata.document.service import DocPreview, DocumentService
    from memstrata.importers import ImportBatch
    from memstrata.index.config import RankingConfig
    from memstrata.index.indexer import BackgroundIndexer
    from memstrata.index.leader import ModelLock
    from memstrata.index.manager import IndexManager
    from memstrata.index.scope_index import UserIndex
    from memstrata.layers import FactCache, Recall, WakeUp


class Memory(AuditMixin):
    """Long-term memory for agents: capture, curate, serve.

    ``Memory.open()`` uses the settings (data directory, trace); tests and embedders can pass
    their own ``store``, ``trace`` and ``clock``.
    """

    @classmethod
    def open(
        cls,
        data_dir: str | Path | None = None,
        *,
        settings: Settings | None = None,
        clock: Clock | None = None,
        embedder: Embedder | None = None,
        ranking: RankingConfig | None = None,
        store_url: str | None = None,
    ) -> Memory:
        """Open (creating if needed) the memory in ``data_dir``: its records in the SQLite
        file there, or in the store ``store_url`` names (``sqlite:///path``,
        ``postgresql://...``, ``mysql://...``; over the settings' ``store_url``)."""
        from memstrata.store.opening import open_store
        from memstrata.store.sqlite import SqliteStore
        from memstrata.trace import JsonlTrace

        settings = settings or load_settings(data_dir=data_dir)
        from memstrata.private import owner_only_tree

        owner_only_tree(settings.data_dir)  # a data directory made before: the owner's alone
        if store_url is not None:
            from pydantic import SecretStr

            settings = settings.model_copy(update={"store_url": SecretStr(store_url)})
        store: RecordStore
        if settings.store_url is None:
            store = SqliteStore(settings.db_path, clock=clock)
        else:
            store = open_store(settings.store_url.get_secret_value(), clock=clock)
        trace = JsonlTrace(settings.trace_dir, clock=clock) if settings.trace else None
        memory = cls(
            store, trace=trace, clock=clock, settings=settings, embedder=embedder, ranking=ranking
        )
        # what a failure or a crash left of a deletion; opening never waits for a writer
        memory.finish_erasures(wait=False)
        return memory

    @property
    def embedder(self) -> Embedder:
        """The embedder (built from the settings on first use, cached by content hash); one
        given to :meth:`open` is used with each of its models bounded to what it reads."""
        with self._index_lock:
            if self._embedder is None:
                from memstrata.embed import create_embedder
                from memstrata.embed.cache import with_cache

                settings = self.settings or load_settings()
                self._embedder = with_cache(
                    create_embedder(settings.embedder), settings.embedding_cache_path
                )
            else:
                from memstrata.embed.bounded import bounded_embedder

                self._embedder = bounded_embedder(self._embedder)
            return self._embedder

    @property
    def keys(self) -> KeyService:
        """The API keys of this memory's store: create, list, revoke, authenticate."""
        from memstrata.api.keys import KeyService

        return KeyService(self.store, self.clock)

    @property
    def indexes(self) -> IndexManager:
        embedder = self.embedder
        with self._index_lock:
            if self._indexes is None:
                from memstrata.index.manager import IndexManager
                from memstrata.index.snapshot import SnapshotStore

                snapshots = None
                bound = DEFAULT_INDEX_MEMORY_MB
                if self.settings is not None:
                    snapshots = SnapshotStore(self.settings.index_dir)
                    bound = self.settings.index_memory_mb
                self._indexes = IndexManager(
                    self.store,
                    embedder,
                    self._ranking,
                    passages=document_passages,
                    snapshots=snapshots,
                    memory_bytes=bound * 2**20 or None,
                )
            return self._indexes

    def start_indexer(self, *, poll_s: float = 2.0) -> BackgroundIndexer:
        """Embed new records in a background thread as they arrive (from this process, or
        any other writing to the same store, seen within ``poll_s``), so that searches never
        wait for the model: until a record's vectors are in, it is found lexically and the
        search says so (:attr:`SearchHits.partial`). Work left pending by an earlier process is
        resumed. The server runs one; :meth:`close` stops it."""
        from memstrata.index.indexer import BackgroundIndexer

        manager, lock = self.indexes, self.model_lock
        with self._index_lock:
            if self._indexer is None:
                self._indexer = BackgroundIndexer(manager, poll_s=poll_s, model_lock=lock)
            indexer = self._indexer
        return indexer.start()

    @property
    def indexes_built(self) -> IndexManager | None:
        """The index manager if a search or the indexer made one (None: nothing built)."""
        return self._indexes

    @property
    def indexer(self) -> BackgroundIndexer | None:
        """The background indexer, once :meth:`start_indexer` started it."""
        return self._indexer

    @property
    def model_lock(self) -> ModelLock:
        """The lock that makes this process the one of its data directory that runs the
        embedding model (:mod:`memstrata.index.leader`)."""
        from memstrata.index.leader import ModelLock

        with self._index_lock:
            if self._model_lock is None:
                path = None if self.settings is None else self.settings.data_dir / "indexer.lock"
                self._model_lock = ModelLock(path)
            return self._model_lock

    def index(
        self,
        user: str | None = None,
        *,
        progress: Callable[[str, int, int], None] | None = None,
        stop: Callable[[], bool] | None = None,
        poll_s: float = 0.5,
    ) -> dict[str, int]:
        """Embed, in this thread, every record of ``user`` (or of every user) that has no
        dense vector yet; per user, how many were put in. ``progress(user, done, left)`` is
        called after each batch, ``stop()`` asked before each (what is left stays pending,
        and is resumed by the next call or a background indexer).

        When another process runs the model for this data directory (a server's indexer
        holds the model lock), this one does not embed the same records again: it takes
        their vectors from the shared cache as that process writes them (every ``poll_s``),
        and takes over if that process goes away."""
        lock = self.model_lock
        held_before = lock.held
        users = [user] if user is not None else self.store.users()
        done: dict[str, int] = {}
        try:
            for name in users:
                if stop is not None and stop():
                    break
                done[name] = self._index_user(name, lock, progress, stop, poll_s)
        finally:
            if not held_before and (self._indexer is None or not self._indexer.running):
                lock.release()
        return done

    def _index_user(
        self,
        user: str,
        lock: ModelLock,
        progress: Callable[[str, int, int], None] | None,
        stop: Callable[[], bool] | None,
        poll_s: float,
    ) -> int:
        index = self.indexes.index(user)
        if progress is not None:
            progress(user, 0, index.pending)
        done = 0

        def report(count: int, left: int) -> None:
            if progress is not None:
                progress(user, done + count, left)

        while index.pending and not (stop is not None and stop()):
            if lock.acquire():
                return done + self.indexes.embed_pending(user, progress=report, stop=stop)
            found = self.indexes.fill_from_cache(user)  # the leading process's vectors
            index = self.indexes.index(user)
            if found:
                done += found
                report(0, index.pending)
            elif index.pending:
                time.sleep(poll_s)
        return done

    def pending(self, user: str) -> int:
        """How many of the user's records wait for their dense vectors (building the index)."""
        return self.indexes.index(user).pending

    def start_auto_curation(self, delay_s: float = 30.0) -> DebounceQueue:
        """Curate each thread once it has been quiet for ``delay_s`` (:meth:`curate_quiet`):
        its new turns extracted in the thread, the user's memory consolidated where it is
        (one essentials document, profile and set of topics per user, not one per thread),
        each step a run marked ``auto`` in :attr:`runs`. A scope a run holds is tried again
        after the delay; a failed run is recorded and logged, and the queue goes on."""
        from memstrata.curate.queue import DebounceQueue

        if self._queue is None:
            self._queue = DebounceQueue(self.curate_quiet, delay_s=delay_s, clock=self.clock)
            self._queue.start()
        return self._queue

    def close(self) -> None:
        if self._sweep is not None:
            self._sweep.stop()
        if self._indexer is not None:
            self._indexer.stop()
        self.stop_runs()
        if self._queue is not None:
            self._queue.stop()
        if self._indexes is not None:
            self._indexes.close()  # saves what changed enough since its snapshot
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
        """Store turns verbatim as episodes (L3) and append them to the raw trace (see
        :meth:`memstrata.api.capture.CaptureService.remember`).

        ``turns`` is one turn or several: text, :class:`Turn` or a mapping with the same
        fields. All turns are checked before any is stored; the batch is stored whole.
        """
        return self.capture.remember(turns, scope, surface=surface, session_id=session_id)

    # curated documents (memory.docs) ----------------------------------------------
    @property
    def documents(self) -> DocumentService:
        """The document operations over the store (see :class:`DocumentService`)."""
        return self.docs.documents

    def doc(self, key: str, scope: ScopeLike) -> tuple[CuratedDocument, int]:
        """A curated document (``essentials`` or a topic key) and its version."""
        return self.docs.doc(key, scope)

    def doc_markdown(self, key: str, scope: ScopeLike) -> tuple[str, int]:
        """A curated document as markdown, and its version."""
        return self.docs.doc_markdown(key, scope)

    def preview_doc(
        self,
        key: str,
        scope: ScopeLike,
        change: str | Sequence[Operation],
        *,
        expected_version: int | None = None,
    ) -> DocPreview:
        """What a batch (operations, or the whole edited markdown) would do; writes nothing."""
        return self.docs.preview_doc(key, scope, change, expected_version=expected_version)

    def apply_doc(
        self, key: str, scope: ScopeLike, ops: Sequence[Operation], *, expected_version: int
    ) -> tuple[CuratedDocument, int]:
        """Apply a batch atomically against ``expected_version`` (compare-and-swap; see
        :meth:`memstrata.api.documents.DocumentsService.apply_doc`)."""
        return self.docs.apply_doc(key, scope, ops, expected_version=expected_version)

    def export_markdown(self, scope: ScopeLike, directory: str | Path) -> dict[str, Any]:
        """Write the scope's memory as markdown documents and JSONL (see :mod:`exchange`)."""
        return self.docs.export_markdown(scope, directory)

    def import_markdown(self, directory: str | Path, *, user: str | None = None) -> Scope:
        """Restore an exported directory into an empty scope (of ``user`` if given)."""
        return self.docs.import_markdown(directory, user=user)

    def identity(self, scope: ScopeLike) -> Identity:
        """The identity (L0)."""
        return self.docs.identity(scope)

    def set_identity(
        self, text: str, scope: ScopeLike, *, expected_version: int | None = None
    ) -> Identity:
        """Replace the identity (L0); see
        :meth:`memstrata.api.documents.DocumentsService.set_identity`."""
        return self.docs.set_identity(text, scope, expected_version=expected_version)

    def profile(self, scope: ScopeLike) -> Profile:
        """The profile."""
        return self.docs.profile(scope)

    def put_profile(self, profile: Profile, scope: ScopeLike) -> Profile:
        """Store a profile; ``profile.version`` must be the version it was read at."""
        return self.docs.put_profile(profile, scope)

    def ingest(
        self,
        source: str | Path | ImportBatch,
        user: str,
        *,
        fmt: str | None = None,
        dry_run: bool = False,
        all_branches: bool = False,
    ) -> IngestReport:
        """Import a file into ``user``: each conversation goes to thread ``<key>`` (see
        :meth:`memstrata.api.imports.ImportService.ingest`; the exports of other systems are
        imported idempotently, with a dry run)."""
        return self.imports.ingest(
            source, user, fmt=fmt, dry_run=dry_run, all_branches=all_branches
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
        rerank: bool = False,
        wait: bool | None = None,
    ) -> SearchHits:
        """Hybrid (lexical + dense) search of the scope's turns, sessions, facts or topics.

        Each hit carries its score components. The index follows every write, made here or
        by any other process, before it answers. With ``rerank`` the configured chat model
        reorders the best ``rerank_candidates`` hits (:mod:`memstrata.rerank`): the hits it
        picks come first, with an ``llm_rank`` component, whatever their scores.

        Records whose dense vectors are not computed yet are ranked lexically, and the
        answer counts them (``pending``, ``partial``), unless ``wait``: then they are embedded
        first, in this thread. ``wait=None`` (the default) waits only when no background
        indexer runs (:meth:`start_indexer`), since nothing else would embed them.
        """
        scope = as_scope(scope)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the search query is empty")
        self.check_size(query, "the search query")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 1000:
            raise InvalidInputError(f"k must be between 1 and 1000, got {k!r}")
        try:
            level = Granularity(granularity)
        except ValueError:
            raise InvalidInputError(
                f"unknown granularity {granularity!r}; expected one of "
                + ", ".join(g.value for g in Granularity)
            ) from None
        llm = self.llm if rerank else None
        if rerank and llm is None:
            raise InvalidInputError(
                "reranking needs a chat model: set the llm setting (e.g. MEMSTRATA_LLM__MODEL), "
                "or search without rerank"
            )
        from memstrata.index.query import build_query
        from memstrata.index.ranking import Ranker

        if filters is not None and not isinstance(filters, SearchFilter):
            raise InvalidInputError(f"filters must be a SearchFilter, not {type(filters).__name__}")
        filters = _in_utc(filters or SearchFilter())
        if wait is None:
            wait = self._indexer is None or not self._indexer.running
        elif not isinstance(wait, bool):
            raise InvalidInputError(f"wait must be true or false, not {type(wait).__name__}")
        index = self.indexes.index(scope.user)
        if wait and index.pending:  # through the manager: the vectors count toward a save
            self.indexes.embed_pending(scope.user)
            index = self.indexes.index(scope.user)
        plan = build_query(query, self.embedder, index.config)
        pool = k if llm is None else max(k, (self.settings or load_settings()).rerank_candidates)
        hits = Ranker(index).search(plan, scope, k=pool, granularity=level, filters=filters)
        if llm is None:
            return hits
        from memstrata.rerank import llm_reranker

        return SearchHits(llm_reranker(llm)(query, hits)[:k], pending=hits.pending)

    # recovery ----------------------------------------------------------------------
    def restore_from_trace(self, scope: ScopeLike, *, missing: bool = False) -> list[Episode]:
        """Restore the scope's episodes from the raw trace (verbatim, with their ids, times,
        threads and sessions) into this store, where the scope must be empty, or with
        ``missing`` only those the store lacks; what was restored. Deleted episodes left only
        tombstones and stay deleted."""
        from memstrata.doctor import restore_from_trace
        from memstrata.trace import JsonlTrace

        trace = self.trace
        if not isinstance(trace, JsonlTrace):
            trace = JsonlTrace((self.settings or load_settings()).trace_dir, clock=self.clock)
        return restore_from_trace(self.store, trace, as_scope(scope), missing=missing)

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
        """A ``<memory>`` block of L0 identity and L1: the essentials document as it stands
        (hand edits included), then the profile, preferences and the most important current
        facts it does not state, by topic, within ``budget`` tokens; says what was left out."""
        from memstrata.layers import wake_up

        served = wake_up(
            self.store,
            as_scope(scope),
            now=self.clock.now(),
            budget=budget,
            fall_back_to_user=fall_back_to_user,
            cache=self.fact_cache,
        )
        telemetry.record(telemetry.TOKENS_SERVED, served.tokens, call="wake_up")
        return served

    def recall(
        self, topic: str, scope: ScopeLike, *, budget: int = 1200, fall_back_to_user: bool = True
    ) -> Recall:
        """L2: the topic's document(s) with their citations and its most important facts,
        within ``budget`` tokens. Documents whose key or title names the topic come first;
        when none does, the document nearest to it in meaning (in English or Chinese), and
        none when nothing is near. A thread with no memory of its own uses its user's."""
        from memstrata.layers import recall, serving_scope

        served = recall(
            self.store,
            serving_scope(
                self.store, as_scope(scope), fall_back_to_user=fall_back_to_user, turns_count=True
            ),
            topic,
            now=self.clock.now(),
            budget=budget,
            cache=self.fact_cache,
            near=self._topics_near,
        )
        telemetry.record(telemetry.TOKENS_SERVED, served.tokens, call="recall")
        return served

    def _topics_near(self, topic: str, scope: Scope) -> list[str]:
        """The key of the scope's topic document nearest to ``topic`` in meaning, if any is
        near: of the best documents of a topic search, the one whose title and best bullets
        are nearest, when that reaches the calibrated bar of :mod:`memstrata.embed.nearness`."""
        from memstrata.embed.nearness import NEAR, nearness
        from memstrata.model import Layer

        hits = self.search(
            topic,
            scope,
            k=_NEAR_CANDIDATES,
            granularity=Granularity.TOPIC,
            filters=SearchFilter(layer=Layer.TOPICS),
        )
        keys: list[str] = []
        texts: list[list[str]] = []
        for hit in hits:
            doc = self.store.get_document(scope, DocumentKind.TOPIC, hit.topic or "")
            if doc is None or doc.scope != scope:
                continue  # a thread's document, when recalling for its user
            best = set(hit.bullets)
            keys.append(doc.key)
            texts.append(
                [str(doc.content.get("title", doc.key))]
                + [p.text for p in document_passages(doc) if p.id in best]
            )
        scored = sorted(zip(nearness(self.embedder, topic, texts), keys, strict=True))
        return [scored[-1][1]] if scored and scored[-1][0] >= NEAR else []

    def context(
        self, query: str, scope: ScopeLike, *, budget: int = 1000, fall_back_to_user: bool = True
    ) -> Context:
        """A ``<memory>`` block for ``query`` within ``budget`` tokens: routed, gathered from
        the layers, filled by relevance to the query (the layer order breaking ties within a
        band of similar relevance; the identity and the safety items always in), deduplicated,
        escaped; ``.explain()`` says why. A thread with no memory of its own uses its user's
        (unless ``fall_back_to_user`` is off)."""
        from memstrata.context import assemble
        from memstrata.index.query import build_query
        from memstrata.index.ranking import Ranker
        from memstrata.layers import serving_scope

        scope = serving_scope(
            self.store, as_scope(scope), fall_back_to_user=fall_back_to_user, turns_count=True
        )
        if not isinstance(query, str) or not query.strip():
            raise InvalidInputError("the query is empty")
        self.check_size(query, "the query")
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 50:
            raise InvalidInputError(
                f"a context budget is a whole number of at least 50 tokens, got {budget!r}"
            )

        def index(user: str) -> UserIndex:
            found = self.indexes.index(user)
            if found.pending and (self._indexer is None or not self._indexer.running):
                self.indexes.embed_pending(user)  # as a search does: nothing else would
                found = self.indexes.index(user)
            return found

        def search(q: str, s: Scope, k: int, level: Granularity) -> list[SearchHit]:
            if level != Granularity.TOPIC:
                return self.search(q, s, k=k, granularity=level)
            found = index(s.user)  # bullets one by one, each with its own score
            plan = build_query(q, self.embedder, found.config)
            return Ranker(found).search(
                plan, s, k=k, granularity=level, filters=SearchFilter(), passages=True
            )

        def score(q: str, s: Scope, texts: Sequence[str]) -> list[float] | None:
            found = index(s.user)
            plan = build_query(q, self.embedder, found.config)
            return Ranker(found).score_texts(plan, s, texts, Granularity.TURN)

        llm = self.llm
        router = None
        if llm is not None:
            from memstrata.context import llm_router

            router = llm_router(llm)
        served = assemble(
            query, scope, self.store, search, budget=budget, router=router, scorer=score
        )
        telemetry.record(telemetry.TOKENS_SERVED, served.tokens, call="context")
        return served

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
                slot=item.get("slot"),
            )
        if not self.identity(scope).text:
            self.set_identity(
                "I am a helpful assistant for a bilingual (English/中文) software engineer. "
                "I remember their projects and preferences and say where each memory comes from.",
                scope,
            )
        self.consolidate(scope, use_llm=False)  # the sample shows its documents, by rules
        return report

    # browsing (memory.browse) -----------------------------------------------------
    def users(
        self, allowed: Collection[str] | None = None, *, after: str | None = None, limit: int = 100
    ) -> list[UserSummary]:
        """The users that hold memory (see :meth:`memstrata.api.browse.BrowseService.users`)."""
        return self.browse.users(allowed, after=after, limit=limit)

    def scopes(self, user: ScopeLike) -> list[ScopeSummary]:
        """The threads and agents of a user."""
        return self.browse.scopes(user)

    def sessions(self, scope: ScopeLike) -> list[SessionSummary]:
        """The sessions of a scope."""
        return self.browse.sessions(scope)

    def session(self, session_id: str, scope: ScopeLike) -> list[Episode]:
        """The turns of one session."""
        return self.browse.session(session_id, scope)

    def facts(
        self,
        scope: ScopeLike,
        *,
        category: str | None = None,
        topic: str | None = None,
        valid: Validity = "current",
        after: str | None = None,
        limit: int = 100,
        slot: str | None = None,
        slot_kind: str | None = None,
    ) -> list[FactView]:
        """Facts by category, topic and validity, each with what replaced it (see
        :meth:`memstrata.api.browse.BrowseService.facts`)."""
        return self.browse.facts(
            scope,
            category=category,
            topic=topic,
            valid=valid,
            after=after,
            limit=limit,
            slot=slot,
            slot_kind=slot_kind,
        )

    # records (memory.records) -----------------------------------------------------
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
        when: When | Mapping[str, Any] | None = None,
        slot: str | None = None,
        value: str | None = None,
    ) -> Fact:
        """File a fact by hand (see :meth:`memstrata.api.records.RecordsService.add_fact`)."""
        return self.records.add_fact(
            text,
            scope,
            category=category,
            confidence=confidence,
            importance=importance,
            topic=topic,
            sources=sources,
            valid_from=valid_from,
            supersede=supersede,
            when=when,
            slot=slot,
            value=value,
        )

    def get(self, item_id: str, scope: ScopeLike) -> Record:
        """An episode, fact or document by id."""
        return self.records.get(item_id, scope)

    def update(
        self,
        item_id: str,
        scope: ScopeLike,
        *,
        expected_version: int | None = None,
        **changes: Any,
    ) -> Fact | Document:
        """Change a fact or a document (see
        :meth:`memstrata.api.records.RecordsService.update`)."""
        return self.records.update(item_id, scope, expected_version=expected_version, **changes)

    def history(self, item_id: str, scope: ScopeLike) -> list[ItemVersion]:
        """Every version of an item, oldest first."""
        return self.records.history(item_id, scope)

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
        """A page of a scope's records of one kind (see
        :meth:`memstrata.api.records.RecordsService.list`)."""
        return self.records.list(
            scope,
            kind,
            limit=limit,
            after=after,
            episode_filter=episode_filter,
            fact_filter=fact_filter,
        )

    def stats(self, scope: ScopeLike) -> Stats:
        """How many records of each kind a scope holds."""
        return self.records.stats(scope)

    def sizes(self, scope: ScopeLike) -> dict[str, int]:
        """The bytes of text a scope holds, per kind."""
        return self.records.sizes(scope)

    def record_counts(self) -> dict[str, int]:
        """How many records of each kind the whole store holds."""
        return self.records.record_counts()

    def export(self, scope: ScopeLike) -> Iterator[dict[str, JsonValue]]:
        """Every record of a scope as JSON objects (see
        :meth:`memstrata.api.records.RecordsService.export`)."""
        return self.records.export(scope)


def _in_utc(filters: SearchFilter) -> SearchFilter:
    """``filters`` with its time range in UTC (a time without a zone is taken as UTC)."""
    if filters.since is None and filters.until is None:
        return filters
    return replace(
        filters,
        since=None if filters.since is None else time_of("since", filters.since),
        until=None if filters.until is None else time_of("until", filters.until),
    )


__all__ = ["Memory"]
