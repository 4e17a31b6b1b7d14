"""The facade's shared state (:class:`MemoryState`: the store, the trace, the clock, the settings,
the runtime every service takes, the lazily built parts) and the erasure of copies outside the
store; the names of :mod:`memstrata.api.inputs` are importable from here too."""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Final

from memstrata.api.browse import BrowseService
from memstrata.api.capture import CaptureService
from memstrata.api.copies import CopyHolder, Erasing, erase_copies, holders_of, prove_erased
from memstrata.api.documents import DocumentsService
from memstrata.api.imports import ImportService
from memstrata.api.inputs import (  # re-exported: the facade's parts import them from here
    AUDIT_STATE_KEY as AUDIT_STATE_KEY,
)
from memstrata.api.inputs import (
    FACT_FIELDS as FACT_FIELDS,
)
from memstrata.api.inputs import (
    TURN_KEYS as TURN_KEYS,
)
from memstrata.api.inputs import (
    WHEN_KEYS as WHEN_KEYS,
)
from memstrata.api.inputs import (
    DeleteReport as DeleteReport,
)
from memstrata.api.inputs import (
    ImportSource as ImportSource,
)
from memstrata.api.inputs import (
    IngestReport as IngestReport,
)
from memstrata.api.inputs import (
    ListKind as ListKind,
)
from memstrata.api.inputs import (
    Record as Record,
)
from memstrata.api.inputs import (
    ScopeLike as ScopeLike,
)
from memstrata.api.inputs import (
    TurnLike as TurnLike,
)
from memstrata.api.inputs import (
    as_scope as as_scope,
)
from memstrata.api.inputs import (
    as_turn as as_turn,
)
from memstrata.api.inputs import (
    category_of as category_of,
)
from memstrata.api.inputs import (
    check_unit as check_unit,
)
from memstrata.api.inputs import (
    content_passages as content_passages,
)
from memstrata.api.inputs import (
    document_passages as document_passages,
)
from memstrata.api.inputs import (
    reason_of as reason_of,
)
from memstrata.api.inputs import (
    scrubbed as scrubbed,
)
from memstrata.api.inputs import (
    scrubbed_json as scrubbed_json,
)
from memstrata.api.inputs import (
    slot_of as slot_of,
)
from memstrata.api.inputs import (
    time_of as time_of,
)
from memstrata.api.inputs import (
    when_of as when_of,
)
from memstrata.api.records import RecordsService
from memstrata.api.runtime import Runtime
from memstrata.errors import BusyError, StoreError
from memstrata.model import (
    DeleteReason,
    Episode,
    EpisodeFilter,
    Erasure,
    ErasureRecord,
    Scope,
)
from memstrata.ports import (
    SITE_WAIT,
    Clock,
    Embedder,
    RecordStore,
    SystemClock,
    TraceSink,
)
from memstrata.settings import Settings

if TYPE_CHECKING:
    from memstrata.api.sites import ErasureSweep
    from memstrata.curate.queue import DebounceQueue
    from memstrata.curate.runs import RunRegistry
    from memstrata.index.config import RankingConfig
    from memstrata.index.indexer import BackgroundIndexer
    from memstrata.index.leader import ModelLock
    from memstrata.index.manager import IndexManager
    from memstrata.layers import FactCache

log = logging.getLogger(__name__)

_PENDING: Final = "the erasure stays pending: a retry, or the next open, finishes it"


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
        #: what every service takes (see :mod:`memstrata.api.runtime`)
        self.runtime = Runtime(
            store, trace, self.clock, settings, written=self._written, touched=self._touched
        )
        #: turns stored verbatim (see :mod:`memstrata.api.capture`)
        self.capture = CaptureService(self.runtime)
        #: curated documents, identity and profile (see :mod:`memstrata.api.documents`)
        self.docs = DocumentsService(self.runtime, self.capture, self._erase_texts)
        #: facts filed by hand, reads and changes of any item (see :mod:`memstrata.api.records`)
        self.records = RecordsService(self.runtime, self.capture)
        #: imports of other systems' exports (see :mod:`memstrata.api.imports`)
        self.imports = ImportService(self.runtime, self.capture, self.docs)
        #: read-only views for people browsing a memory (see :mod:`memstrata.api.browse`)
        self.browse = BrowseService(store)

    def _written(self, scope: Scope) -> None:
        """Records of ``scope`` were written: the background indexer (if running) embeds
        them now rather than at its next look at the store."""
        if self._indexer is not None:
            self._indexer.notify(scope.user)

    def _touched(self, scope: Scope) -> None:
        """New turns of ``scope``: the curation queue (if running) curates it once quiet."""
        if self._queue is not None:
            self._queue.touch(scope)

    @property
    def max_turn_chars(self) -> int:
        """The longest turn (and search query) accepted, in characters."""
        return self.runtime.max_turn_chars

    def check_size(self, text: str, what: str) -> None:
        """Refuse ``text`` longer than :attr:`max_turn_chars` as :class:`TooLargeError`, and
        text no store can keep (lone surrogates) as :class:`InvalidInputError`."""
        self.runtime.check_size(text, what)

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
