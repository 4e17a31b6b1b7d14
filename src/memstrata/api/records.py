"""Reading and changing any item: facts filed by hand, get, update, history, list, stats,
sizes, export.

A service of the facade (``memory.records``): it takes the
:class:`~memstrata.api.runtime.Runtime` and the capture service (a fact filed without sources
cites a turn captured for it); :class:`memstrata.api.Memory` delegates to it. Deleting and
forgetting are the erasure's (:mod:`memstrata.api.forgetting`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, TypeVar

from memstrata.api.capture import CaptureService
from memstrata.api.curated import (
    clean_content,
    clean_slot,
    clean_text,
    clean_value,
    clean_when,
    in_store,
    require_episodes,
)
from memstrata.api.inputs import (
    FACT_FIELDS,
    ListKind,
    Record,
    ScopeLike,
    as_scope,
    category_of,
    check_unit,
    slot_of,
    time_of,
    when_of,
)
from memstrata.api.runtime import Runtime
from memstrata.codec import episode_to_json, format_time, record_to_json
from memstrata.errors import ConflictError, InvalidInputError
from memstrata.ids import kind_of, new_id
from memstrata.model import (
    Category,
    Document,
    EpisodeFilter,
    Fact,
    FactFilter,
    HistoryOp,
    ItemVersion,
    JsonValue,
    Role,
    Scope,
    Stats,
    Turn,
    When,
)
from memstrata.ports import RecordStore, SizingStore

#: the largest page :meth:`RecordsService.list` returns
MAX_PAGE: Final = 10_000


class RecordsService:
    """Facts added by hand, and reading and changing any item."""

    def __init__(self, runtime: Runtime, capture: CaptureService) -> None:
        self.runtime = runtime
        self.capture = capture

    @property
    def store(self) -> RecordStore:
        return self.runtime.store

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
        """Add a fact. With no ``sources`` the statement itself is captured as an episode
        (surface ``manual``) and cited, so every fact keeps its provenance. A fact that
        contradicts a current one (same subject, same single-valued slot, another value)
        supersedes it: the old fact is closed, not deleted.

        ``when`` is the time the fact speaks of: a :class:`When`, or a mapping with
        ``start`` and ``end`` (ISO 8601; without a zone, UTC) and optionally ``text``, the
        words that named it (left out: a rendering of the interval, see
        :meth:`When.between`). ``slot`` names the state the fact sets for its subject
        (``employer``, ``allergy:shrimp``); surrounding spaces are stripped; ``value`` is the
        slot's value ("CATL"), what the profile shows for it (only with a slot)."""
        scope = as_scope(scope)
        fact_when = clean_when(when_of(when), scope)
        fact_slot = clean_slot(slot_of(slot), scope)
        fact_value = clean_value(value, scope)
        if fact_value is not None and fact_slot is None:
            raise InvalidInputError("a fact's value is the value of its slot: give a slot too")
        if not isinstance(text, str) or not text.strip():
            raise InvalidInputError("fact text is empty")
        self.runtime.check_size(text, "the fact text")
        if topic is not None and not isinstance(topic, str):
            raise InvalidInputError(f"a fact topic is text, not {type(topic).__name__}")
        category = category_of(category)
        text = clean_text(text, scope)
        check_unit("confidence", confidence)
        check_unit("importance", importance)
        if not sources:
            sources = [
                self.capture.remember(Turn(text=text, role=Role.USER), scope, surface="manual")[
                    0
                ].id
            ]
        now = self.runtime.clock.now()
        fact = Fact(
            id=new_id("fa"),
            scope=scope,
            text=text.strip(),
            category=category,
            confidence=float(confidence),
            importance=float(importance),
            topic=topic,
            sources=tuple(sources),
            valid_from=time_of("valid_from", valid_from) if valid_from else now,
            valid_to=None,
            superseded_by=None,
            created_at=now,
            updated_at=now,
            when=fact_when,
            slot=fact_slot,
            value=fact_value,
        )
        stored = self.store.add_fact(scope, fact)
        self.runtime.written(scope)
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

        A fact's ``when`` and ``slot`` are given as :meth:`add_fact` takes them; None
        clears them.

        With ``expected_version`` the write is a strict compare-and-swap; without it the
        current version is read and, while other writers get in first, read again and the write
        retried with jittered exponential backoff up to a deadline
        (:data:`memstrata.retry.UPDATE_DEADLINE_S`). Episodes are verbatim and cannot be
        edited.
        """
        from memstrata.retry import retry_conflicts

        scope = as_scope(scope)
        kind = kind_of(item_id)
        if kind == "episode":
            raise InvalidInputError("episodes are verbatim and cannot be edited; delete it instead")
        if not changes:
            raise InvalidInputError("nothing to update")
        if kind not in ("fact", "document"):
            raise InvalidInputError(f"{item_id} names a {kind}, which cannot be updated")

        def attempt() -> Fact | Document:
            if kind == "fact":
                return self._update_fact(item_id, scope, expected_version, changes)
            return self._update_document(item_id, scope, expected_version, changes)

        return attempt() if expected_version is not None else retry_conflicts(attempt)

    def _update_fact(
        self, fact_id: str, scope: Scope, expected: int | None, changes: dict[str, Any]
    ) -> Fact:
        unknown = sorted(set(changes) - FACT_FIELDS)
        if unknown:
            raise InvalidInputError(
                f"cannot update fact field(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(sorted(FACT_FIELDS))}"
            )
        current = self.store.get_fact(scope, fact_id)
        values = dict(changes)
        if "category" in values:
            values["category"] = category_of(values["category"])
        for name in ("confidence", "importance"):
            if name in values:
                check_unit(name, values[name])
                values[name] = float(values[name])
        if "text" in values and (not isinstance(values["text"], str) or not values["text"].strip()):
            raise InvalidInputError("fact text is empty")
        if "text" in values:
            self.runtime.check_size(values["text"], "the fact text")
            values["text"] = clean_text(values["text"], scope).strip()
        if "sources" in values:
            sources = values["sources"]
            if not isinstance(sources, list | tuple) or not all(
                isinstance(s, str) for s in sources
            ):
                raise InvalidInputError("sources must be a list of episode ids")
            values["sources"] = tuple(sources)
            if not values["sources"]:
                raise InvalidInputError(f"fact {fact_id} must cite at least one episode")
            require_episodes(
                self.store,
                current.scope,
                (s for s in values["sources"] if s not in current.sources),
                what=f"fact {fact_id}",
            )
        if "when" in values:
            values["when"] = clean_when(when_of(values["when"]), scope)
        if "slot" in values:
            values["slot"] = clean_slot(slot_of(values["slot"]), scope)
        if "value" in values:
            values["value"] = clean_value(values["value"], scope)
        if values.get("superseded_by") is not None:
            self._check_successor(current, values["superseded_by"])
        for name in ("valid_from", "valid_to"):
            if name in values:
                values[name] = _validity_time(name, values[name])
        valid_from = values.get("valid_from", current.valid_from)
        valid_to = values.get("valid_to", current.valid_to)
        if valid_to is not None and valid_to < valid_from:
            raise InvalidInputError(
                f"valid_to {format_time(valid_to)} is before valid_from {format_time(valid_from)}"
            )
        if current.evolve(**values) == current:
            return _unchanged(current, expected)
        updated = current.evolve(**values, updated_at=self.runtime.clock.now())
        op = "supersede" if values.get("superseded_by") else "update"
        return self.store.update_fact(
            scope,
            updated,
            expected_version=current.version if expected is None else expected,
            op=op,
        )

    def _check_successor(self, fact: Fact, successor: object) -> None:
        """``superseded_by`` names another fact of the same user."""
        if not isinstance(successor, str) or kind_of(successor) != "fact":
            raise InvalidInputError(f"superseded_by must be a fact id (fa_...), not {successor!r}")
        if successor == fact.id:
            raise InvalidInputError(f"fact {fact.id} cannot be superseded by itself")
        self.store.get_fact(Scope(fact.scope.user), successor)  # NotFoundError when absent

    def _update_document(
        self, doc_id: str, scope: Scope, expected: int | None, changes: dict[str, Any]
    ) -> Document:
        if set(changes) != {"content"} or not isinstance(changes["content"], Mapping):
            raise InvalidInputError(
                "a document update takes exactly one field, content (a mapping)"
            )
        current = self.store.get_document_by_id(scope, doc_id)
        content = clean_content(
            in_store(self.store), current.scope, current.kind, changes["content"], current.content
        )
        if content == current.content:
            return _unchanged(current, expected)
        return self.store.put_document(
            current.scope,
            current.kind,
            current.key,
            content,
            expected_version=current.version if expected is None else expected,
        )

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
        """One page of the scope's records of one kind, in id order; ``limit`` is 1 to
        :data:`MAX_PAGE`."""
        scope = as_scope(scope)
        if after is not None:
            kind_of(after)  # a cursor is an id; anything else is a mistake, not an empty page
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
            raise InvalidInputError(f"limit must be between 1 and {MAX_PAGE}, got {limit!r}")
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

    def sizes(self, scope: ScopeLike) -> dict[str, int]:
        """UTF-8 bytes of the scope's stored text by kind: ``episode``, ``fact`` and each
        document kind held (its JSON content), and their ``total``."""
        scope = as_scope(scope)
        if isinstance(self.store, SizingStore):
            sizes = self.store.text_bytes(scope)
        else:  # a store that cannot count them: read the records
            sizes = {
                "episode": sum(_utf8(e.text) for e in self.store.iter_episodes(scope)),
                "fact": sum(_utf8(f.text) for f in self.store.iter_facts(scope)),
            }
            for doc in self.store.list_documents(scope):
                body = json.dumps(dict(doc.content), ensure_ascii=False)
                sizes[doc.kind.value] = sizes.get(doc.kind.value, 0) + _utf8(body)
        return {**sizes, "total": sum(sizes.values())}

    def record_counts(self) -> dict[str, int]:
        """Records of every user by kind (for operators: the server's metrics); not scoped."""
        return self.store.record_counts()

    def export(self, scope: ScopeLike) -> Iterator[dict[str, JsonValue]]:
        """Every record of the scope as JSON objects: episodes, then facts, then documents."""
        scope = as_scope(scope)
        for episode in self.store.iter_episodes(scope):
            yield record_to_json(episode)
        for fact in self.store.iter_facts(scope):
            yield record_to_json(fact)
        for doc in self.store.list_documents(scope):
            yield record_to_json(doc)


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _validity_time(name: str, value: object) -> datetime | None:
    """A fact's ``valid_from`` or ``valid_to`` as given to :meth:`RecordsService.update`: a
    datetime or ISO 8601 text; ``valid_to`` may be None (the fact holds again)."""
    if value is None and name == "valid_to":
        return None
    return time_of(name, value)


R = TypeVar("R", Fact, Document)


def _unchanged(current: R, expected: int | None) -> R:
    """``current`` as it is, for an update that changes nothing: no new version, no history
    row; a stale ``expected`` version is still a conflict, as the write would have been."""
    if expected is not None and expected != current.version:
        raise ConflictError(current.id, expected, current.version)
    return current
