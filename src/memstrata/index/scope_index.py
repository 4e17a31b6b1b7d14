"""The search index of one user: every episode, fact and curated bullet, lexical and dense,
with filters.

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
document into its passages; a topic search ranks documents by their best bullets, as a session
search ranks sessions by their best turns.
"""

from __future__ import annotations

import bisect
import itertools
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
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
from memstrata.errors import InvalidInputError
from memstrata.index.bm25 import BM25Index
from memstrata.index.catalog import KIND_BULLET, KIND_EPISODE, KIND_FACT, Catalog, SlotInfo
from memstrata.index.config import RankingConfig
from memstrata.index.dates import date_query
from memstrata.index.query import Query
from memstrata.index.rwlock import ReadWriteLock
from memstrata.index.tokenize import tokenize
from memstrata.index.vectors import ExactVectorIndex
from memstrata.model import (
    Document,
    DocumentKind,
    Episode,
    Fact,
    Granularity,
    Layer,
    Scope,
    SearchFilter,
    SearchHit,
    SearchHits,
)
from memstrata.ports import CachingEmbedder, Embedder, ForgettingEmbedder

_SEP: Final = "\x1f"
#: joins a turn to the turns before it in the text of a context view
_JOIN: Final = "\n"
_KINDS: Final = {
    Granularity.TURN: KIND_EPISODE,
    Granularity.SESSION: KIND_EPISODE,
    Granularity.FACT: KIND_FACT,
    Granularity.TOPIC: KIND_BULLET,
}
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


def _name_pattern(name: str) -> str:
    """A regex for a lowercase ``name`` that keeps Latin names to whole words: "bob" is not
    found in "bobby", but is in "和bob说"."""
    left = r"(?<![a-z0-9])" if name[0].isascii() and name[0].isalnum() else ""
    right = r"(?![a-z0-9])" if name[-1].isascii() and name[-1].isalnum() else ""
    return f"{left}{re.escape(name)}{right}"


def _doc_group(document_id: str) -> str:
    """The group (like a session) that a document's passages are ranked in."""
    return f"doc/{document_id}"


def _epoch(value: datetime) -> float:
    return value.astimezone(UTC).timestamp()


class UserIndex:
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
        #: speakers known when the pattern was built, the pattern, lowercase name -> names
        self._speaker_pattern: tuple[int, re.Pattern[str] | None, dict[str, list[str]]] | None
        self._speaker_pattern = None

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
                time=_epoch(ep.time),
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
                    time=_epoch(fact.valid_from),
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
                        time=_epoch(doc.updated_at),
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

    # reads -----------------------------------------------------------------------
    def mask(
        self, scope: Scope, granularity: Granularity, filters: SearchFilter
    ) -> NDArray[np.bool_]:
        c = self.catalog
        n = c.capacity
        kind = _KINDS[granularity]
        if filters.layer is not None and (filters.layer == Layer.ARCHIVE) == (kind == KIND_BULLET):
            raise InvalidInputError(
                f"layer {filters.layer.value} is not searched at granularity {granularity.value}:"
                " turns, sessions and facts are the L3 archive; L1 essentials and L2 topics are"
                " searched with granularity topic"
            )
        mask = c.alive[:n] & (c.kind[:n] == kind)
        if filters.layer is not None and kind == KIND_BULLET:
            mask &= c.equals("layer", filters.layer.value)
        if scope.thread is not None:
            mask &= c.equals("thread", scope.thread)
        if scope.agent is not None:
            mask &= c.equals("agent", scope.agent)
        if filters.speaker is not None:
            mask &= c.equals("speaker", filters.speaker)
        if filters.surface is not None:
            mask &= c.equals("surface", filters.surface)
        if filters.session_id is not None:
            mask &= c.equals("session_id", filters.session_id)
        if filters.category is not None:
            mask &= c.equals("category", filters.category.value)
        if filters.topic is not None:
            mask &= c.equals("topic", filters.topic)
        if filters.since is not None:
            mask &= c.time[:n] >= _epoch(filters.since)
        if filters.until is not None:
            mask &= c.time[:n] < _epoch(filters.until)
        if not filters.include_archived:
            mask &= ~c.archived[:n]
        if filters.current_only:
            mask &= c.current[:n]
        return np.asarray(mask, dtype=bool)

    def _candidates(
        self, query: Query, mask: NDArray[np.bool_], lexical: NDArray[np.float32], k: int
    ) -> NDArray[np.bool_] | None:
        """For a large scope, the slots worth scoring: what the approximate graphs propose for
        the query (and its lines) plus the best lexical matches. None: score everything."""
        if not any(view.approximate for view in self.views):
            return None
        count = self.config.ann_candidates
        allowed = np.flatnonzero(mask)
        if len(allowed) > count:
            allowed = allowed[np.argpartition(-lexical[allowed], count - 1)[:count]]
        found = [allowed]
        for vector in (query.vector, *query.line_vectors):
            for view in self.views:
                proposed = view.candidates(vector, count)
                if proposed is not None:
                    found.append(proposed)
        chosen = np.zeros(len(mask), dtype=bool)
        slots = np.concatenate(found)
        chosen[slots[slots < len(mask)]] = True
        chosen &= mask
        if int(chosen.sum()) < max(k, 50):  # filters removed most proposals: be exact
            return None
        return chosen

    def dense_scores(
        self,
        query: Query,
        mask: NDArray[np.bool_],
        slots: NDArray[np.int64] | None = None,
        extra: NDArray[np.float32] | None = None,
    ) -> NDArray[np.float32]:
        """The dense score of every slot (or of ``slots``): each view's cosines z-scored over
        ``mask`` and averaged; for a dialogue, blended with the best single line's. Entries
        still waiting for their vectors score 0, the mean, whatever the query. ``extra``:
        vectors of texts outside the index, scored after the slots (``mask`` is then as
        long as both) on the scale of the masked slots alone."""
        n = self.catalog.capacity
        ready = mask[:n]
        if self._pending and self.views:
            ready = ready & self.views[0].alive(n)
        basis = None
        if extra is not None:
            basis = np.concatenate([ready, np.zeros(len(extra), dtype=bool)])
            ready = np.concatenate([ready, np.ones(len(extra), dtype=bool)])

        def views_score(vector: NDArray[np.float32]) -> NDArray[np.float32]:
            def raw(view: ExactVectorIndex) -> NDArray[np.float32]:
                found = view.scores(vector, n, slots)
                return found if extra is None else np.concatenate([found, extra @ vector])

            parts = [_normalise(raw(view), ready, "zscore", basis) for view in self.views]
            return np.asarray(np.mean(parts, axis=0), dtype=np.float32)

        dense = views_score(query.vector)
        if query.is_dialogue and self.config.line_weight > 0:
            best = np.max([views_score(v) for v in query.line_vectors], axis=0)
            w = self.config.line_weight
            dense = (1 - w) * _normalise(dense, ready, "zscore", basis) + w * _normalise(
                np.asarray(best, dtype=np.float32), ready, "zscore", basis
            )
        return dense

    def score_texts(
        self, query: Query, scope: Scope, texts: Sequence[str], granularity: Granularity
    ) -> list[float] | None:
        """The fused score each of ``texts`` (not in the index: a profile slot, say) would
        have as one more entry of ``granularity`` in ``scope``: its lexical and dense scores
        put on the scale of that population's with the text in it, each text alone, with no
        speaker or date bonus. None when the scope has no such entry."""
        if not texts:
            return []
        vectors = self.embedder.embed_documents(list(texts))  # may run the model: unlocked
        with self.lock.reading():
            mask = self.mask(scope, granularity, SearchFilter())
            if not mask.any():
                return None
            n = self.catalog.capacity
            weights = query.term_weights()
            outside = [self.lexical.score_tokens(tokenize(t), weights) for t in texts]
            lexical = np.concatenate(
                [self.lexical.scores(weights, n), np.asarray(outside, np.float32)]
            )
            whole = np.concatenate([mask, np.ones(len(texts), dtype=bool)])
            basis = np.concatenate([mask, np.zeros(len(texts), dtype=bool)])
            dense = self.dense_scores(query, whole, extra=np.asarray(vectors, np.float32))
            fused = fuse(lexical, dense, whole, self.config, basis)
            return [float(x) for x in fused[n:]]

    def scores(
        self, query: Query, mask: NDArray[np.bool_], k: int = 10
    ) -> tuple[NDArray[np.float32], NDArray[np.float32], NDArray[np.float32], NDArray[np.bool_]]:
        """Lexical, dense and fused scores for every slot, and the mask they were ranked over
        (fused is -inf outside it): ``mask`` itself, or its candidates in a large scope."""
        n = self.catalog.capacity
        lexical = self.lexical.scores(query.term_weights(), n)
        chosen = self._candidates(query, mask, lexical, k)
        slots = None
        if chosen is not None:
            mask = chosen
            slots = np.flatnonzero(mask)
        dense = self.dense_scores(query, mask, slots)
        fused = fuse(lexical, dense, mask, self.config)
        if self.config.speaker_boost:
            for name in self._speakers_named(query.text):
                fused[self.catalog.equals("speaker", name) & mask] += self.config.speaker_boost
        if self.config.date_bonus:
            self._date_bonus(query.text, fused, mask)
        return lexical, dense, fused, mask

    def _speakers_named(self, text: str) -> list[str]:
        """The known speakers (names of two characters or more) that ``text`` names,
        case-insensitively and as whole words where a name starts or ends with a Latin letter
        or digit (Chinese names stand next to other characters: 小明说); one compiled pattern,
        rebuilt when a new speaker appears (concurrent searches may each rebuild it; each uses
        the one it read or built)."""
        names = self.catalog.values("speaker")
        cached = self._speaker_pattern
        if cached is None or cached[0] != len(names):
            by_lower: dict[str, list[str]] = {}
            for name in names:
                if len(name) > 1:
                    by_lower.setdefault(name.lower(), []).append(name)
            alternatives = "|".join(
                _name_pattern(n) for n in sorted(by_lower, key=len, reverse=True)
            )
            pattern = re.compile(alternatives) if alternatives else None
            cached = self._speaker_pattern = (len(names), pattern, by_lower)
        _, pattern, by_lower = cached
        if pattern is None:
            return []
        found = dict.fromkeys(m.group(0) for m in pattern.finditer(text.lower()))
        return [name for lower in found for name in by_lower[lower]]

    def _date_bonus(self, text: str, fused: NDArray[np.float32], mask: NDArray[np.bool_]) -> None:
        """Raise entries dated within a date the query names (see :mod:`dates`)."""
        named = date_query(text)
        if not named:
            return
        c = self.catalog
        n = c.capacity
        hit = np.zeros(n, dtype=bool)
        slack = self.config.date_slack_days * 86_400.0
        for start, end in named.windows:
            hit |= (c.time[:n] >= start) & (c.time[:n] < end + slack)
        if named.months:
            hit |= np.isin(c.month[:n], list(named.months))
        fused[hit & mask] += self.config.date_bonus

    def search(
        self,
        query: Query,
        scope: Scope,
        *,
        k: int,
        granularity: Granularity,
        filters: SearchFilter,
        passages: bool = False,
    ) -> SearchHits:
        """The best ``k`` hits for ``query`` in ``scope``, read under the shared lock: the
        index as it was before or after any concurrent write, never halfway. Entries still
        waiting for their dense vectors are ranked lexically (see :meth:`dense_scores`) and
        counted in the answer's ``pending``. ``passages``: at granularity topic, one hit per
        bullet (its id, its document's key as ``topic`` and id as ``session_id``), not per
        document."""
        with self.lock.reading():
            mask = self.mask(scope, granularity, filters)
            if not mask.any():
                return SearchHits()
            pending = 0
            if self._pending and self.views:
                pending = int((mask & ~self.views[0].alive(len(mask))).sum())
            lexical, dense, fused, mask = self.scores(query, mask, k)
            if granularity == Granularity.SESSION or (
                granularity == Granularity.TOPIC and not passages
            ):
                hits = self._groups_ranked(lexical, dense, fused, mask, k, granularity)
            else:
                order = _top(fused, mask, k)
                hits = [self._hit(int(s), granularity, lexical, dense, fused) for s in order]
            return SearchHits(hits, pending=pending)

    def _id(self, slot: int) -> str:
        info = self.catalog.info[slot]
        assert info is not None
        return info.id

    def _hit(
        self,
        slot: int,
        granularity: Granularity,
        lexical: NDArray[np.float32],
        dense: NDArray[np.float32],
        fused: NDArray[np.float32],
    ) -> SearchHit:
        info = self.catalog.info[slot]
        assert info is not None
        return SearchHit(
            id=info.id,
            granularity=granularity,
            score=float(fused[slot]),
            components={
                "lexical": float(lexical[slot]),
                "dense": float(dense[slot]),
                "fused": float(fused[slot]),
            },
            text=info.text,
            scope=Scope(self.user, info.thread, info.agent),
            session_id=info.session_id,
            speaker=info.speaker,
            time=datetime.fromtimestamp(info.time, UTC),
            topic=info.topic,
        )

    def _groups_ranked(
        self,
        lexical: NDArray[np.float32],
        dense: NDArray[np.float32],
        fused: NDArray[np.float32],
        mask: NDArray[np.bool_],
        k: int,
        granularity: Granularity,
    ) -> list[SearchHit]:
        """Sessions (their turns) or topic documents (their bullets), each scored as the mean
        of its best ``session_top`` members."""
        codes = self.catalog.session_codes()
        slots = np.flatnonzero(mask)
        # Sort by session, best turn first; rank turns within their session.
        order = slots[np.lexsort((-fused[slots], codes[slots]))]
        sorted_codes = codes[order]
        starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
        sizes = np.diff(np.r_[starts, len(order)])
        group = np.repeat(np.arange(len(starts)), sizes)
        rank = np.arange(len(order)) - starts[group]
        keep = rank < max(1, self.config.session_top)
        totals = np.bincount(group[keep], weights=fused[order][keep], minlength=len(starts))
        counts = np.bincount(group[keep], minlength=len(starts))
        session_scores = totals / np.maximum(counts, 1)
        best_groups = np.argsort(-session_scores, kind="stable")[:k]
        ranked = [
            (float(session_scores[g]), [int(x) for x in order[starts[g] : starts[g] + sizes[g]]])
            for g in best_groups
        ]
        hits = []
        for score, members in ranked:
            head = self._hit(members[0], granularity, lexical, dense, fused)
            info = self.catalog.info[members[0]]
            assert info is not None
            best = tuple(self._id(m) for m in members[:5])
            if granularity == Granularity.TOPIC:
                hit = replace(head, id=str(info.session_id), session_id=None, bullets=best)
            else:
                hit = replace(
                    head, id=f"{info.thread or ''}/{info.session_id}", speaker=None, episodes=best
                )
            hits.append(replace(hit, score=score))
        return hits


def _normalise(
    values: NDArray[np.float32],
    mask: NDArray[np.bool_],
    method: str,
    basis: NDArray[np.bool_] | None = None,
) -> NDArray[np.float32]:
    """``values`` on ``mask`` put on one scale (z-score or min-max) over the masked values;
    zero elsewhere. With ``basis``: each masked value over the ``basis`` values and itself,
    as one more entry (see :func:`_as_one_more`)."""
    if basis is not None:
        return _as_one_more(values, mask, method, basis)
    chosen = values[mask]
    out = np.zeros_like(values)
    if not len(chosen):
        return out
    if method == "zscore":
        std = float(chosen.std())
        out[mask] = (chosen - float(chosen.mean())) / std if std > 1e-9 else 0.0
    else:
        low, high = float(chosen.min()), float(chosen.max())
        out[mask] = (chosen - low) / (high - low) if high - low > 1e-9 else 0.0
    return out


def _as_one_more(
    values: NDArray[np.float32], mask: NDArray[np.bool_], method: str, basis: NDArray[np.bool_]
) -> NDArray[np.float32]:
    """Each masked value on the scale of the ``basis`` values with it among them (a value
    in ``basis`` is among them already): as one more entry, so its z-score, like any
    entry's, is bounded by the population's size."""
    population = values[basis].astype(np.float64)
    x = values[mask].astype(np.float64)
    own = basis[mask]  # already counted
    n = len(population) + np.where(own, 0, 1)
    out = np.zeros_like(values)
    if method == "zscore":
        total = population.sum() + np.where(own, 0.0, x)
        squares = (population**2).sum() + np.where(own, 0.0, x**2)
        mean = total / n
        std = np.sqrt(np.maximum(squares / n - mean**2, 0.0))
        out[mask] = np.where(std > 1e-9, (x - mean) / np.maximum(std, 1e-9), 0.0)
    else:
        low = np.minimum(population.min(), x) if len(population) else x
        high = np.maximum(population.max(), x) if len(population) else x
        span = high - low
        out[mask] = np.where(span > 1e-9, (x - low) / np.maximum(span, 1e-9), 0.0)
    return out


def _ranks(
    values: NDArray[np.float32], mask: NDArray[np.bool_], basis: NDArray[np.bool_] | None = None
) -> NDArray[np.float32]:
    """1-based ranks of the ``mask`` values, best first, ties in slot order; with ``basis``,
    each value's rank among the ``basis`` values (one plus how many are better)."""
    ranks = np.zeros(len(values), dtype=np.float32)
    if basis is not None:
        ordered = np.sort(-values[basis])
        ranks[mask] = np.searchsorted(ordered, -values[mask], side="left") + 1
        return ranks
    slots = np.flatnonzero(mask)
    order = slots[np.argsort(-values[slots], kind="stable")]
    ranks[order] = np.arange(1, len(order) + 1, dtype=np.float32)
    return ranks


def fuse(
    lexical: NDArray[np.float32],
    dense: NDArray[np.float32],
    mask: NDArray[np.bool_],
    config: RankingConfig,
    basis: NDArray[np.bool_] | None = None,
) -> NDArray[np.float32]:
    """One ranking score per slot from the two; ``-inf`` outside ``mask``. ``basis``: the
    slots whose scores set the scale (default: ``mask``)."""
    w = config.lexical_weight
    if config.fusion == "rrf":
        fused = w / (config.rrf_k + _ranks(lexical, mask, basis)) + (1 - w) / (
            config.rrf_k + _ranks(dense, mask, basis)
        )
    else:
        fused = w * _normalise(lexical, mask, config.fusion, basis) + (1 - w) * _normalise(
            dense, mask, config.fusion, basis
        )
    out = np.full(len(fused), -np.inf, dtype=np.float32)
    out[mask] = fused[mask]
    return out


def _top(scores: NDArray[np.float32], mask: NDArray[np.bool_], k: int) -> NDArray[np.int64]:
    """The best ``k`` slots of ``mask``, best first, equal scores in slot order: the best
    ``k`` are always the first ``k`` of the best ``k + n`` (so pages of hits line up)."""
    slots = np.flatnonzero(mask)
    if len(slots) > k:
        kth = np.partition(-scores[slots], k - 1)[k - 1]
        slots = slots[-scores[slots] <= kth]  # the best k, and every slot tied with the k-th
    return slots[np.lexsort((slots, -scores[slots]))][:k]
