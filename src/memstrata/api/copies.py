"""Every copy of user text kept outside the record store's rows, behind one protocol.

A deletion on request removes records in one store transaction; copies of their text live on
elsewhere: the raw trace, the indexes built in this process, the saved indexes on disk, the
cache of vectors, and the store's own files (a write-ahead log, free pages). Each is a
:class:`CopyHolder`: it erases its copies of what a deletion removed (:meth:`CopyHolder.erase`,
reading back what it erased) and proves on its own that none is left
(:meth:`CopyHolder.residue`). The facade keeps one list of holders (:func:`holders_of`) and a
forget goes through each in turn (erasing as much as it can whatever failed before), then,
once the store change is final, runs the proof of each holder whose proof needs it
(:attr:`CopyHolder.proved_when_final`: a scan of files the store or a save may still be
writing). A holder added later is one more entry in that list, and the contract tests run it
through the same erase-then-prove checks as the others.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from memstrata.errors import StoreError
from memstrata.model import DeleteReason
from memstrata.ports import ErasingStore, ForgettingEmbedder, RecordStore, TraceSink

if TYPE_CHECKING:
    from memstrata.index.manager import IndexManager
    from memstrata.index.snapshot import SnapshotStore


@dataclass(frozen=True, slots=True)
class Erasing:
    """What one deletion removed, as the holders of copies need it: the ``user``, the turns
    (``episode_ids``), every text removed and every text embedded from them (``texts``), the
    ids of every record erased (``ids``), the ``reason`` a trace tombstone keeps, and whether
    the texts are ``lost`` (the journal dropped them before this data directory applied the
    erasure: copies are found by id, and a copy that can only be found by its text is dropped
    with all others of its kind)."""

    user: str
    episode_ids: Sequence[str] = ()
    texts: Collection[str] = ()
    ids: Collection[str] = ()
    reason: str = DeleteReason.USER_REQUEST.value
    lost: bool = False


@dataclass(slots=True)
class Erased:
    """What a holder's erase did: how many copies it erased (``count``) and, read back, each
    copy it could not erase (``left``, one entry per place, naming it)."""

    count: int = 0
    left: list[str] = field(default_factory=list)


class CopyHolder(Protocol):
    """A holder of copies of user text outside the record store's rows."""

    #: what its copies are, in a message ("the raw trace", "the saved indexes")
    @property
    def what(self) -> str: ...

    #: whether its proof runs once the store change is final (a scan of files), besides the
    #: read-back its erase does
    @property
    def proved_when_final(self) -> bool: ...

    def erase(self, job: Erasing) -> Erased:
        """Erase the copies of ``job`` this holder keeps, then read back: what is left. Raises
        :class:`StoreError` (or :class:`OSError`) when it cannot try."""
        ...

    def residue(self, job: Erasing) -> list[str]:
        """Each copy of ``job`` this holder still keeps, one entry per place; empty when none
        is left."""
        ...


class TraceCopies:
    """The raw trace: each turn's line is replaced by a tombstone with the reason (a damaged
    line holding one of the texts is blanked), then the trace is read back."""

    what = "the raw trace"
    proved_when_final = False

    def __init__(self, trace: TraceSink) -> None:
        self.trace = trace

    def erase(self, job: Erasing) -> Erased:
        done = Erased()
        if not job.episode_ids:
            return done
        try:
            done.count = self.trace.redact(job.episode_ids, job.reason, texts=job.texts)
        except OSError as exc:
            done.left.append(f"the raw trace line could not be erased ({exc})")
        try:
            done.left += self.residue(job)
        except OSError as exc:
            done.left.append(f"the raw trace could not be read back ({exc})")
        return done

    def residue(self, job: Erasing) -> list[str]:
        if not job.episode_ids:
            return []
        return self.trace.residue(job.episode_ids, job.texts)


class LiveIndexCopies:
    """The indexes built in this process and the vectors the embedder keeps in memory: the
    indexes caught up with the store (the deleted entries leave them, the turns that had them
    as context are embedded again), the embedder told to forget every text."""

    what = "the indexes in memory"
    proved_when_final = False

    def __init__(
        self,
        indexes: Callable[[], IndexManager | None],
        embedder: Callable[[], object | None],
    ) -> None:
        self._indexes = indexes
        self._embedder = embedder

    def erase(self, job: Erasing) -> Erased:
        done = Erased()
        try:  # every step is tried, whatever failed before: as few copies as possible stay
            indexes = self._indexes()
            if indexes is not None:
                indexes.refresh()
            embedder = self._embedder()
            if isinstance(embedder, ForgettingEmbedder):
                embedder.forget(sorted(job.texts))
        except StoreError as exc:
            done.left.append(str(exc))
            return done
        done.left += self.residue(job)
        return done

    def residue(self, job: Erasing) -> list[str]:
        indexes = self._indexes()
        if indexes is None:
            return []
        held = indexes.holding(job.user, job.ids)
        return [f"the index in memory of {job.user} still holds {', '.join(held)}"] if held else []


class SnapshotCopies:
    """The saved indexes of the user on disk: overwritten and removed, then read back; the
    index built here, caught up with the deletion, is saved again later."""

    what = "the saved indexes"
    proved_when_final = True

    def __init__(
        self, root: Path, store: RecordStore, indexes: Callable[[], IndexManager | None]
    ) -> None:
        self.root = root
        self.store = store
        self._indexes = indexes

    def _snapshots(self) -> SnapshotStore:
        from memstrata.index.snapshot import SnapshotStore

        return SnapshotStore(self.root)

    def erase(self, job: Erasing) -> Erased:
        generation = self.store.generation(job.user)
        left = self._snapshots().erase(job.user, generation, sorted(job.texts), ids=job.ids)
        indexes = self._indexes()
        if indexes is not None:
            indexes.erased(job.user)
        return Erased(left=list(left))

    def residue(self, job: Erasing) -> list[str]:
        return list(self._snapshots().residue(job.user, job.texts))


class VectorCacheCopies:
    """The cache file of vectors, every model's: those of the texts dropped (the whole cache
    when the texts are lost) and its log checkpointed."""

    what = "the vector cache"
    proved_when_final = False

    def __init__(self, path: Path) -> None:
        self.path = path

    def erase(self, job: Erasing) -> Erased:
        from memstrata.embed.cache import clear_cache, purge_cache

        if job.lost:
            return Erased(left=clear_cache(self.path))
        return Erased(left=purge_cache(self.path, sorted(job.texts)))

    def residue(self, job: Erasing) -> list[str]:
        from memstrata.embed.cache import cached_count

        found = cached_count(self.path, sorted(job.texts))
        return [f"{self.path}: {found} cached vector(s) of the deleted text"] if found else []


class StoreFileCopies:
    """The record store's own files: its transaction removed the rows; the proof checkpoints
    its log into the file and scans both for the texts."""

    what = "the record store's files"
    proved_when_final = True

    def __init__(self, store: ErasingStore) -> None:
        self.store = store

    def erase(self, job: Erasing) -> Erased:
        return Erased()  # the deletion's store transaction is the erase

    def residue(self, job: Erasing) -> list[str]:
        return list(self.store.residue(job.texts))


def holders_of(
    store: RecordStore,
    *,
    trace: TraceSink | None,
    index_dir: Path | None,
    vector_cache: Path | None,
    indexes: Callable[[], IndexManager | None],
    embedder: Callable[[], object | None],
) -> list[CopyHolder]:
    """Every holder of copies a memory has, in the order a forget erases them: the trace, the
    indexes in memory, the saved indexes, the vector cache, the store's files."""
    holders: list[CopyHolder] = []
    if trace is not None:
        holders.append(TraceCopies(trace))
    holders.append(LiveIndexCopies(indexes, embedder))
    if index_dir is not None:
        holders.append(SnapshotCopies(index_dir, store, indexes))
    if vector_cache is not None:
        holders.append(VectorCacheCopies(vector_cache))
    if isinstance(store, ErasingStore):
        holders.append(StoreFileCopies(store))
    return holders


def erase_copies(holders: Sequence[CopyHolder], job: Erasing) -> tuple[int, list[str]]:
    """Each holder's erase, in turn, whatever failed before: the copies erased (the trace's
    lines) and every copy left, naming where."""
    count = 0
    left: list[str] = []
    for holder in holders:
        try:
            done = holder.erase(job)
        except StoreError as exc:
            left.append(str(exc))
            continue
        count += done.count
        left += done.left
    return count, left


def prove_erased(holders: Sequence[CopyHolder], job: Erasing) -> list[str]:
    """Once the store change is final: the proof of each holder whose proof waits for it;
    every copy left, naming where."""
    return [entry for h in holders if h.proved_when_final for entry in h.residue(job)]
