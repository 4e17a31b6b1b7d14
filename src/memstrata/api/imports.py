"""Importing other systems' exports: a dry run first, then an idempotent import.

A keyed batch (:data:`memstrata.importers.KEYED`) gives every turn, fact and bullet a stable
source identity. Its records get deterministic ids (:func:`memstrata.importers.stable_id` of
the user and that identity), so a plan can tell what is new from what an earlier import stored
with one lookup, and importing the same file again adds nothing; a re-export adds only what is
new. What is not a verbatim turn (a fact, a summary, a document bullet) is captured as an
import episode holding the original record, and the fact or bullet cites that episode: every
imported item cites something that exists.

Guards apply as on every write of curated text: the privacy scrub, the size limit, the
confidence threshold of the fact's category (a fact below it is skipped and reported), and
citations that name no episode in memory are not kept (they are counted as unresolved and
recorded in the import episode).

A service of the facade (``memory.imports``): it takes the
:class:`~memstrata.api.runtime.Runtime`, the capture service and the documents service;
:meth:`memstrata.api.Memory.ingest` delegates to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from time import perf_counter
from typing import Final

from memstrata import importers
from memstrata.api.capture import CaptureService
from memstrata.api.curated import clean_text
from memstrata.api.documents import DocumentsService
from memstrata.api.inputs import ImportSource, IngestReport
from memstrata.api.runtime import Runtime
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.importers import ImportBatch, ImportedNote, Skipped, stable_id
from memstrata.importers.base import IMPORT_KEY, digest
from memstrata.model import (
    Category,
    Episode,
    EpisodeFilter,
    Fact,
    HistoryOp,
    JsonValue,
    Role,
    Scope,
    Turn,
    utc,
)
from memstrata.ports import LockingStore, RecordStore

#: the surface of episodes an import captures
SURFACE: Final = "import"
#: how long an import waits for another import into the same user to finish (seconds)
IMPORT_WAIT_S: Final = 600.0
#: ids looked up per query
_CHUNK: Final = 500


@dataclass(slots=True)
class _DocPlan:
    key: str
    title: str
    version: int
    bullets: frozenset[str]
    ops: list[Operation] = field(default_factory=list)
    new: int = 0
    present: int = 0


@dataclass(slots=True)
class _Plan:
    user: str
    episodes: list[Episode] = field(default_factory=list)
    facts: list[Fact] = field(default_factory=list)
    docs: dict[str, _DocPlan] = field(default_factory=dict)
    sources: list[ImportSource] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    present: int = 0
    unresolved: int = 0
    #: new fact id -> the import episodes of earlier versions of its record
    replaces: dict[str, list[str]] = field(default_factory=dict)


def _chunks(ids: Sequence[str]) -> Iterable[Sequence[str]]:
    for start in range(0, len(ids), _CHUNK):
        yield ids[start : start + _CHUNK]


class ImportService:
    """``ingest`` of every format, with a dry run and idempotence for the keyed ones."""

    def __init__(self, runtime: Runtime, capture: CaptureService, docs: DocumentsService) -> None:
        self.runtime = runtime
        self.capture = capture
        self.docs = docs

    @property
    def store(self) -> RecordStore:
        return self.runtime.store

    def ingest(
        self,
        source: str | Path | ImportBatch,
        user: str,
        *,
        fmt: str | None = None,
        dry_run: bool = False,
        all_branches: bool = False,
    ) -> IngestReport:
        """Import a file into ``user``: each conversation goes to thread ``<key>``.

        For the formats of other systems (ChatGPT, Claude, DeerFlow, mem0, MemPalace,
        DeepTutor) the import is idempotent and ``dry_run`` reports what it would add without
        writing. The whole file is parsed and checked before anything is stored.
        """
        if isinstance(source, ImportBatch):
            batch = source
        else:
            if fmt is None:
                raise InvalidInputError(
                    f"name the import format (one of {', '.join(importers.FORMATS)})"
                )
            batch = importers.load(source, fmt, all_branches=all_branches)
        if not batch.keyed:
            if dry_run:
                raise InvalidInputError(
                    f"a dry run is offered for {', '.join(importers.KEYED)}, not {batch.format}"
                )
            return self.capture.ingest(batch, user)
        started = perf_counter()
        Scope(user)  # a clear error for a bad user before anything else
        with self._import_hold(user, dry_run=dry_run):
            plan = self._plan(batch, user, build=not dry_run)
            if not dry_run:
                self._apply(plan)
        return IngestReport(
            source=batch.source,
            format=batch.format,
            conversations=sum(1 for s in plan.sources if s.kind == "conversation" and s.turns),
            turns=sum(s.turns for s in plan.sources),
            questions=0,
            scopes=tuple(
                dict.fromkeys(
                    Scope(user, s.source) for s in plan.sources if s.kind == "conversation"
                )
            ),
            seconds=perf_counter() - started,
            facts=len(plan.facts),
            bullets=sum(s.bullets for s in plan.sources),
            present=plan.present,
            skipped=tuple((s.where, s.reason) for s in plan.skipped),
            unresolved=plan.unresolved,
            dry_run=dry_run,
            sources=tuple(plan.sources),
        )

    def _import_hold(self, user: str, *, dry_run: bool) -> AbstractContextManager[None]:
        """The store's lock on importing into ``user``, held from the plan to its last write
        (a :class:`memstrata.ports.LockingStore`): two imports of one export at once, in two
        processes or two threads, take turns, so the second plans after the first has stored
        and finds its records present, never a duplicate id to refuse. A dry run writes
        nothing and takes no turn."""
        if dry_run or not isinstance(self.store, LockingStore):
            return nullcontext()
        return self.store.hold(f"import:{user}", wait_s=IMPORT_WAIT_S)

    # planning: reads only -----------------------------------------------------------------
    def _plan(self, batch: ImportBatch, user: str, *, build: bool = True) -> _Plan:
        plan = _Plan(user=user, skipped=list(batch.skipped))
        notes = list(batch.notes) + self._markdown_notes(batch, plan)
        self._check_sizes(batch, notes)
        self._plan_turns(batch, plan, build=build)
        self._plan_facts(batch, plan)
        self._plan_notes(batch, notes, plan)
        return plan

    def _check_sizes(self, batch: ImportBatch, notes: Sequence[ImportedNote]) -> None:
        for conv in batch.conversations:
            for turn in conv.turns:
                self.runtime.check_size(
                    turn.text, f"{batch.source}: {turn.metadata.get(IMPORT_KEY)}"
                )
        for fact in batch.facts:
            self.runtime.check_size(fact.text, f"{batch.source}: {fact.key}")
        for note in notes:
            self.runtime.check_size(note.text, f"{batch.source}: {note.key}")

    def _record_episode(
        self,
        user: str,
        fmt: str,
        key: str,
        text: str,
        when: datetime | None,
        meta: dict[str, JsonValue],
    ) -> Episode:
        """The import episode holding an original record (a fact, a summary, a bullet); the
        record's texts are scrubbed of secrets like the episode's own text (capture scrubs
        the metadata)."""
        turn = Turn(
            text=text,
            speaker=fmt,
            role=Role.OTHER,
            time=when,
            session_id=fmt,
            metadata={IMPORT_KEY: key, **meta},
        )
        return self._keyed_episode(user, Scope(user), turn)

    def _keyed_episode(self, user: str, scope: Scope, turn: Turn) -> Episode:
        key = str(turn.metadata[IMPORT_KEY])
        [episode] = self.capture.episodes(
            [self.capture.capture_text(turn, scope)], scope, surface=SURFACE, session_id=None
        )
        return replace(episode, id=stable_id("ep", f"{user}\n{key}", turn.time))

    def _plan_turns(self, batch: ImportBatch, plan: _Plan, *, build: bool) -> None:
        """Ids first (cheap), one lookup, then episodes made (scrubbed) only for new turns,
        and only when they are to be stored (``build``; a dry run counts them)."""
        per_conv: dict[str, list[tuple[str, Turn]]] = {}
        titles: dict[str, str] = {}
        seen: set[str] = set()
        for conv in batch.conversations:
            mine = per_conv.setdefault(conv.key, [])
            title = conv.metadata.get("title")
            titles.setdefault(conv.key, title if isinstance(title, str) else "")
            for turn in conv.turns:
                key = f"{plan.user}\n{turn.metadata[IMPORT_KEY]}"
                episode_id = stable_id("ep", key, turn.time)
                if episode_id not in seen:  # a message listed twice is one turn
                    seen.add(episode_id)
                    mine.append((episode_id, turn))
        existing = self.store.existing_episodes(Scope(plan.user), sorted(seen))
        erased = self.store.erased(Scope(plan.user), sorted(seen - existing))
        for key, turns in per_conv.items():
            forgotten = sum(1 for i, _ in turns if i in erased)
            if forgotten:
                plan.skipped.append(Skipped(key, _forgotten(forgotten, "turn")))
            new = [(i, t) for i, t in turns if i not in existing and i not in erased]
            if new and build:
                scope = Scope(plan.user, key)
                episodes = self.capture.episodes(
                    [self.capture.capture_text(t, scope) for _, t in new],
                    scope,
                    surface=SURFACE,
                    session_id=None,
                )
                plan.episodes.extend(
                    replace(e, id=i) for e, (i, _) in zip(episodes, new, strict=True)
                )
            plan.present += len(turns) - len(new) - forgotten
            plan.sources.append(
                ImportSource(
                    key,
                    "conversation",
                    titles[key],
                    turns=len(new),
                    present=len(turns) - len(new) - forgotten,
                )
            )

    def _thresholds(self) -> dict[Category, float]:
        from memstrata.curate.guards import DEFAULT_THRESHOLDS
        from memstrata.settings import load_settings

        settings = self.runtime.settings or load_settings()
        return {
            **DEFAULT_THRESHOLDS,
            **{Category(k): v for k, v in settings.confidence_thresholds.items()},
        }

    def _plan_facts(self, batch: ImportBatch, plan: _Plan) -> None:
        if not batch.facts:
            return
        thresholds = self._thresholds()
        scope = Scope(plan.user)
        now = self.runtime.clock.now()
        pairs: list[tuple[Episode, Fact]] = []
        for item in sorted(batch.facts, key=lambda f: (f.time or now, f.key)):
            threshold = thresholds[item.category]
            if item.confidence < threshold:
                plan.skipped.append(
                    Skipped(
                        item.key,
                        f"confidence {item.confidence:g} is below the {threshold:g} threshold "
                        f"for {item.category.value}",
                    )
                )
                continue
            meta: dict[str, JsonValue] = {"record": item.record}
            if item.category_from is not None:
                meta["category_from"] = item.category_from
            if item.lineage is not None:
                meta["lineage"] = item.lineage
            episode = self._record_episode(
                plan.user, batch.format, item.key, item.text, item.time, meta
            )
            pairs.append(
                (
                    episode,
                    Fact(
                        id=stable_id("fa", f"{plan.user}\n{item.key}", item.time),
                        scope=scope,
                        text=clean_text(item.text, scope).strip(),
                        category=item.category,
                        confidence=item.confidence,
                        importance=0.5,
                        topic=item.topic,
                        sources=(episode.id,),
                        valid_from=utc(item.time) if item.time else now,
                        valid_to=None,
                        superseded_by=None,
                        created_at=now,
                        updated_at=now,
                    ),
                )
            )
        episodes = self.store.existing_episodes(Scope(plan.user), [e.id for e, _ in pairs])
        facts: set[str] = set()
        for chunk in _chunks(sorted({f.id for _, f in pairs})):
            facts.update(f.id for f in self.store.get_facts(scope, chunk))
        erased = self.store.erased(scope, [i for e, f in pairs for i in (e.id, f.id)])
        new = forgotten = 0
        fresh: list[tuple[Episode, Fact]] = []
        for episode, fact in pairs:
            if fact.id in erased or episode.id in erased:
                forgotten += 1
                continue
            if fact.id in facts or episode.id in episodes:
                plan.present += 1  # imported before (a fact deleted since stays deleted)
                continue
            plan.episodes.append(episode)
            plan.facts.append(fact)
            fresh.append((episode, fact))
            new += 1
        if forgotten:
            plan.skipped.append(Skipped("facts", _forgotten(forgotten, "fact")))
        self._earlier_versions(batch.format, fresh, plan)
        plan.sources.append(
            ImportSource(
                "facts", "facts", batch.format, facts=new, present=len(pairs) - new - forgotten
            )
        )

    def _earlier_versions(
        self, fmt: str, fresh: Sequence[tuple[Episode, Fact]], plan: _Plan
    ) -> None:
        """The import episodes of earlier versions of the records the new facts come from."""
        lineages = {str(e.metadata["lineage"]): f.id for e, f in fresh if "lineage" in e.metadata}
        if not lineages:
            return
        new_ids = {e.id for e, _ in fresh}
        filters = EpisodeFilter(surface=SURFACE, session_id=fmt)
        for old in self.store.iter_episodes(Scope(plan.user), filters):
            lineage = old.metadata.get("lineage")
            if isinstance(lineage, str) and lineage in lineages and old.id not in new_ids:
                plan.replaces.setdefault(lineages[lineage], []).append(old.id)

    def _markdown_notes(self, batch: ImportBatch, plan: _Plan) -> list[ImportedNote]:
        """The cited bullets of markdown documents, as notes (uncited ones are skipped)."""
        from memstrata.document.format import parse
        from memstrata.document.service import ESSENTIALS_KEY, IDENTITY_KEY, topic_slug

        notes: list[ImportedNote] = []
        for md in batch.markdown:
            try:
                doc = parse(md.text)
            except InvalidInputError as exc:
                raise ImportFormatError(str(exc), source=batch.source) from None
            key = topic_slug(doc.title) or topic_slug(md.doc) or batch.format
            if key in (ESSENTIALS_KEY, IDENTITY_KEY):
                key = f"{batch.format}-{key}"
            for section in doc.sections:
                for number, bullet in enumerate(section.bullets, start=1):
                    where = f"{key}: {section.heading} bullet {number}"
                    if not bullet.text.strip():
                        plan.skipped.append(Skipped(where, "empty bullet"))
                        continue
                    if not bullet.citations:
                        plan.skipped.append(Skipped(where, "cites nothing"))
                        continue
                    identity = bullet.id or digest(f"{section.heading}\n{bullet.text}")
                    cites = tuple(str(c) for c in bullet.citations)
                    notes.append(
                        ImportedNote(
                            key=f"{batch.format}:{key}:{identity}:{digest(bullet.text)}",
                            doc=key,
                            title=doc.title,
                            section=section.heading,
                            text=bullet.text,
                            time=None,
                            record={
                                "id": bullet.id,
                                "section": section.heading,
                                "cites": list(cites),
                            },
                            cites=cites,
                            bullet=f"{batch.format}:{key}:{identity}",
                        )
                    )
        return notes

    def _plan_notes(self, batch: ImportBatch, notes: Sequence[ImportedNote], plan: _Plan) -> None:
        if not notes:
            return
        scope = Scope(plan.user)
        cited = [c.partition(":")[2] for n in notes for c in n.cites]
        resolvable = self.store.existing_episodes(Scope(plan.user), cited) if cited else set()
        episodes = [
            self._record_episode(
                plan.user,
                batch.format,
                n.key,
                n.text,
                n.time,
                {"record": n.record, "document": n.doc, "section": n.section},
            )
            for n in notes
        ]
        existing = self.store.existing_episodes(Scope(plan.user), [e.id for e in episodes])
        bullet_ids = [stable_id("m", f"{plan.user}\n{n.bullet or n.key}") for n in notes]
        erased = self.store.erased(scope, [*(e.id for e in episodes), *bullet_ids])
        for note, episode in zip(notes, episodes, strict=True):
            if note.doc not in plan.docs:
                current, version = self.docs.documents.get(scope, note.doc)
                plan.docs[note.doc] = _DocPlan(
                    note.doc,
                    note.title,
                    version,
                    frozenset(b.id for s in current.sections for b in s.bullets),
                )
            docplan = plan.docs[note.doc]
            bullet_id = stable_id("m", f"{plan.user}\n{note.bullet or note.key}")
            if episode.id in erased or bullet_id in erased:
                plan.skipped.append(Skipped(note.key, _forgotten(1, "bullet")))
                continue
            if episode.id in existing or any(op.id == bullet_id for op in docplan.ops):
                docplan.present += 1
                continue
            kept = []
            for text in note.cites:
                surface, _, episode_id = text.partition(":")
                if episode_id in resolvable:
                    kept.append(Citation(surface, episode_id))
                else:
                    plan.unresolved += 1
            plan.episodes.append(episode)
            kind = OpKind.EDIT if bullet_id in docplan.bullets else OpKind.ADD
            docplan.ops.append(
                Operation(
                    kind,
                    bullet_id,
                    section=note.section if kind == OpKind.ADD else None,
                    text=note.text,
                    citations=(Citation(SURFACE, episode.id), *kept),
                )
            )
            docplan.new += 1
        for docplan in plan.docs.values():
            plan.present += docplan.present
            plan.sources.append(
                ImportSource(
                    docplan.key,
                    "document",
                    docplan.title,
                    bullets=docplan.new,
                    present=docplan.present,
                )
            )

    # applying -----------------------------------------------------------------------------
    def _apply(self, plan: _Plan) -> None:
        """Store the plan: episodes in one transaction, then facts, then each document in one
        compare-and-swap. Should a later step fail, running the import again completes it."""
        from memstrata.curate.supersede import supersede_older

        scope = Scope(plan.user)
        if plan.episodes:
            self.store.add_episodes(scope, plan.episodes)
            self.capture.trace_episodes(SURFACE, plan.episodes)
        now = self.runtime.clock.now()
        for fact in plan.facts:
            stored = self.store.add_fact(scope, fact)
            supersede_older(self.store, scope, stored, now=now)
            earlier = plan.replaces.get(fact.id, [])
            for old in self.store.facts_citing(scope, earlier) if earlier else ():
                if old.current and old.id != fact.id:
                    self.store.update_fact(
                        scope,
                        old.evolve(
                            valid_to=max(fact.valid_from, old.valid_from),
                            superseded_by=fact.id,
                            updated_at=now,
                        ),
                        expected_version=old.version,
                        op=HistoryOp.SUPERSEDE.value,
                    )
        for docplan in plan.docs.values():
            if docplan.ops:
                self.docs.apply_doc(
                    docplan.key, scope, docplan.ops, expected_version=docplan.version
                )
        if plan.episodes or plan.facts:
            self.runtime.written(scope)
            self.runtime.touched(scope)


def _forgotten(count: int, kind: str) -> str:
    """Why records deleted or forgotten earlier are skipped."""
    noun = kind if count == 1 else f"{kind}s"
    return (
        f"{count} {noun} deleted or forgotten earlier: not imported again (remember one anew "
        "to bring it back)"
    )
