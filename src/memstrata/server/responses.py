"""What the HTTP API (and the MCP server) answers with for records, hits, history, stats and
documents: the JSON encoding of :mod:`memstrata.codec`, stated as pure pydantic models so
the OpenAPI document describes every answer. The models read what the codec writes; they add
nothing to it."""

from __future__ import annotations

from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, Field

T = TypeVar("T")

#: a scope as the codec writes it: the user, and the thread and agent when given
ScopeOut = dict[str, str]


class Page(BaseModel, Generic[T]):
    """One page of a list; ``next_cursor`` asks for the next one (null on the last)."""

    items: list[T]
    next_cursor: str | None = Field(None, description="pass as `cursor` for the next page")


class EpisodeOut(BaseModel):
    """A turn, stored verbatim."""

    id: str
    kind: Literal["episode"]
    scope: ScopeOut
    surface: str
    session_id: str
    speaker: str | None
    role: str
    text: str
    time: str
    metadata: dict[str, Any]
    archived: bool


class WhenOut(BaseModel):
    """The time a fact speaks of: the words that said it and the interval they name."""

    text: str = Field(description="the words, as said ('last Friday', '下个月', 'in May')")
    start: str = Field(description="where the interval starts (included), UTC")
    end: str = Field(description="where it ends (not included), UTC")


class FactOut(BaseModel):
    """An atomic fact, with the episodes it rests on, when it held, the time it speaks of
    and the state it sets for its subject."""

    id: str
    kind: Literal["fact"]
    scope: ScopeOut
    text: str
    category: str
    confidence: float
    importance: float
    topic: str | None
    sources: list[str]
    valid_from: str
    valid_to: str | None
    superseded_by: str | None
    created_at: str
    updated_at: str
    access_count: int
    version: int
    when: WhenOut | None = Field(description="the time the fact speaks of (null: none named)")
    slot: str | None = Field(
        description="the state it sets for its subject, kind or kind:qualifier "
        "(employer, allergy:shrimp); facts of one subject with one slot supersede each other"
    )
    value: str | None = Field(
        None,
        description="the slot's value as said (CATL, husband 王磊); null: none, or a fact "
        "that ends a state",
    )


class DocumentOut(BaseModel):
    """A curated document (identity, profile, essentials, topic) as stored."""

    id: str
    kind: Literal["document"]
    scope: ScopeOut
    doc_kind: str
    key: str
    content: dict[str, Any]
    version: int
    created_at: str
    updated_at: str


#: any stored record; ``kind`` tells them apart
RecordOut = Annotated[EpisodeOut | FactOut | DocumentOut, Field(discriminator="kind")]


class VersionOut(BaseModel):
    """One version of an item: what it was after the operation."""

    item_id: str
    version: int
    op: str
    at: str
    reason: str | None
    data: dict[str, Any]


class HitOut(BaseModel):
    """A search hit with its score components."""

    id: str
    granularity: str
    score: float
    components: dict[str, float]
    text: str
    scope: ScopeOut
    session_id: str | None
    speaker: str | None
    time: str | None
    episodes: list[str] = Field(description="granularity session: the turns of the session")
    topic: str | None
    bullets: list[str] = Field(description="granularity topic: the best bullets' ids")


class StatsOut(BaseModel):
    scope: ScopeOut
    episodes: int
    archived_episodes: int
    sessions: int
    speakers: int
    facts_current: int
    facts_superseded: int
    documents: dict[str, int]
    first_time: str | None
    last_time: str | None
    bytes: dict[str, int] = Field(
        description="UTF-8 bytes of stored text by kind: episode, fact, each document kind "
        "(its JSON content), and total"
    )


class HealthOut(BaseModel):
    status: Literal["ok"]
    version: str
    migrations: list[str]


class DocOut(BaseModel):
    """A curated document as markdown, with the version a change must name."""

    key: str
    version: int
    markdown: str


class PreviewOut(BaseModel):
    """What a change would do: the operations (markdown edits become operations), the diff,
    and the document after it."""

    key: str
    base_version: int
    operations: list[dict[str, Any]]
    diff: str
    after: str


class AppliedOut(PreviewOut):
    """An applied change: the document as stored, and its new version."""

    version: int


class RecordPage(Page[RecordOut]):
    """A page of records in id order."""


class VersionPage(Page[VersionOut]):
    """A page of an item's versions, oldest first."""


class HitPage(Page[HitOut]):
    """A page of search hits, best first; ``partial`` when some records of the scope have
    no dense vector yet (being embedded in the background) and were ranked by their words."""

    partial: bool = Field(False, description="some records were ranked by their words alone")
    pending: int = Field(0, ge=0, description="how many records still wait for their vectors")


class KeyOut(BaseModel):
    """An API key as listed: its public fields, never the key itself."""

    id: str
    prefix: str = Field(description="the key's first characters, to tell keys apart")
    name: str
    role: Literal["admin", "writer", "reader"]
    users: list[str] | None = Field(description="the users it serves; null: every user")
    created_at: str
    revoked_at: str | None
    active: bool


class NewKeyOut(KeyOut):
    """A key just made: ``key`` is the key itself, shown this once."""

    key: str


class KeyPage(Page[KeyOut]):
    """One page of API keys."""


class RememberOut(BaseModel):
    """The turns stored, as episodes (the MCP tool ``remember``)."""

    episodes: list[EpisodeOut]


# --- browsing (the web workbench) ---------------------------------------------------------


class CallerKeyOut(BaseModel):
    """The key a request presents, by its public fields (never the key itself)."""

    id: str
    name: str
    prefix: str = Field(description="the key's first characters, to tell keys apart")


class MeOut(BaseModel):
    """Who is calling: how the server checks callers, the caller's role, the users it may
    act on, and its key."""

    mode: Literal["keys", "local"] = Field(
        description="keys: every request presents an API key; local: no keys, loopback only"
    )
    role: Literal["admin", "writer", "reader"]
    users: list[str] | None = Field(description="the users the caller may act on; null: every user")
    key: CallerKeyOut | None = Field(description="the key presented; null in local mode")


class UserSummaryOut(BaseModel):
    """A user holding memory, with its counts and the times of its first and last turn."""

    user: str
    episodes: int
    facts: int = Field(description="facts holding now")
    facts_superseded: int = Field(description="facts that no longer hold")
    documents: int
    first_time: str | None
    last_time: str | None = Field(description="the time of the user's latest turn")


class UserPage(Page[UserSummaryOut]):
    """A page of users in name order."""


class ScopeSummaryOut(BaseModel):
    """A thread and agent of a user (null: records outside any thread or agent)."""

    thread: str | None
    agent: str | None
    episodes: int
    sessions: int
    facts: int
    documents: int
    first_time: str | None
    last_time: str | None = Field(description="the time of the scope's latest turn")


class ScopesOut(BaseModel):
    """The threads and agents of a user present in the store, newest activity first."""

    user: str
    items: list[ScopeSummaryOut]


class SessionSummaryOut(BaseModel):
    """A session: one session id in one thread and agent."""

    session_id: str
    thread: str | None
    agent: str | None
    first_time: str
    last_time: str
    turns: int
    speakers: list[str]
    surface: str = Field(description="the surface of the session's first turn")
    surfaces: list[str] = Field(description="every surface of its turns, in order of appearance")


class SessionPage(Page[SessionSummaryOut]):
    """A page of sessions, newest first (by their last turn)."""


class SessionOut(BaseModel):
    """A session's verbatim turns in the order they were spoken (archived ones included)."""

    session_id: str
    turns: list[EpisodeOut]


class FactViewOut(FactOut):
    """A fact as a listing shows it: a superseded fact also carries the replacing fact's text."""

    superseded_by_text: str | None = Field(
        description="the text of the fact in superseded_by (null when none, or it is gone)"
    )


class FactViewPage(Page[FactViewOut]):
    """A page of facts in id order."""


# --- audit --------------------------------------------------------------------------------


class AuditCitationOut(BaseModel):
    """A citation of a flagged bullet, with the cited turn when it still exists."""

    citation: str = Field(description="surface:episode id, as the document writes it")
    episode_id: str
    exists: bool
    session_id: str | None
    speaker: str | None
    time: str | None
    text: str | None


class AuditFlagOut(BaseModel):
    """A bullet the audit flags: no cited turn left (missing-evidence), or its words barely
    in the turns it cites (unsupported; ``support`` is the share found)."""

    key: str = Field(description="the document's key")
    version: int = Field(description="the document's version: resolve against it")
    bullet_id: str
    text: str
    problem: Literal["missing-evidence", "unsupported"]
    support: float
    citations: list[AuditCitationOut]
    by: Literal["rules", "model"] = Field(
        description="who judged it: rules, or the configured chat model"
    )


class AuditOut(BaseModel):
    """The audit's current flags, bullets a person kept as they stand left out."""

    items: list[AuditFlagOut]


class AuditResolutionOut(BaseModel):
    """What resolving a flag did: the document's version now, and the diff applied (null for
    keep)."""

    key: str
    bullet_id: str
    action: Literal["keep", "delete", "edit"]
    version: int
    diff: str | None
