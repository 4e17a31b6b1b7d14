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
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Final

from memstrata.errors import NotFoundError
from memstrata.ids import kind_of
from memstrata.index.config import RankingConfig
from memstrata.index.scope_index import PassageReader, UserIndex
from memstrata.model import ChangeOp, Scope
from memstrata.ports import Embedder, RecordStore

_REBUILD_SHARE: Final = 0.5  # replaying more changes than this share of the index: rebuild
_REBUILD_MIN: Final = 1_000
_FEED_PAGE: Final = 10_000


class IndexManager:
    def __init__(
        self,
        store: RecordStore,
        embedder: Embedder,
        config: RankingConfig | None = None,
        passages: PassageReader | None = None,
        *,
        deferred: bool = True,
    ) -> None:
        self.store = store
        #: dense vectors not cached are left pending (see :meth:`embed_pending`)
        self.deferred = deferred
        self.embedder = embedder
        self.config = config or RankingConfig()
        #: how curated documents become passages (None: documents are not indexed)
        self.passages = passages
        self._indexes: dict[str, UserIndex] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self.rebuilds = 0

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
            return index

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
        return self.index(user).embed_pending(batch=batch, progress=progress, stop=stop)

    def fill_from_cache(self, user: str) -> int:
        """Bring the user's index up to date and put in the pending vectors another process
        has cached meanwhile, running no model; the count put in."""
        return self.index(user).fill_from_cache()

    def drop(self, user: str | None = None) -> None:
        """Forget built indexes (all, or one user's); they rebuild on next use."""
        with self._guard:
            if user is None:
                self._indexes.clear()
            else:
                self._indexes.pop(user, None)

    def _build(self, user: str, head: int) -> UserIndex:
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
        return index

    def _catch_up(self, index: UserIndex, head: int) -> UserIndex:
        changes = self.store.changes_since(index.user, index.generation, limit=_FEED_PAGE)
        too_many = max(_REBUILD_MIN, _REBUILD_SHARE * len(index))
        if len(changes) >= _FEED_PAGE or len(changes) > too_many:
            rebuilt = self._indexes[index.user] = self._build(index.user, head)
            return rebuilt
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
