"""The search index of one user, and its upkeep: every episode, fact and curated bullet,
lexical and dense, with the columns filters read; adding, changing and removing entries (and
the turns that have them as context), dense vectors embedded in the background or taken from
the embedder's cache, and an index made again from a snapshot's parts. Ranking in it is
:mod:`memstrata.index.ranking`'s.

A user is the unit of isolation, so each user has an index of its own; thread and agent scopes
are applied inside it as masks. The index is derived from the records: :class:`UserIndex` is
filled from the store and told about every later write, and it remembers the store generation it
reflects so a stale one is noticed (see :class:`memstrata.index.manager.IndexManager`).

Searches and writes may come from many threads at once (the server's thread pool, the
auto-curation thread): every write holds the index's read-write lock alone, every search holds
it shared, so a search sees the index either before or after a write, never in the middle of
one. The parts (catalog, BM25, vectors) change nothing when read, except caches of immutable
values.

Curated documents (the L1 essentials and L2 topics) are indexed bullet by bullet: a
:data:`PassageReader`, given by the layer that knows the document format, turns a stored
document into its passages, each in its document's group; a topic search ranks documents by
their best bullets, as a session search ranks sessions by their best turns.
"""

from __future__ import annotations

import bisect
import itertools
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.blend import (
    BlendEmbedder,
    cached_windows,
    embed_windows,
    embeds_turns_alone,
)
from memstrata.index.bm25 import BM25Index
from memstrata.index.catalog import KIND_BULLET, KIND_EPISODE, KIND_FACT, Catalog, SlotInfo
from memstrata.index.config import RankingConfig
from memstrata.index.rwlock import ReadWriteLock
from memstrata.index.tokenize import tokenize
from memstrata.index.vectors import ExactVectorIndex
from memstrata.model import (
    Document,
    DocumentKind,
    Episode,
    Fact,
    Layer,
    Scope,
)
from memstrata.ports import CachingEmbedder, Embedder, ForgettingEmbedder

_SEP: Final = "\x1f"
#: joins a turn to the turns before it in the text of a context view
_JOIN: Final = "\n"
_DOC_LAYERS: Final = {DocumentKind.ESSENTIALS: Layer.ESSENTIALS, DocumentKind.TOPIC: Layer.TOPICS}


@dataclass(frozen=True, slots=True)
class Passage:
    """A searchable part of a curated document: one bullet (with its section heading)."""

    id: str
    text: str


#: turns a stored curated document into its passages
PassageReader = Callable[[Document], Sequence[Passage]]


def turn_text(episode: Episode) -> str:
    """What an episode contributes to the indexes: speaker, words, and any shared image."""
    text = f"{episode.speaker}: {episode.text}" if episode.speaker else episode.text
    caption = episode.metadata.get("blip_caption")
    if isinstance(caption, str) and caption and not text.endswith("]"):
        text = f"{text} [shares an image: {caption}]"
    return text


def session_key(scope: Scope, session_id: str) -> str:
    return _SEP.join((scope.thread or "", scope.agent or "", session_id))


def _doc_group(document_id: str) -> str:
    """The group (like a session) that a document's passages are ranked in."""
    return f"doc/{document_id}"


def epoch(value: datetime) -> float:
    """``value`` as seconds since the epoch (what the catalog's time column holds)."""
    return value.astimezone(UTC).timestamp()


class UserIndex:
    """One user's entries (catalog, BM25, a vector index per dense view), their sessions and
    documents, the entries whose dense vectors are pending, and the lock that orders writes
    and searches; searched through :class:`memstrata.index.ranking.Ranker`."""

    def __init__(
        self,
        user: str,
        embedder: Embedder,
        config: RankingConfig | None = None,
        passages: PassageReader | None = None,
        *,
        deferred: bool = False,
    ) -> None:
        self.user = user
        #: dense vectors not cached are left pending for :meth:`embed_pending` (a background
        #: indexer) instead of being computed in the write that adds the entry
        self.deferred = deferred
        #: slots whose dense vectors are still to be embedded, oldest first
        self._pending: dict[int, None] = {}
        #: held while a batch of pending entries is embedded and put in
        self._batching = threading.Lock()
        #: how a curated document becomes passages (None: documents are not indexed)
        self.passages = passages
        self.embedder = embedder
        self.config = config or RankingConfig()
        self.catalog = Catalog()
        self.lexical = BM25Index(k1=self.config.k1, b=self.config.b)
        #: one vector index per dense view (the turn with N previous turns as context)
        self.views = [
            ExactVectorIndex(
                embedder.dim,
                ann_threshold=self.config.ann_threshold,
                blocks=embedder.blocks if isinstance(embedder, BlendEmbedder) else None,
            )
            for _ in self.config.dense_views
        ]
        self.generation = -1
        #: writes hold it alone, searches shared (see the module's docstring)
        self.lock = ReadWriteLock()
        self._sessions: dict[str, list[tuple[float, str]]] = {}
        #: the passage ids of each indexed document
        self._documents: dict[str, set[str]] = {}

    def __len__(self) -> int:
        return len(self.catalog)

    @property
    def nbytes(self) -> int:
        """Memory held by the numeric arrays (vectors and filter columns)."""
        c = self.catalog
        arrays: list[NDArray[Any]] = [c.kind, c.time, c.archived, c.current, c.alive, *c.columns()]
        return sum(v.nbytes for v in self.views) + sum(int(a.nbytes) for a in arrays)

    # writes ----------------------------------------------------------------------
    def add_episodes(self, episodes: Sequence[Episode]) -> None:
        with self.lock.writing():
            self._add_episodes(episodes)

    def _add_episodes(self, episodes: Sequence[Episode]) -> None:
        touched: set[str] = set()
        for ep in episodes:
            if ep.scope.user != self.user:
                continue
            key = session_key(ep.scope, ep.session_id)
            info = SlotInfo(
                id=ep.id,
                kind=KIND_EPISODE,
                thread=ep.scope.thread,
                agent=ep.scope.agent,
                session_key=key,
                session_id=ep.session_id,
                speaker=ep.speaker,
                surface=ep.surface,
                time=epoch(ep.time),
                category=None,
                topic=None,
                archived=ep.archived,
                current=True,
                text=turn_text(ep),
            )
            if ep.id not in self.catalog.slots:
                bisect.insort(self._sessions.setdefault(key, []), (info.time, ep.id))
            self.catalog.put(info)
            touched.update(self._window(key, ep.id))
        self._reindex(touched)

    def add_facts(self, facts: Sequence[Fact]) -> None:
        """Index facts, or re-index them after an update (same id, same slot)."""
        with self.lock.writing():
            self._add_facts(facts)

    def _add_facts(self, facts: Sequence[Fact]) -> None:
        ids = []
        for fact in facts:
            if fact.scope.user != self.user:
                continue
            self.catalog.put(
                SlotInfo(
                    id=fact.id,
                    kind=KIND_FACT,
                    thread=fact.scope.thread,
                    agent=fact.scope.agent,
                    session_key=None,
                    session_id=None,
                    speaker=None,
                    surface=None,
                    time=epoch(fact.valid_from),
                    category=fact.category.value,
                    topic=fact.topic,
                    archived=False,
                    current=fact.valid_to is None,
                    text=fact.text,
                )
            )
            ids.append(fact.id)
        self._reindex(ids)

    def add_documents(self, documents: Sequence[Document]) -> None:
        """Index curated documents (essentials and topics) passage by passage, or re-index
        them after a change: passages gone from a document are removed, and only new or
        changed ones are embedded again."""
        if self.passages is None:
            return
        with self.lock.writing():
            self._add_documents(documents)

    def _add_documents(self, documents: Sequence[Document]) -> None:
        assert self.passages is not None
        changed: list[str] = []
        for doc in documents:
            layer = _DOC_LAYERS.get(doc.kind)
            if doc.scope.user != self.user or layer is None:
                continue
            parts = self.passages(doc)
            kept = {p.id for p in parts}
            self._remove(self._documents.pop(doc.id, set()) - kept)
            for part in parts:
                found = self.catalog.lookup(part.id)
                if found is not None and found[1].session_key != _doc_group(doc.id):
                    self._documents.get(str(found[1].session_id), set()).discard(part.id)
                self.catalog.put(
                    SlotInfo(
                        id=part.id,
                        kind=KIND_BULLET,
                        thread=doc.scope.thread,
                        agent=doc.scope.agent,
                        session_key=_doc_group(doc.id),
                        session_id=doc.id,
                        speaker=None,
                        surface=None,
                        time=epoch(doc.updated_at),
                        category=None,
                        topic=doc.key,
                        archived=False,
                        current=True,
                        text=part.text,
                        layer=layer.value,
                    )
                )
                if found is None or found[1].text != part.text:
                    changed.append(part.id)
            self._documents[doc.id] = kept
        self._reindex(changed)

    def remove_documents(self, ids: Iterable[str], *, keep: set[str] | None = None) -> None:
        """Drop documents' passages (all, or all but ``keep``)."""
        with self.lock.writing():
            for doc_id in ids:
                gone = self._documents.pop(doc_id, set()) - (keep or set())
                self._remove(gone)

    def remove(self, ids: Iterable[str]) -> None:
        """Drop items, re-index the turns that had them as context, and tell a caching
        embedder to forget every text embedded with them (see :meth:`_embedded_texts`)."""
        with self.lock.writing():
            self._remove(ids)

    def _remove(self, ids: Iterable[str]) -> None:
        touched: set[str] = set()
        embedded: set[str] = set()
        for item_id in ids:
            found = self.catalog.lookup(item_id)
            if found is None:
                continue
            slot, info = found
            embedded.update(self._embedded_texts(item_id))
            if info.kind == KIND_EPISODE and info.session_key is not None:
                turns = self._sessions[info.session_key]
                neighbours = self._window(info.session_key, item_id)
                for other in neighbours:
                    embedded.update(self._embedded_texts(other))
                turns.remove((info.time, item_id))
                touched.update(n for n in neighbours if n != item_id)
                if not turns:
                    del self._sessions[info.session_key]
            self.catalog.remove(item_id)
            self.lexical.remove(slot)
            for view in self.views:
                view.remove(slot)
            self._pending.pop(slot, None)
            touched.discard(item_id)
        self._reindex(touched)
        if embedded and isinstance(self.embedder, ForgettingEmbedder):
            live = set().union(*(self._embedded_texts(i) for i in touched))
            self.embedder.forget(sorted(embedded - live))

    def _embedded_texts(self, item_id: str) -> set[str]:
        """The texts embedded for an item's dense views (the turn with its context)."""
        found = self.catalog.lookup(item_id)
        if found is None:
            return set()
        return self._window_texts(self._windows(found[1]))

    def _window(self, key: str, item_id: str) -> list[str]:
        """The turns whose documents include ``item_id`` as context (and itself)."""
        turns = self._sessions.get(key, [])
        slot = self.catalog.slots[item_id]
        info = self.catalog.info[slot]
        assert info is not None
        i = bisect.bisect_left(turns, (info.time, item_id))
        return [t for _, t in turns[i : i + self.config.context_prev + 1]]

    def _context_infos(self, info: SlotInfo, prev: int) -> list[SlotInfo]:
        """The entry with up to ``prev`` turns before it in its session, in order."""
        if info.kind != KIND_EPISODE or info.session_key is None or prev == 0:
            return [info]
        turns = self._sessions[info.session_key]
        i = bisect.bisect_left(turns, (info.time, info.id))
        parts = []
        for _, other in turns[max(0, i - prev) : i + 1]:
            other_info = self.catalog.info[self.catalog.slots[other]]
            assert other_info is not None
            parts.append(other_info)
        return parts

    def _context_turns(self, info: SlotInfo, prev: int) -> list[str]:
        """The texts of an item and of up to ``prev`` turns before it in its session, oldest
        first."""
        return [part.text for part in self._context_infos(info, prev)]

    def _windows(self, info: SlotInfo) -> list[list[str]]:
        """What each dense view embeds for an item: its window of turns."""
        return [self._context_turns(info, prev) for prev in self.config.dense_views]

    def _window_texts(self, windows: list[list[str]]) -> set[str]:
        """The texts the embedder is given for an item's ``windows``: each joined, and the
        item's own text alone when a model pools (the turns before it are their own)."""
        texts = {_JOIN.join(w) for w in windows}
        if embeds_turns_alone(self.embedder):
            texts.update(w[-1] for w in windows)
        return texts

    def _lexical_documents(self, infos: Sequence[SlotInfo]) -> list[list[str]]:
        """The tokens of each entry's lexical document (the entry with its previous turns).
        Each text is tokenized once however many documents hold it: a token never spans the
        line break that joins them, so the tokens of the parts are those of the whole."""
        done: dict[str, list[str]] = {}
        out = []
        for info in infos:
            tokens: list[str] = []
            for part in self._context_infos(info, self.config.lexical_prev):
                found = done.get(part.id)
                if found is None:
                    found = done[part.id] = tokenize(part.text)
                tokens.extend(found)
            out.append(tokens)
        return out

    def _reindex(self, ids: Iterable[str]) -> None:
        """Index ``ids`` lexically now, and densely: with vectors the embedder has cached at
        once, the rest now (``deferred`` off) or queued as pending for :meth:`embed_pending`.
        A slot's old vectors are dropped first: until its new ones are in, it is pending."""
        cfg = self.config
        slots: list[int] = []
        infos: list[SlotInfo] = []
        for item_id in ids:
            found = self.catalog.lookup(item_id)
            if found is None:
                continue
            slot, info = found
            slots.append(slot)
            infos.append(info)
        if not slots:
            return
        self.lexical.add_many(slots, self._lexical_documents(infos))
        for view in self.views:
            for slot in slots:
                view.remove(slot)
        texts = [[self._context_turns(info, prev) for info in infos] for prev in cfg.dense_views]
        vectors, ready = self._cached(texts, len(slots))
        if not self.deferred and not ready.all():
            todo = np.flatnonzero(~ready)
            fresh = [embed_windows(self.embedder, [t[i] for i in todo], _JOIN) for t in texts]
            for view_vectors, new in zip(vectors, fresh, strict=True):
                view_vectors[todo] = new
            ready[:] = True
        chosen = np.flatnonzero(ready)
        if len(chosen):
            index = np.asarray(slots, dtype=np.int64)[chosen]
            for view, view_vectors in zip(self.views, vectors, strict=True):
                view.add(index, view_vectors[chosen])
        for i, slot in enumerate(slots):
            if ready[i]:
                self._pending.pop(slot, None)
            else:
                self._pending[slot] = None

    def _cached(
        self, texts: list[list[list[str]]], rows: int
    ) -> tuple[list[NDArray[np.float32]], NDArray[np.bool_]]:
        """For each view's windows of ``rows`` entries (``texts[view][row]``), the vectors
        the embedder has cached (zero rows where it has none), and the rows cached in every
        view (every row when there is no view; none when the embedder keeps no cache)."""
        if texts and not isinstance(self.embedder, CachingEmbedder):
            zeros = [np.zeros((rows, self.embedder.dim), np.float32) for _ in texts]
            return zeros, np.zeros(rows, dtype=bool)
        vectors: list[NDArray[np.float32]] = []
        ready = np.ones(rows, dtype=bool)
        for view_texts in texts:
            cached, hit = cached_windows(self.embedder, view_texts, _JOIN)
            vectors.append(cached)
            ready &= hit
        return vectors, ready

    def _work(self, slots: Iterable[int]) -> list[tuple[int, str, list[list[str]]]]:
        """The pending ``slots`` still indexed, each with its id and windows, read under the
        shared lock: what a batch embeds and :meth:`_install` checks again."""
        with self.lock.reading():
            return [
                (slot, info.id, self._windows(info))
                for slot in slots
                if slot in self._pending and (info := self.catalog.info[slot]) is not None
            ]

    # dense vectors in the background ---------------------------------------------
    @property
    def pending(self) -> int:
        """How many entries wait for their dense vectors (found lexically until then)."""
        return len(self._pending)

    def embed_pending(
        self,
        *,
        batch: int = 64,
        limit: int | None = None,
        progress: Callable[[int, int], None] | None = None,
        stop: Callable[[], bool] | None = None,
        landed: list[tuple[str, set[str]]] | None = None,
    ) -> int:
        """Embed pending entries, ``batch`` at a time (up to ``limit``); the count embedded.
        ``landed`` is given each entry put in, with the texts embedded for it (so a caller can
        tell which of them another process deleted meanwhile).

        The model runs outside the index's lock, so searches go on meanwhile; each batch's
        vectors go in under the write lock, for the entries whose text is still what was
        embedded (an entry changed or deleted meanwhile is left to its newer state, and the
        vectors of a deleted entry's texts are forgotten). ``progress(done, left)`` is called
        after each batch; ``stop()`` is asked before each."""
        done = 0
        while limit is None or done < limit:
            if stop is not None and stop():
                break
            size = batch if limit is None else min(batch, limit - done)
            with self._batching:
                with self.lock.reading():
                    first = list(itertools.islice(self._pending, size))
                work = self._work(first)
                if not work:
                    break
                fresh = [
                    embed_windows(self.embedder, [texts[v] for _, _, texts in work], _JOIN)
                    for v in range(len(self.views))
                ]
                done += self._install(work, fresh, landed)
            if progress is not None:
                progress(done, self.pending)
        return done

    def fill_from_cache(self, *, chunk: int = 2000) -> int:
        """Put in the vectors of pending entries that the embedder's cache now holds
        (embedded by another process), without running the model; the count put in."""
        if not isinstance(self.embedder, CachingEmbedder):
            return 0
        with self.lock.reading():
            slots = list(self._pending)
        done = 0
        for start in range(0, len(slots), chunk):
            with self._batching:
                work = self._work(slots[start : start + chunk])
                if not work:
                    continue
                vectors, ready = self._cached(
                    [[windows[v] for _, _, windows in work] for v in range(len(self.views))],
                    len(work),
                )
                rows = np.flatnonzero(ready)
                if len(rows):
                    done += self._install([work[r] for r in rows], [v[rows] for v in vectors])
        return done

    def _install(
        self,
        work: list[tuple[int, str, list[list[str]]]],
        fresh: list[NDArray[np.float32]],
        landed: list[tuple[str, set[str]]] | None = None,
    ) -> int:
        """Put embedded vectors in for the entries still as they were embedded (each, with
        its texts, added to ``landed``)."""
        kept: list[int] = []
        dropped: set[str] = set()
        with self.lock.writing():
            for row, (slot, item_id, texts) in enumerate(work):
                info = self.catalog.info[slot] if slot < len(self.catalog.info) else None
                current = None if info is None or info.id != item_id else self._windows(info)
                if current == texts and slot in self._pending:
                    kept.append(row)
                    self._pending.pop(slot, None)
                elif current is None:
                    dropped.update(self._window_texts(texts))
            if kept:
                slots = np.asarray([work[r][0] for r in kept], dtype=np.int64)
                for view, vectors in zip(self.views, fresh, strict=True):
                    view.add(slots, vectors[kept])
            live = {t for r in kept for t in self._window_texts(work[r][2])}
            if landed is not None:
                landed.extend((work[r][1], self._window_texts(work[r][2])) for r in kept)
        if dropped and isinstance(self.embedder, ForgettingEmbedder):
            self.embedder.forget(sorted(dropped - live))
        return len(kept)

    @contextmanager
    def quiet(self) -> Iterator[None]:
        """Wait for a batch being embedded to be put in (or dropped), and keep the next one
        from starting meanwhile: a deletion's copies are purged after this, so no vector of
        a deleted text is written to a cache after its purge."""
        with self._batching:
            yield

    # persistence (memstrata.index.snapshot) ---------------------------------------
    def groups(self) -> tuple[dict[str, list[tuple[float, str]]], dict[str, set[str]]]:
        """The turns (time, id) of each session and the passage ids of each document, as
        held: read them under the read lock, change nothing."""
        return self._sessions, self._documents

    @classmethod
    def from_parts(
        cls,
        user: str,
        embedder: Embedder,
        config: RankingConfig,
        passages: PassageReader | None,
        *,
        catalog: Catalog,
        lexical: BM25Index,
        views: list[ExactVectorIndex],
        groups: tuple[dict[str, list[tuple[float, str]]], dict[str, set[str]]],
        generation: int,
        deferred: bool = False,
    ) -> UserIndex:
        """An index made of saved parts; a slot alive in the catalog but not in every view
        is pending (dense work still to do, see :meth:`embed_pending`)."""
        index = cls(user, embedder, config, passages, deferred=deferred)
        index.catalog, index.lexical, index.views = catalog, lexical, views
        index._sessions, index._documents = groups
        index.generation = generation
        n = catalog.capacity
        if views:
            embedded = np.logical_and.reduce([view.alive(n) for view in views])
            waiting = np.flatnonzero(catalog.alive[:n] & ~embedded)
            index._pending = dict.fromkeys(int(s) for s in waiting)
        return index
