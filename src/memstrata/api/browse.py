"""Browsing a memory as a person looks at it: which users hold memory, the threads and
agents of a user, the sessions of a scope and their turns, and facts by category, topic and
validity (with what replaced a superseded fact).

Everything here reads through the store's scoped methods, so isolation holds as for any
other read: a scope sees nothing of another user, and a session or fact outside it is absent.
A service of the facade (``memory.browse``) over the store alone; :class:`memstrata.api.Memory`
delegates its browsing methods to it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final, Literal

from memstrata.api.inputs import ScopeLike, as_scope, category_of, slot_of
from memstrata.codec import format_time
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.ids import kind_of
from memstrata.model import (
    Episode,
    EpisodeFilter,
    Fact,
    FactFilter,
    JsonValue,
    Scope,
    ScopeSummary,
    SessionSummary,
)
from memstrata.ports import RecordStore, SummarizingStore

#: which facts a fact listing shows: those that hold now, those that no longer hold
#: (superseded or expired: ``valid_to`` set), or both
Validity = Literal["current", "superseded", "all"]
VALIDITIES: Final = ("current", "superseded", "all")
#: the most items one browsing page holds
MAX_BROWSE_PAGE: Final = 10_000
#: facts read from the store at a time while a listing keeps to one validity
_FACT_BATCH: Final = 500


def _time(value: datetime | None) -> str | None:
    return None if value is None else format_time(value)


def _check_page(limit: int) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_BROWSE_PAGE:
        raise InvalidInputError(f"limit must be between 1 and {MAX_BROWSE_PAGE}, got {limit!r}")


@dataclass(frozen=True, slots=True)
class UserSummary:
    """A user that holds memory: how much, and when it last spoke."""

    user: str
    episodes: int
    facts: int
    facts_superseded: int
    documents: int
    first_time: datetime | None
    last_time: datetime | None

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "user": self.user,
            "episodes": self.episodes,
            "facts": self.facts,
            "facts_superseded": self.facts_superseded,
            "documents": self.documents,
            "first_time": _time(self.first_time),
            "last_time": _time(self.last_time),
        }


def scope_summary_to_json(summary: ScopeSummary) -> dict[str, JsonValue]:
    return {
        "thread": summary.thread,
        "agent": summary.agent,
        "episodes": summary.episodes,
        "sessions": summary.sessions,
        "facts": summary.facts,
        "documents": summary.documents,
        "first_time": _time(summary.first_time),
        "last_time": _time(summary.last_time),
    }


def session_summary_to_json(summary: SessionSummary) -> dict[str, JsonValue]:
    return {
        "session_id": summary.session_id,
        "thread": summary.thread,
        "agent": summary.agent,
        "first_time": format_time(summary.first_time),
        "last_time": format_time(summary.last_time),
        "turns": summary.turns,
        "speakers": list(summary.speakers),
        "surface": summary.surfaces[0],
        "surfaces": list(summary.surfaces),
    }


@dataclass(frozen=True, slots=True)
class FactView:
    """A fact as a listing shows it: with the text of the fact that superseded it, if any."""

    fact: Fact
    superseded_by_text: str | None


class BrowseService:
    """Read-only views for people browsing a memory (the web workbench)."""

    def __init__(self, store: RecordStore) -> None:
        self.store = store

    def users(
        self, allowed: Collection[str] | None = None, *, after: str | None = None, limit: int = 100
    ) -> list[UserSummary]:
        """The users holding memory (among ``allowed``; None: every user), in name order
        after ``after``, at most ``limit``, each with its counts and its time span."""
        _check_page(limit)
        names = [
            u
            for u in self.store.users()
            if (allowed is None or u in allowed) and (after is None or u > after)
        ]
        summaries = []
        for name in sorted(names)[:limit]:
            stats = self.store.stats(Scope(name))
            summaries.append(
                UserSummary(
                    user=name,
                    episodes=stats.episodes,
                    facts=stats.facts_current,
                    facts_superseded=stats.facts_superseded,
                    documents=sum(stats.documents.values()),
                    first_time=stats.first_time,
                    last_time=stats.last_time,
                )
            )
        return summaries

    def scopes(self, user: ScopeLike) -> list[ScopeSummary]:
        """The threads and agents of ``user`` present in the store (the records outside any
        thread or agent make the entry whose thread and agent are None), newest activity
        first, each with its counts."""
        scope = as_scope(user).user_scope()
        if isinstance(self.store, SummarizingStore):
            found = self.store.scope_summaries(scope.user)
        else:
            found = _read_scope_summaries(self.store, scope)
        return sorted(
            found,
            key=lambda s: (
                s.last_time is not None,
                s.last_time or datetime.min.replace(tzinfo=UTC),
                s.thread or "",
                s.agent or "",
            ),
            reverse=True,
        )

    def sessions(self, scope: ScopeLike) -> list[SessionSummary]:
        """The sessions of the scope's turns, newest first (by their last turn). A session
        is one ``session_id`` in one thread and agent."""
        scope = as_scope(scope)
        if isinstance(self.store, SummarizingStore):
            found = self.store.session_summaries(scope)
        else:
            found = _read_session_summaries(self.store, scope)
        return sorted(
            found,
            key=lambda s: (s.last_time, s.first_time, s.session_id, s.thread or "", s.agent or ""),
            reverse=True,
        )

    def session(self, session_id: str, scope: ScopeLike) -> list[Episode]:
        """Every turn of the session in the scope, archived ones included, in the order
        they were spoken; :class:`NotFoundError` when the scope has no such session."""
        scope = as_scope(scope)
        if not isinstance(session_id, str) or not session_id.strip():
            raise InvalidInputError("the session id is empty")
        turns = list(
            self.store.iter_episodes(
                scope, EpisodeFilter(session_id=session_id, include_archived=True)
            )
        )
        if not turns:
            raise NotFoundError(f"no session {session_id!r} in {scope}")
        return sorted(turns, key=lambda e: (e.time, e.id))

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
        """One page of the scope's facts in id order (after the id ``after``), keeping to a
        ``category``, a ``topic``, a validity: ``current`` (holding now), ``superseded``
        (no longer holding: superseded or expired) or ``all``, a ``slot`` (exactly) and a
        ``slot_kind`` (slots of that kind: the kind itself, or ``kind:`` and a qualifier).
        A fact that was superseded comes with the text of the fact that replaced it."""
        scope = as_scope(scope)
        _check_page(limit)
        if valid not in VALIDITIES:
            raise InvalidInputError(
                f"unknown validity {valid!r}; expected one of {', '.join(VALIDITIES)}"
            )
        if after is not None and kind_of(after) != "fact":
            raise InvalidInputError(f"the cursor {after!r} is not a fact id")
        filters = FactFilter(
            category=None if category is None else category_of(category),
            topic=topic,
            current_only=valid == "current",
            slot=slot_of(slot, "the slot filter"),
            slot_kind=slot_of(slot_kind, "the slot_kind filter"),
        )
        if valid != "superseded":  # the store's filter is exact: one page
            chosen = self.store.list_facts(scope, filters, after=after, limit=limit)
            return self._with_successors(chosen)
        chosen = []
        cursor = after
        while len(chosen) < limit:  # no longer holding: read in batches, keep those ended
            batch = self.store.list_facts(scope, filters, after=cursor, limit=_FACT_BATCH)
            chosen.extend(f for f in batch if f.valid_to is not None)
            if len(batch) < _FACT_BATCH:
                break
            cursor = batch[-1].id
        return self._with_successors(chosen[:limit])

    def _with_successors(self, facts: Iterable[Fact]) -> list[FactView]:
        facts = list(facts)
        successors: dict[str, str] = {}
        by_user: dict[str, list[str]] = {}
        for fact in facts:
            if fact.superseded_by is not None:
                by_user.setdefault(fact.scope.user, []).append(fact.superseded_by)
        for user, ids in by_user.items():
            for successor in self.store.get_facts(Scope(user), sorted(set(ids))):
                successors[successor.id] = successor.text
        return [
            FactView(f, None if f.superseded_by is None else successors.get(f.superseded_by))
            for f in facts
        ]


def _read_scope_summaries(store: RecordStore, scope: Scope) -> list[ScopeSummary]:
    """:meth:`SummarizingStore.scope_summaries` for a store that cannot: read the records."""
    turns: dict[tuple[str | None, str | None], list[Episode]] = {}
    for episode in store.iter_episodes(scope):
        turns.setdefault((episode.scope.thread, episode.scope.agent), []).append(episode)
    facts = Counter((f.scope.thread, f.scope.agent) for f in store.iter_facts(scope))
    docs = Counter((d.scope.thread, d.scope.agent) for d in store.list_documents(scope))
    out = []
    for thread, agent in {*turns, *facts, *docs}:
        these = turns.get((thread, agent), [])
        times = [e.time for e in these]
        out.append(
            ScopeSummary(
                thread,
                agent,
                episodes=len(these),
                sessions=len({e.session_id for e in these}),
                facts=facts[(thread, agent)],
                documents=docs[(thread, agent)],
                first_time=min(times, default=None),
                last_time=max(times, default=None),
            )
        )
    return out


def _read_session_summaries(store: RecordStore, scope: Scope) -> list[SessionSummary]:
    """:meth:`SummarizingStore.session_summaries` for a store that cannot: read the turns."""
    sessions: dict[tuple[str | None, str | None, str], list[Episode]] = {}
    for episode in store.iter_episodes(scope):
        key = (episode.scope.thread, episode.scope.agent, episode.session_id)
        sessions.setdefault(key, []).append(episode)
    out = []
    for (thread, agent, session_id), turns in sessions.items():
        ordered = sorted(turns, key=lambda e: (e.time, e.id))
        out.append(
            SessionSummary(
                session_id=session_id,
                thread=thread,
                agent=agent,
                first_time=ordered[0].time,
                last_time=max(e.time for e in turns),
                turns=len(turns),
                speakers=tuple(sorted({e.speaker for e in turns if e.speaker})),
                surfaces=tuple(dict.fromkeys(e.surface for e in ordered)),
            )
        )
    return out
