"""Keeps one :class:`UserIndex` per user in step with the record store.

Indexes are built on first use from the records and then follow the store's change feed
(:meth:`memstrata.ports.RecordStore.changes_since`), so writes made by this process, by another
process or through another front-end are all seen before the next search. Everything here is
derived: dropping an index loses nothing.

Many threads may search and write at once. One catch-up per user runs at a time (a per-user
lock); it reads what changed from the store first, then applies it under the index's write lock
(:class:`memstrata.index.rwlock.ReadWriteLock`), so a search holding the index's read lock never
sees half of it. A rebuild fills a new index beside the old one and swaps the reference: a
search that already holds the old index keeps it, unchanged, until it is done.

With a :class:`memstrata.index.snapshot.SnapshotStore`, a user's index is first looked for on
disk: a usable snapshot is loaded and caught up through the change feed, and only otherwise is
the index built from the records. An index is saved after it is built from the records (or
its snapshot was erased), and when the work done since its snapshot (changes replayed, vectors
added or dropped) reaches 1,000 and 5% of its entries: at once when it is small (under 20,000
entries, a matter of milliseconds), otherwise off the search path in one background thread.
:meth:`IndexManager.close` saves what has at least one change per 1,000 entries.

Memory is bounded (``memory_bytes``, the setting ``index_memory_mb``): after each use the
indexes' sizes (:func:`index_bytes`, an estimate from their matrices, columns and postings) are
added up and, while they exceed the bound, the least recently used user's index is dropped; it
is built again (from its snapshot, or the records) on its next use. The index just used is
kept however large it is. An index is never dropped while it is in use for more than a search:
being built or caught up (its user's lock is held), embedding or filling vectors from the cache
(:meth:`IndexManager.embed_pending`, :meth:`IndexManager.fill_from_cache`), or waiting for or
in a save. A search that holds an index it dropped keeps it until it is done. Nothing is lost:
the vectors embedded are in the embedding cache, pending work is the entries a rebuilt index
finds without one, and a deletion's :meth:`IndexManager.refresh` sees every index that can
still put vectors in.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Final

from memstrata.errors import InvalidInputError, MemstrataError, NotFoundError
from memstrata.ids import kind_of
from memstrata.index.config import RankingConfig
from memstrata.index.scope_index import PassageReader, UserIndex
from memstrata.model import ChangeOp, Scope
from memstrata.ports import Embedder, ForgettingEmbedder, RecordStore

if TYPE_CHECKING:
    from memstrata.index.snapshot import SnapshotStore

log = logging.getLogger(__name__)

_REBUILD_SHARE: Final = 0.5  # replaying more changes than this share of the index: rebuild
_REBUILD_MIN: Final = 1_000
_FEED_PAGE: Final = 10_000
_SAVE_MIN: Final = 1_000  # work since the snapshot (changes, vectors) worth a save, and
_SAVE_SHARE: Final = 0.05  # this share of the entries
_CLOSE_SHARE: Final = 0.001  # on close: one change per 1,000 entries
_SYNC_SAVE_MAX: Final = 20_000  # smaller indexes are saved at once (tens of milliseconds)
#: per slot, what the arrays do not hold: the entry's id and text, its details, its place in
#: the catalog's maps (Python objects; measured with tracemalloc on short chat turns)
_SLOT_BYTES: Final = 700


def index_bytes(index: UserIndex) -> int:
    """An estimate of the memory a user's index holds: its vector matrices (mapped from a
    snapshot or not) and graphs, its filter columns, its BM25 postings and, per slot, the
    entry's id, text and details."""
    return index.nbytes + index.lexical.nbytes + _SLOT_BYTES * index.catalog.capacity


class IndexManager:
    def __init__(
        self,
        store: RecordStore,
        embedder: Embedder,
        config: RankingConfig | None = None,
        passages: PassageReader | None = None,
        *,
        deferred: bool = True,
        snapshots: SnapshotStore | None = None,
        memory_bytes: int | None = None,
    ) -> None:
        if memory_bytes is not None and memory_bytes <= 0:
            raise InvalidInputError(f"memory_bytes must be positive, got {memory_bytes}")
        self.store = store
        #: dense vectors not cached are left pending (see :meth:`embed_pending`)
        self.deferred = deferred
        self.embedder = embedder
        self.config = config or RankingConfig()
        #: how curated documents become passages (None: documents are not indexed)
        self.passages = passages
        #: where indexes are saved and loaded (None: built from the records each time)
        self.snapshots = snapshots
        #: the indexes' estimated bytes above which the least recently used are dropped
        #: (None: no bound)
        self.memory_bytes = memory_bytes
        self._indexes: dict[str, UserIndex] = {}
        #: per built index, its estimated bytes when last used; ordered least recently used
        #: first
        self._sizes: dict[str, int] = {}
        #: per user: the index, generation, entry count and cached terms its size in _sizes
        #: was measured at
        self._measured_at: dict[str, tuple[int, int, int, int]] = {}
        #: users whose index is in use beyond a search (embedding, filling, saving): kept
        self._busy: dict[str, int] = {}
        self.evictions = 0
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.rebuilds = 0
        self.loads = 0  # indexes loaded from a snapshot
        #: per user: (generation, vectors) when last saved, loaded or tried, and the work
        #: (changes replayed; all entries when no snapshot holds the index) since
        self._saved: dict[str, tuple[int, int]] = {}
        self._work: dict[str, int] = {}
        self._queued: set[str] = set()
        self._saver: threading.Thread | None = None

    def _lock(self, user: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(user, threading.Lock())

    def index(self, user: str) -> UserIndex:
        """The user's index, brought up to date with every change in the store."""
        with self._lock(user):
            index = self._indexes.get(user)
            head = self.store.generation(user)
            if index is None:
                index = self._indexes[user] = self._build(user, head)
            elif index.generation != head:
                index = self._catch_up(index, head)
            self._used(user, index)
        self.maybe_save(user)
        self._bound()
        return index

    # the memory bound --------------------------------------------------------------
    def memory(self) -> dict[str, int]:
        """The estimated bytes of each built index when last used, least recently used
        first."""
        with self._guard:
            return dict(self._sizes)

    def _used(self, user: str, index: UserIndex) -> None:
        """The user's index was just used: it becomes the most recently used, measured again
        only when it changed since it was last measured (a search alone does not pay for it)."""
        at = (id(index), index.generation, len(index), index.lexical.cached_terms)
        with self._guard:
            size = self._sizes.pop(user, None)
            if size is not None and self._measured_at.get(user) == at:
                self._sizes[user] = size
                return
        size = index_bytes(index)
        with self._guard:
            self._sizes.pop(user, None)
            self._sizes[user] = size
            self._measured_at[user] = at

    @contextmanager
    def _in_use(self, user: str, *, held: bool = False) -> Iterator[None]:
        """Keep the user's index from being dropped meanwhile (``held``: the caller has
        counted it in already, holding the guard)."""
        if not held:
            with self._guard:
                self._busy[user] = self._busy.get(user, 0) + 1
        try:
            yield
        finally:
            with self._guard:
                left = self._busy.pop(user) - 1
                if left:
                    self._busy[user] = left

    def _bound(self) -> None:
        """Drop least recently used indexes while their total is over the bound, keeping
        the most recently used and those in use (see the module's docstring)."""
        limit = self.memory_bytes
        if limit is None:
            return
        with self._guard:
            total = sum(self._sizes.values())
            if total <= limit:
                return
            newest = next(reversed(self._sizes))
            for user in list(self._sizes):
                if total <= limit:
                    break
                if user == newest or user in self._busy or user in self._queued:
                    continue
                lock = self._locks.get(user)
                if lock is None or not lock.acquire(blocking=False):
                    continue  # being built, caught up or refreshed: in use
                try:
                    total -= self._sizes.pop(user)
                    self._indexes.pop(user, None)
                    self._saved.pop(user, None)
                    self._work.pop(user, None)
                    self.evictions += 1
                finally:
                    lock.release()
                log.debug("index of %s dropped to keep within %d bytes", user, limit)

    def refresh(self, user: str | None = None) -> None:
        """Bring the built indexes (all, or one user's) up to date now; build none. A
        deletion on request drops the indexes' copies, and the cached vectors of every text
        embedded with the deleted items, in the same operation, not at the next search; a
        batch being embedded in the background is waited for first, so none of its vectors
        is cached after the deletion's purge."""
        with self._guard:
            users = [user] if user is not None else list(self._indexes)
        for name in users:
            with self._lock(name):
                index = self._indexes.get(name)
                if index is not None:
                    with index.quiet():  # no batch of deleted texts lands after this
                        head = self.store.generation(name)
                        if index.generation != head:
                            self._catch_up(index, head)

    def holding(self, user: str, ids: Collection[str]) -> list[str]:
        """Which of ``ids`` the index of ``user`` built in this process still holds (none when
        it is not built): after a deletion on request and :meth:`refresh`, none."""
        with self._guard:
            index = self._indexes.get(user)
        if index is None:
            return []
        with index.lock.reading():
            return [i for i in ids if index.catalog.lookup(i) is not None]

    def built(self) -> list[str]:
        """The users whose index is built in this process."""
        with self._guard:
            return list(self._indexes)

    def pending(self, user: str) -> int:
        """How many of the user's entries wait for dense vectors (0 if not built)."""
        with self._guard:
            index = self._indexes.get(user)
        return 0 if index is None else index.pending

    def embed_pending(
        self,
        user: str,
        *,
        batch: int = 64,
        progress: Callable[[int, int], None] | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> int:
        """Bring the user's index up to date and embed everything pending in it, in this
        thread (see :meth:`UserIndex.embed_pending`); the count embedded."""
        landed: list[tuple[str, set[str]]] = []

        def after_batch(done: int, left: int) -> None:  # each batch's vectors checked at once
            self._forget_orphans(user, landed)
            landed.clear()
            if progress is not None:
                progress(done, left)

        done = 0
        with self._in_use(user):
            while True:  # an index rebuilt meanwhile (another process's large forget) is
                index = self.index(user)  # the one to go on with: the old one's pending are gone

                def halted(index: UserIndex = index) -> bool:
                    return (stop is not None and stop()) or self._indexes.get(user) is not index

                done += index.embed_pending(
                    batch=batch, progress=after_batch, stop=halted, landed=landed
                )
                self._measured(user, index)
                if self._indexes.get(user) is index or (stop is not None and stop()):
                    break
        self.maybe_save(user)
        self._bound()  # vectors put in are work a snapshot may be worth
        return done

    def _forget_orphans(self, user: str, landed: list[tuple[str, set[str]]]) -> None:
        """Forget the cached vectors of entries another process deleted while they were
        being embedded (after each batch, so a run killed midway leaves at most one batch's).
        A forget elsewhere purges the cache once its store change is made; a vector written
        after that purge would outlive the forget. So the vectors are written first and the
        store read after: an entry still stored then is one whose later deletion purges its
        vectors, and one gone is caught up with here and its vectors forgotten."""
        if not landed or not isinstance(self.embedder, ForgettingEmbedder):
            return
        index = self.index(user)  # caught up with every deletion committed by now
        with index.lock.reading():
            gone = [texts for item, texts in landed if item not in index.catalog.slots]
        if not gone:
            return
        live = {t for item, texts in landed if item in index.catalog.slots for t in texts}
        orphans = set().union(*gone) - live
        if orphans:
            self.embedder.forget(sorted(orphans))

    def fill_from_cache(self, user: str) -> int:
        """Bring the user's index up to date and put in the pending vectors another process
        has cached meanwhile, running no model; the count put in."""
        with self._in_use(user):
            index = self.index(user)
            done = index.fill_from_cache()
            self._measured(user, index)
        self.maybe_save(user)
        self._bound()
        return done

    def _measured(self, user: str, index: UserIndex) -> None:
        """Measure the user's index again (its vectors grew), if it is still the one built."""
        size = index_bytes(index)
        with self._guard:
            if self._indexes.get(user) is index and user in self._sizes:
                self._sizes[user] = size

    def drop(self, user: str | None = None) -> None:
        """Forget built indexes (all, or one user's); they rebuild on next use."""
        with self._guard:
            if user is None:
                self._indexes.clear()
                self._sizes.clear()
            else:
                self._indexes.pop(user, None)
                self._sizes.pop(user, None)

    def _build(self, user: str, head: int, *, fresh: bool = False) -> UserIndex:
        if not fresh and self.snapshots is not None and head > 0:
            loaded = self.snapshots.load(
                user, self.embedder, self.config, self.passages, self.store, deferred=self.deferred
            )
            if loaded is not None:
                self.loads += 1
                self._saved_now(loaded)
                if loaded.pending:  # vectors cached since the save (another process's)
                    loaded.fill_from_cache()
                return loaded if loaded.generation == head else self._catch_up(loaded, head)
        self.rebuilds += 1
        index = UserIndex(user, self.embedder, self.config, self.passages, deferred=self.deferred)
        scope = Scope(user)
        batch = []
        for episode in self.store.iter_episodes(scope):
            batch.append(episode)
            if len(batch) >= 2000:
                index.add_episodes(batch)
                batch = []
        index.add_episodes(batch)
        index.add_facts(list(self.store.iter_facts(scope)))
        index.add_documents(self.store.list_documents(scope))
        index.generation = head
        with self._guard:
            self._saved.pop(user, None)
            self._work[user] = len(index)
        return index

    def _catch_up(self, index: UserIndex, head: int) -> UserIndex:
        changes = self.store.changes_since(index.user, index.generation, limit=_FEED_PAGE)
        too_many = max(_REBUILD_MIN, _REBUILD_SHARE * len(index))
        if len(changes) >= _FEED_PAGE or len(changes) > too_many:
            rebuilt = self._indexes[index.user] = self._build(index.user, head, fresh=True)
            return rebuilt
        with self._guard:
            self._work[index.user] = self._work.get(index.user, 0) + len(changes)
        latest: dict[str, ChangeOp] = {}
        for change in changes:
            latest.pop(change.item_id, None)
            latest[change.item_id] = change.op  # the last change of an item decides
        deleted = [i for i, op in latest.items() if op == ChangeOp.DELETE]
        upserted = [i for i, op in latest.items() if op == ChangeOp.UPSERT]
        scope = Scope(index.user)
        episodes = [i for i in upserted if kind_of(i) == "episode"]
        facts = [i for i in upserted if kind_of(i) == "fact"]
        present = self.store.get_episodes(scope, episodes)
        present_facts = self.store.get_facts(scope, facts)
        gone = (set(episodes) - {e.id for e in present}) | (
            set(facts) - {f.id for f in present_facts}
        )
        documents = [i for i in upserted if kind_of(i) == "document"]
        present_docs = []
        for doc_id in documents:
            try:
                present_docs.append(self.store.get_document_by_id(scope, doc_id))
            except NotFoundError:
                gone.add(doc_id)
        with index.lock.writing():  # searches wait for the whole change, not part of it
            index.remove([*deleted, *gone])
            index.remove_documents([*deleted, *gone])
            index.add_episodes(present)
            index.add_facts(present_facts)
            index.add_documents(present_docs)
            index.generation = changes[-1].seq if changes else head
        return index

    # snapshots ---------------------------------------------------------------------
    def _state(self, index: UserIndex) -> tuple[int, int]:
        return index.generation, sum(view.size for view in index.views)

    def _saved_now(self, index: UserIndex, state: tuple[int, int] | None = None) -> None:
        with self._guard:
            self._saved[index.user] = state or self._state(index)
            self._work[index.user] = 0

    def _unsaved(self, index: UserIndex) -> int | None:
        """The work since the index's snapshot; None when it is in its snapshot (or the
        last save of this state was tried already)."""
        with self._guard:
            saved = self._saved.get(index.user)
            work = self._work.get(index.user, len(index))
        state = self._state(index)
        if saved == state:
            return None
        return work + (abs(state[1] - saved[1]) if saved is not None else 0)

    def maybe_save(self, user: str) -> None:
        """Save the user's index in the background when enough changed since its snapshot
        (see the module's docstring); never waits."""
        index = self._indexes.get(user)
        if index is None or self.snapshots is None or not len(index):
            return
        work = self._unsaved(index)
        if work is None or work < min(len(index), max(_SAVE_MIN, _SAVE_SHARE * len(index))):
            return
        if len(index) < _SYNC_SAVE_MAX:  # a small save costs less than a thread's surprises
            self.save(user)
        else:
            with self._guard:
                self._queued.add(user)
                if self._saver is None:
                    self._saver = threading.Thread(
                        target=self._save_queued, name="memstrata-index-save", daemon=True
                    )
                    self._saver.start()

    def _save_queued(self) -> None:
        while True:
            with self._guard:
                if not self._queued:
                    self._saver = None
                    return
                user = self._queued.pop()
                self._busy[user] = self._busy.get(user, 0) + 1  # kept until saved
            with self._in_use(user, held=True):
                self.save(user)

    def save(self, user: str | None = None) -> int:
        """Save the built indexes (all, or one user's) that changed since their snapshot,
        now; how many were saved."""
        if self.snapshots is None:
            return 0
        with self._guard:
            users = [user] if user is not None else list(self._indexes)
        saved = 0
        for name in users:
            with self._in_use(name):
                index = self._indexes.get(name)
                if index is None or self._unsaved(index) is None:
                    continue
                state = self._state(index)
                try:
                    if self.snapshots.save(index, self.store) is not None:
                        saved += 1
                except MemstrataError as exc:  # derived: the index is rebuilt when missing
                    log.warning("index of %s not saved: %s", name, exc)
                self._saved_now(index, state)  # tried: not again until it changes
        return saved

    def erased(self, user: str) -> None:
        """The user's snapshots were erased (a deletion on request): the built index, caught
        up with the deletion, is saved again (see :meth:`maybe_save`)."""
        with self._guard:
            self._saved.pop(user, None)
            index = self._indexes.get(user)
            self._work[user] = len(index) if index is not None else 0
        self.maybe_save(user)

    def wait(self) -> None:
        """Wait for the background saves under way."""
        while True:
            with self._guard:
                saver = self._saver
            if saver is None:
                return
            saver.join()

    def close(self) -> None:
        """Finish the background saves, then save each index with at least one change per
        1,000 entries since its snapshot."""
        self.wait()
        if self.snapshots is None:
            return
        with self._guard:
            users = list(self._indexes)
        for user in users:
            index = self._indexes.get(user)
            work = None if index is None else self._unsaved(index)
            if index is not None and work is not None and work >= max(1, _CLOSE_SHARE * len(index)):
                self.save(user)
