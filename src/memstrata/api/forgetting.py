"""Deletion: delete, forget (deletion on request) and forget a whole thread or user.

Each call is planned (:mod:`memstrata.api.erasure_plan`), then made by the store in one
transaction (:meth:`erase`) with a journal entry; the copies outside the store (raw trace
lines, index entries, cached vectors, see :meth:`_erase_copies`) are erased after the commit,
the entry marked done, and the database's files proven free of the erased texts. A failure
while erasing the copies leaves the entry pending: a retry of the same call, or the next
:meth:`Memory.open`, finishes it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from memstrata.api.common import (
    DeleteReport,
    MemoryState,
    ScopeLike,
    as_scope,
    content_passages,
    reason_of,
)
from memstrata.api.erasure_plan import ErasurePlanner
from memstrata.api.forget_preview import ForgetPreview, describe, pending_preview
from memstrata.errors import (
    InvalidInputError,
    MemstrataError,
    NotFoundError,
)
from memstrata.ids import kind_of
from memstrata.model import (
    DeleteReason,
    EpisodeFilter,
    Erasure,
    ErasureRecord,
    Fact,
    Scope,
    Site,
)
from memstrata.ports import ImpatientStore
from memstrata.retry import retry_conflicts

log = logging.getLogger(__name__)


def scope_target(scope: Scope) -> str:
    """The journal's name for a whole scope."""
    return f"scope {scope}"


class ForgettingMixin(MemoryState):
    """delete, forget, forget_scope, and finishing erasures left pending."""

    def delete(
        self,
        item_id: str,
        scope: ScopeLike,
        *,
        reason: DeleteReason | str = DeleteReason.USER_REQUEST,
    ) -> DeleteReport:
        """Delete an item. Deleting an episode removes it from the facts and curated bullets
        that cite it (a fact or bullet left citing nothing is deleted, reason
        ``source-deleted``) and erases its raw trace line (a tombstone stays), all store
        changes in one transaction. A deleted fact is not extracted again from its turns.
        Every copy outside the store goes in the same call: search index entries, cached
        vectors (every model, any process), and old pages of the database files (see
        :meth:`_finish`)."""
        scope = as_scope(scope)
        why = reason_of(reason)
        kind = kind_of(item_id)
        if kind not in ("episode", "fact", "document"):
            raise InvalidInputError(f"{item_id} names a {kind}, which cannot be deleted")
        return self._erase_item(item_id, scope, why, whole=False)

    def forget(self, item_id: str, scope: ScopeLike, *, dry_run: bool = False) -> DeleteReport:
        """Delete on request, with everything derived from it: every fact, curated bullet and
        profile value citing a forgotten episode (or carrying a forgotten fact's text), the
        forgotten text in every earlier version of every document, bullet and fact, and the
        raw trace line. A retry after a failure finishes what is left; a retry after success
        says the item is already forgotten (:class:`NotFoundError`).

        With ``dry_run`` nothing changes: the answer is a
        :class:`~memstrata.api.forget_preview.ForgetPreview`, the same report made by the same
        plan and store transaction (rolled back), with the texts of what would go."""
        scope = as_scope(scope)
        kind = kind_of(item_id)
        if kind == "item":
            raise InvalidInputError(
                f"{item_id} is a bullet: delete it from its document with reason user-request "
                "(doc apply), which erases its history too"
            )
        if kind not in ("episode", "fact", "document"):
            raise InvalidInputError(f"{item_id} names a {kind}, which cannot be forgotten")
        return self._erase_item(
            item_id, scope, DeleteReason.USER_REQUEST, whole=True, dry_run=dry_run
        )

    def forget_scope(self, scope: ScopeLike, *, dry_run: bool = False) -> DeleteReport:
        """Forget everything a scope holds: a user (every thread and agent), or one thread
        (or agent) of a user. Every episode, fact and document (identity, profile,
        essentials, topics, state) of the scope and every history entry go; records of the
        user outside the scope lose only what derives from the scope's episodes (the facts,
        bullets and profile values citing them). ``counts`` says how many of
        each kind went, and how many raw trace lines were erased. With ``dry_run``, as for
        :meth:`forget`: what would go, nothing changed."""
        scope = as_scope(scope)
        target = scope_target(scope)
        pending = self.store.find_erasure(scope, target)
        if pending is not None and not self._applied(pending):
            return self._pending_preview(pending) if dry_run else self._finish(pending)
        episodes = [
            e.id for e in self.store.iter_episodes(scope, EpisodeFilter(include_archived=True))
        ]
        facts = [f.id for f in self.store.iter_facts(scope)]
        documents = [d.id for d in self.store.list_documents(scope)]
        if not (episodes or facts or documents):
            said = "" if pending is None else f" (already forgotten at {pending.at.isoformat()})"
            raise NotFoundError(f"scope {scope} holds nothing to forget{said}")
        planned = self._plan_and_erase(
            scope,
            target,
            DeleteReason.USER_REQUEST,
            episodes=episodes,
            facts=facts,
            documents=documents,
            whole=True,
            whole_scope=True,
            dry_run=dry_run,
        )
        return planned if isinstance(planned, ForgetPreview) else self._finish(planned)

    def finish_erasures(self, *, wait: bool = True) -> int:
        """Erase this data directory's copies of every erasure it has not applied yet: those
        left pending here (by a failure, or a crash, after the store transaction) and those
        made through other data directories sharing the store. Then enrols the data directory
        (see :mod:`memstrata.api.sites`) and closes the entries that waited only for data
        directories not seen within the wait. The number applied here.
        :meth:`Memory.open` calls it with ``wait=False``: the copies are erased all the same,
        but the store's notes of it (the enrolment, the journal's marks) do not wait for
        another process's write (a long forget beside a read command); what could not be
        noted is noted by the next opening or sweep. The server's sweep
        (:meth:`start_erasure_sweep`) waits."""
        if wait or not isinstance(self.store, ImpatientStore):
            return self._finish_erasures()
        with self.store.without_waiting():
            return self._finish_erasures()

    def _finish_erasures(self) -> int:
        finished = 0
        site = self._site_of_dir()
        for _ in range(2):  # twice when the store did not know it: it reads what it missed
            started = self.clock.now()
            try:
                todo = (
                    self.store.pending_erasures()
                    if site is None
                    else self.store.erasures_for_site(site)
                )
            except MemstrataError as exc:  # a store that cannot be read says so on its next use
                log.warning("cannot read the erasure journal: %s", exc)
                return finished
            applied = 0
            for record in todo:
                try:
                    self._finish(record)
                    applied += 1
                except MemstrataError as exc:  # busy, read-only, trace not writable: next time
                    log.warning("erasure %s is still pending: %s", record.id, exc)
            finished += applied
            # seen now; with all applied, the next sweep starts from here
            if site is None or not self._enrol(
                site, swept=started if applied == len(todo) else None
            ):
                break
        try:
            waiting = [r for r in self.store.pending_erasures() if site in r.sites]
        except MemstrataError as exc:
            log.warning("cannot read the erasure journal: %s", exc)
            return finished
        for record in waiting:  # applied here; waiting, maybe, for sites gone quiet
            try:
                self._close_erasure(record)
            except MemstrataError as exc:
                log.warning("erasure %s is still pending: %s", record.id, exc)
        return finished

    def sites(self) -> list[Site]:
        """The data directories using the store (this one enrolled first), each with the
        erasures it has still to apply."""
        self._site()
        return self.store.sites()

    def retire_site(self, site: str | None = None) -> int:
        """Stop waiting for a data directory taken out of service (``site``; None: this
        one's, for a data directory about to be deleted), then close the erasures that waited
        only for it. How many were closed. :class:`NotFoundError` when it is not enrolled."""
        name = site if site is not None else self._site()
        if name is None or not self.store.retire_site(name):
            shown = "(this one)" if name is None else repr(name[:80])
            raise NotFoundError(f"no data directory {shown} is enrolled (see `memstrata sites`)")
        if site is None:
            self._site_id = None  # enrolled anew on its next use
        return sum(not self._close_erasure(r) for r in self.store.pending_erasures())

    def start_erasure_sweep(self, interval_s: float) -> None:
        """Run :meth:`finish_erasures` every ``interval_s`` in a daemon thread (stopped by
        :meth:`close`): erasures made through other data directories sharing the store reach
        this one's copies within an interval. The server starts it."""
        from memstrata.api.sites import ErasureSweep

        with self._index_lock:
            if self._sweep is None:
                self._sweep = ErasureSweep(self, interval_s).start()

    # the steps ---------------------------------------------------------------------
    def _erase_item(
        self, item_id: str, scope: Scope, why: DeleteReason, *, whole: bool, dry_run: bool = False
    ) -> DeleteReport:
        record = self.store.find_erasure(scope, item_id)
        if record is not None and not self._applied(record):
            return self._pending_preview(record) if dry_run else self._finish(record)
        kind = kind_of(item_id)
        episodes = [item_id] if kind == "episode" else []
        settled: list[str] = []
        if kind == "fact":
            fact = self._fact_or_none(item_id, scope)  # None: the erasure says what is missing
            if fact is not None:
                settled = list(fact.sources)
                if whole:
                    episodes = self._statements_of(fact, scope)
        try:
            planned = self._plan_and_erase(
                scope,
                item_id,
                why,
                episodes=episodes,
                facts=[item_id] if kind == "fact" else [],
                documents=[item_id] if kind == "document" else [],
                whole=whole,
                settled=settled,
                dry_run=dry_run,
            )
        except NotFoundError:
            record = self.store.find_erasure(scope, item_id)  # another caller may have won
            if record is not None and not self._applied(record):
                return self._pending_preview(record) if dry_run else self._finish(record)
            if record is not None:
                raise NotFoundError(
                    f"{item_id} was already {'forgotten' if whole else 'deleted'} at "
                    f"{record.at.isoformat()}: no copy of it is left in scope {scope}"
                ) from None
            raise
        return planned if isinstance(planned, ForgetPreview) else self._finish(planned)

    def _pending_preview(self, record: ErasureRecord) -> ForgetPreview:
        """What finishing a pending erasure does (the raw trace lines it still has to erase)."""
        lines = 0
        if self.trace is not None and record.episode_ids:
            lines = len(self.trace.residue(record.episode_ids, record.texts))
        return pending_preview(record, lines)

    def _fact_or_none(self, fact_id: str, scope: Scope) -> Fact | None:
        try:
            return self.store.get_fact(scope, fact_id)
        except NotFoundError:
            return None

    def _statements_of(self, fact: Fact, scope: Scope) -> list[str]:
        """The turns (surface ``manual``) made of a fact's own statement when it was added
        without sources: copies of the fact, forgotten with it."""
        return [
            e.id
            for e in self.store.get_episodes(Scope(scope.user), fact.sources)
            if e.surface == "manual" and e.text.strip() == fact.text.strip()
        ]

    def _plan_and_erase(
        self,
        scope: Scope,
        target: str,
        why: DeleteReason,
        *,
        episodes: Sequence[str],
        facts: Sequence[str],
        documents: Sequence[str],
        whole: bool,
        whole_scope: bool = False,
        settled: Sequence[str] = (),
        dry_run: bool = False,
    ) -> ErasureRecord | ForgetPreview:
        """Plan the erasure and have the store make it (with ``dry_run``: make it and roll
        it back, and say what it would have done)."""

        def attempt() -> ErasureRecord | ForgetPreview:
            # planned again from what is stored each time a document changed under the plan
            planner = ErasurePlanner(self.store, scope, set(episodes), whole=whole)
            planner.forget_facts(facts)
            planner.forget_documents(
                documents,
                # a whole scope's history goes whole, in the store
                erase_bullets=why == DeleteReason.USER_REQUEST and not whole_scope,
            )
            planner.rewrite_derived(excluded=set(documents), whole_scope=whole_scope)
            erasure = Erasure(
                target=target,
                reason=why.value,
                episode_ids=tuple(episodes),
                fact_ids=tuple(facts),
                document_ids=(*documents, *planner.unreadable),
                whole_scope=whole_scope,
                derived=whole,
                documents=tuple(planner.writes),
                history=tuple(planner.rewrites),
                texts=(*planner.texts, *self._copied_texts(scope, planner, episodes, documents)),
                settled=tuple(settled),
            )
            if not dry_run:
                return self.store.erase(scope, erasure)
            record = self.store.erase(scope, erasure, dry_run=True)
            return describe(self.store, self.trace, scope, erasure, record, planner.documents)

        return retry_conflicts(attempt)

    def _copied_texts(
        self,
        scope: Scope,
        planner: ErasurePlanner,
        episodes: Sequence[str],
        documents: Sequence[str],
    ) -> list[str]:
        """The texts an erasure's copies outside the store were made from, read before the
        store change: every text the index embeds with the erased turns (their views, and the
        views of the turns after them), and the passages (title and heading, then the bullet)
        the index embedded from the documents the erasure deletes and, in every version of
        the documents it rewrites, from the bullets it removes or changes or whose text it
        erases."""
        texts = self._derived_texts(self.store.get_episodes(scope, episodes))
        bullets: dict[str, set[str]] = {}
        for write in planner.writes:
            bullets.setdefault(write.document_id, set()).update(
                e.item_id for e in write.item_events
            )
        for rewrite in planner.rewrites:
            bullets.setdefault(rewrite.item_id, set())
        whole = {*documents, *planner.unreadable}
        gone = set(planner.texts)
        if not (bullets or whole):
            return sorted(texts)
        for doc in planner.documents.values():  # every document it names, the plan read
            if doc.id not in whole and doc.id not in bullets:
                continue
            ids = bullets.get(doc.id, set())
            versions = [doc.content]
            try:
                history = planner.history(doc)
            except NotFoundError:
                history = []
            versions += [
                e.data["content"] for e in history if isinstance(e.data.get("content"), Mapping)
            ]
            for content in versions:
                texts.update(
                    p.text
                    for text, p in content_passages(content)
                    if doc.id in whole or p.id in ids or text in gone
                )
        return sorted(texts)
