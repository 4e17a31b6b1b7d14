"""Requests and responses of the HTTP API and the MCP server (records use their JSON
encoding): pure pydantic models, no web framework in them.

Every body refuses unknown fields, nesting deeper than 32 levels, non-finite numbers, and text
that is not valid Unicode (a lone surrogate such as ``"\\ud800"``, which JSON can spell but
UTF-8 cannot store) anywhere in it, keys included. The constraints the facade enforces on
what it is given (scope parts, ids, keys, labels, ranges, enums) are stated in the models, so
they appear in the OpenAPI document and a client learns them before it sends anything.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from memstrata.api.capture import MAX_LABEL_CHARS
from memstrata.document.service import KEY_PATTERN
from memstrata.errors import InvalidInputError
from memstrata.ids import ID_PATTERN
from memstrata.model import (
    SCOPE_PART_PATTERN,
    SLOT_MAX,
    SLOT_PATTERN,
    VALUE_MAX,
    WHEN_TEXT_MAX,
    Category,
    Layer,
    Role,
    SearchFilter,
    Turn,
    utc,
)
from memstrata.server.responses import Page
from memstrata.textio import surrogate_at

if TYPE_CHECKING:
    from memstrata.api.common import IngestReport
    from memstrata.context import Context
    from memstrata.curate.runs import Event, Run
    from memstrata.document.ops import Operation
    from memstrata.layers import Recall, WakeUp

#: how deep objects and arrays may nest in a request body (what is stored must read back)
MAX_DEPTH: Final = 32


def _leaves(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every key and scalar in ``value`` with where it is (``turns.0.metadata``)."""
    if isinstance(value, dict | list | tuple) and len(path) >= MAX_DEPTH:
        raise ValueError(f"objects and arrays nest deeper than {MAX_DEPTH} levels")
    where = ".".join(path) or "the body"
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"a key of {where}", key
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, str(index)))
    else:
        yield where, value


def check_json_values(value: Any) -> Any:
    """``value`` unchanged, if it nests at most :data:`MAX_DEPTH` levels, every text in it
    encodes as UTF-8 and every number is finite (Python's JSON reader accepts ``NaN`` and
    ``Infinity``; JSON has neither)."""
    for where, leaf in _leaves(value):
        if isinstance(leaf, str):
            at = surrogate_at(leaf)
            if at is not None:
                raise ValueError(
                    f"{where} is not valid Unicode (a lone surrogate at position {at})"
                )
        elif isinstance(leaf, float) and not math.isfinite(leaf):
            raise ValueError(f"{where} must be a finite number, not {leaf}")
    return value


def _iso_time(value: Any) -> Any:
    if isinstance(value, str | datetime):
        return value
    raise ValueError("a time is an ISO 8601 string, e.g. 2025-03-01T08:00:00Z")


def _in_utc(value: datetime) -> datetime:
    try:
        return utc(value)
    except OverflowError:
        raise ValueError("the time is out of range in UTC") from None


#: an ISO 8601 time, as UTC (a value without a zone is taken as UTC)
IsoTime = Annotated[datetime, BeforeValidator(_iso_time), AfterValidator(_in_utc)]


class BodyIn(BaseModel):
    """A request body: no unknown fields, nothing that is not valid Unicode."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data: Any) -> Any:
        return check_json_values(data)


#: the most hits one search returns
MAX_K: Final = 1000
#: token budgets of wake_up, recall and context
MIN_BUDGET: Final = 80
MIN_CONTEXT_BUDGET: Final = 50
MAX_BUDGET: Final = 100_000

#: a user, thread or agent: 1-128 characters, no slash, backslash or control character, no
#: space at either end
ScopePart = Annotated[str, Field(pattern=SCOPE_PART_PATTERN)]
#: an item's id (``ep_``, ``fa_``, ``doc_``, ``m_`` and a ULID)
ItemId = Annotated[str, Field(pattern=ID_PATTERN, examples=["ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z"])]
#: a surface, session id or speaker name (as long as the facade takes them)
Label = Annotated[str, Field(max_length=MAX_LABEL_CHARS)]


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty or only spaces")
    return value


#: text that is not only spaces (the schema states it as a pattern, the check says it plainly)
Text = Annotated[
    str, Field(min_length=1, json_schema_extra={"pattern": r"\S"}), AfterValidator(_not_blank)
]


def _stripped(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


#: a fact's slot: the state it sets for its subject, surrounding spaces stripped
SlotText = Annotated[
    str,
    BeforeValidator(_stripped),
    Field(
        max_length=SLOT_MAX,
        pattern=SLOT_PATTERN,
        description="the state the fact sets for its subject (the speaker of the turn it "
        "cites first), as kind or kind:qualifier; facts of one subject with the same slot "
        "supersede each other; 1-200 characters, no control characters, case kept",
        examples=["employer", "allergy:shrimp", "plan:trip to kyoto"],
    ),
]


#: a slot's value, surrounding spaces stripped
ValueText = Annotated[
    str, BeforeValidator(_stripped), Field(min_length=1, max_length=VALUE_MAX, pattern=r"\S")
]

#: the words that named a fact's time, surrounding spaces stripped
WhenText = Annotated[str, BeforeValidator(_stripped), Field(min_length=1, max_length=WHEN_TEXT_MAX)]


class WhenIn(BodyIn):
    """The time a fact speaks of: the interval ``[start, end)`` and the words that named it."""

    text: WhenText | None = Field(
        None,
        description="the words that named the time ('last Friday', '下个月', 'in May'); "
        "left out: a rendering of the interval (2026-05, 2026-05-01/2026-05-08)",
    )
    start: IsoTime = Field(description="where the interval starts (included)")
    end: IsoTime = Field(description="where it ends (not included): after start")

    @model_validator(mode="after")
    def _ordered(self) -> WhenIn:
        if not self.start < self.end:
            raise ValueError("when's start must be before its end")
        return self


RoleName = Literal["user", "assistant", "system", "tool", "other"]
Granularity = Literal["turn", "session", "fact", "topic"]
ListKind = Literal["episode", "fact", "document"]
DeleteReasonIn = Literal["contradicted", "superseded", "stale", "low-signal", "user-request"]
Mode = Literal["update", "audit", "dedup"]
ImportFormat = Literal[
    "locomo",
    "longmemeval",
    "madial",
    "jsonl",
    "chatgpt",
    "claude",
    "deerflow",
    "mem0",
    "mempalace",
    "deeptutor",
]


class ScopeIn(BodyIn):
    user: ScopePart | None = Field(
        None, description="may be left out with a key bound to one user (it is that user)"
    )
    thread: ScopePart | None = None
    agent: ScopePart | None = None


class TurnIn(BodyIn):
    text: Text
    speaker: Label | None = None
    role: RoleName = "user"
    time: IsoTime | None = None
    session_id: Label | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    def turn(self) -> Turn:
        """The turn to remember."""
        return Turn(
            text=self.text,
            speaker=self.speaker,
            role=Role(self.role),
            time=self.time,
            session_id=self.session_id,
            metadata=self.metadata,
        )


class TurnsIn(BodyIn):
    """Turns to store verbatim, as one batch (``remember``; the MCP tool of that name)."""

    turns: list[TurnIn] = Field(min_length=1)
    surface: Annotated[
        Label,
        Field(min_length=1, json_schema_extra={"pattern": r"\S"}),
        AfterValidator(_not_blank),
    ] = "chat"
    session_id: Label | None = None


class RememberIn(TurnsIn):
    scope: ScopeIn


class FactFieldsIn(BodyIn):
    """A fact to add (``add_fact``; the MCP tool ``remember_fact``). Without ``sources`` its
    own words are stored as a turn (surface ``manual``) and cited."""

    text: Text
    category: Category = Category.OTHER
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    importance: float = Field(0.5, ge=0.0, le=1.0)
    topic: Text | None = None
    sources: list[ItemId] = Field(default_factory=list, description="ids of the turns it rests on")
    when: WhenIn | None = Field(None, description="the time the fact speaks of, if it names one")
    slot: SlotText | None = None
    value: ValueText | None = Field(
        None, description="the slot's value as said (CATL, husband 王磊): what a profile shows"
    )

    def when_value(self) -> dict[str, Any] | None:
        """``when`` as :meth:`memstrata.api.Memory.add_fact` takes it."""
        return None if self.when is None else self.when.model_dump()


class FactIn(FactFieldsIn):
    scope: ScopeIn


class ChangesIn(BodyIn):
    """The fields to change: a fact's (any of them), or a document's ``content``."""

    text: Text | None = None
    category: Category | None = None
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    topic: str | None = None
    sources: list[ItemId] | None = None
    valid_from: IsoTime | None = None
    valid_to: IsoTime | None = None
    superseded_by: ItemId | None = None
    when: WhenIn | None = Field(None, description="a fact's time; null clears it")
    slot: SlotText | None = Field(None, description="a fact's slot; null clears it")
    value: ValueText | None = Field(None, description="a fact's slot value; null clears it")
    content: dict[str, Any] | None = None


class UpdateIn(BodyIn):
    changes: ChangesIn
    expected_version: int | None = Field(default=None, ge=0)


#: a bullet's id
BulletId = Annotated[str, Field(pattern=r"^m_[0-9A-HJKMNP-TV-Z]{26}$")]
#: a citation: the surface and the id of the episode, ``chat:ep_...``
CitationIn = Annotated[
    str, Field(pattern=r"^[^:]*:", examples=["chat:ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z"])
]
Section = Annotated[str, Field(min_length=1, description="the section's heading")]
Position = Annotated[int, Field(description="the index in the section (default: the end)")]


class AddIn(BodyIn):
    """Add a bullet to a section (created if new); the id is made unless given."""

    op: Literal["add"]
    section: Section
    text: Text
    citations: list[CitationIn] | None = None
    id: BulletId | None = None
    position: Position | None = None


class EditIn(BodyIn):
    """Change a bullet's text, its citations, or both."""

    op: Literal["edit"]
    id: BulletId
    text: Text | None = None
    citations: list[CitationIn] | None = None


class DeleteIn(BodyIn):
    """Delete a bullet, saying why."""

    op: Literal["delete"]
    id: BulletId
    reason: DeleteReasonIn


class MoveIn(BodyIn):
    """Move a bullet to a section (and position)."""

    op: Literal["move"]
    id: BulletId
    section: Section
    position: Position | None = None


#: one edit of a curated document, as ``memstrata doc diff`` reads it
OperationIn = Annotated[AddIn | EditIn | DeleteIn | MoveIn, Field(discriminator="op")]


class DocChangeIn(BodyIn):
    """A proposed change to a curated document: the whole edited markdown, or operations."""

    markdown: str | None = None
    operations: list[OperationIn] | None = None
    expected_version: int | None = Field(default=None, ge=0)

    def change(self) -> str | list[Operation]:
        """The change proposed: the whole edited markdown, or the operations."""
        from memstrata.document.ops import operation_from_json

        if (self.markdown is None) == (self.operations is None):
            raise InvalidInputError("give either markdown or operations")
        if self.markdown is not None:
            return self.markdown
        return [
            operation_from_json(op.model_dump(exclude_none=True), i)
            for i, op in enumerate(self.operations or [])
        ]


class IdentityIn(BodyIn):
    """The L0 identity's new text; ``expected_version`` makes the write compare-and-swap."""

    text: str
    expected_version: int | None = Field(default=None, ge=0)


class KeyIn(BodyIn):
    """A new API key: its role and the users it serves (``null``: every user)."""

    role: Literal["admin", "writer", "reader"]
    users: list[ScopePart] | None = Field(
        description="the users the key serves, or null for every user", min_length=1
    )
    name: str = Field("", max_length=200, description="a label to tell keys apart")


class IdentityOut(BaseModel):
    text: str
    version: int


# queries -----------------------------------------------------------------------------
class QueryIn(BaseModel):
    """Query parameters of a read (unknown ones are refused by the front end)."""

    model_config = ConfigDict(allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data: Any) -> Any:
        return check_json_values(data)


class SearchIn(QueryIn):
    """A search: the query, how many hits, at which granularity, and filters."""

    q: Text = Field(description="what to look for, in any language")
    k: int = Field(10, ge=1, le=MAX_K, description="hits per page")
    granularity: Granularity = "turn"
    speaker: Label | None = Field(None, description="only turns by this speaker")
    session_id: Label | None = Field(None, description="only this session")
    since: IsoTime | None = Field(None, description="only from this time on")
    until: IsoTime | None = Field(None, description="only before this time")
    category: Category | None = Field(None, description="only facts of this category")
    topic: str | None = Field(None, description="only facts (or documents) of this topic")
    layer: Layer | None = Field(
        None, description="L1 essentials or L2 topics (granularity topic), L3 the archive"
    )
    surface: Label | None = Field(None, description="only turns from this surface")
    include_archived: bool = Field(False, description="also archived turns")
    current_only: bool = Field(True, description="only current facts, not superseded ones")
    rerank: bool = Field(False, description="let the configured chat model reorder the hits")
    wait: bool = Field(
        False,
        description="embed the scope's records that have no vector yet before searching "
        "(else they are ranked by their words alone, and the answer is partial)",
    )
    cursor: str | None = Field(
        None, pattern=r"^[0-9]{1,4}$", description="the next_cursor of the page before"
    )

    def filters(self) -> SearchFilter:
        """The search filter these parameters name (the one parser of filters)."""
        from memstrata.codec import search_filter

        return search_filter(
            speaker=self.speaker,
            session_id=self.session_id,
            surface=self.surface,
            since=self.since,
            until=self.until,
            category=self.category,
            topic=self.topic,
            layer=self.layer,
            include_archived=self.include_archived,
            current_only=self.current_only,
        )


class WakeUpIn(QueryIn):
    budget: int = Field(800, ge=MIN_BUDGET, le=MAX_BUDGET, description="tokens at most")


class RecallIn(QueryIn):
    topic: Text = Field(description="the topic, by name or in other words")
    budget: int = Field(1200, ge=MIN_BUDGET, le=MAX_BUDGET, description="tokens at most")


class ContextIn(QueryIn):
    q: Text = Field(description="what the agent is about to answer")
    budget: int = Field(1000, ge=MIN_CONTEXT_BUDGET, le=MAX_BUDGET, description="tokens at most")
    explain: bool = Field(False, description="say why each item is in and what was cut")


class RunIn(BodyIn):
    """A curation run: ``extract`` facts from new turns, or ``consolidate`` documents (in
    mode update, after extracting unless ``extract`` is off; ``remove`` deletes the bullets
    an audit finds unsupported)."""

    scope: ScopeIn
    kind: Literal["extract", "consolidate"] = "consolidate"
    mode: Mode = "update"
    extract: bool = True
    remove: bool = False
    user_speaker: Label | None = Field(
        None, description="the speaker who is the scope's user in L1 (default: the setting)"
    )


# responses ---------------------------------------------------------------------------
class WakeUpOut(BaseModel):
    text: str = Field(description="the <memory> block: L0 identity and L1 essentials")
    tokens: int
    budget: int
    scope: dict[str, str]
    facts: list[str] = Field(description="ids of the facts in the block")
    left_out: dict[str, int] = Field(description="items not shown, per part")

    @classmethod
    def of(cls, result: WakeUp) -> WakeUpOut:
        from memstrata.codec import scope_to_json

        return cls(
            text=result.text,
            tokens=result.tokens,
            budget=result.budget,
            scope={k: str(v) for k, v in scope_to_json(result.scope).items()},
            facts=list(result.facts_included),
            left_out=dict(result.left_out),
        )


class RecallOut(BaseModel):
    topic: str
    text: str = Field(description="the <memory> block: the topic's documents and facts")
    tokens: int
    budget: int
    documents: list[str] = Field(description="keys of the documents in the block")
    facts: list[str]
    left_out: int

    @classmethod
    def of(cls, result: Recall) -> RecallOut:
        return cls(
            topic=result.topic,
            text=result.text,
            tokens=result.tokens,
            budget=result.budget,
            documents=list(result.documents),
            facts=list(result.facts_included),
            left_out=result.left_out,
        )


class ExplainOut(BaseModel):
    id: str
    kind: str
    text: str = Field("", description="the item's words as stored (not escaped)")
    included: bool
    why: str


class ContextOut(BaseModel):
    route: str = Field(description="profile, topic, detail or none (no memory needed)")
    topic: str | None
    text: str = Field(description="the <memory> block, escaped")
    tokens: int
    budget: int
    explain: list[ExplainOut] | None = None

    @classmethod
    def of(cls, result: Context, *, explain: bool = False) -> ContextOut:
        return cls(
            route=result.route,
            topic=result.topic,
            text=result.text,
            tokens=result.tokens,
            budget=result.budget,
            explain=[ExplainOut.model_validate(e) for e in result.explain()] if explain else None,
        )


class ImportSourceOut(BaseModel):
    source: str = Field(description="a conversation's thread, 'facts' or a document key")
    kind: Literal["conversation", "facts", "document"]
    title: str
    turns: int
    facts: int
    bullets: int
    present: int = Field(description="already stored by an earlier import")


class SkippedOut(BaseModel):
    where: str
    reason: str


class IngestOut(BaseModel):
    source: str
    format: str
    conversations: int
    turns: int
    questions: int
    threads: list[str | None]
    seconds: float
    turns_per_s: float | None
    dry_run: bool = Field(
        False, description="true: nothing was written; the counts say what would be"
    )
    facts: int = 0
    bullets: int = 0
    present: int = Field(0, description="items an earlier import stored already (not added again)")
    unresolved: int = Field(0, description="citations naming nothing in memory, not kept")
    skipped: list[SkippedOut] = Field(default_factory=list)
    sources: list[ImportSourceOut] = Field(default_factory=list)

    @classmethod
    def of(cls, report: IngestReport) -> IngestOut:
        return cls(
            source=report.source,
            format=report.format,
            conversations=report.conversations,
            turns=report.turns,
            questions=report.questions,
            threads=[s.thread for s in report.scopes],
            seconds=round(report.seconds, 4),
            turns_per_s=round(report.turns_per_s, 1) if report.seconds > 0 else None,
            dry_run=report.dry_run,
            facts=report.facts,
            bullets=report.bullets,
            present=report.present,
            unresolved=report.unresolved,
            skipped=[SkippedOut(where=w, reason=r) for w, r in report.skipped],
            sources=[
                ImportSourceOut(
                    source=s.source,
                    kind=s.kind,
                    title=s.title,
                    turns=s.turns,
                    facts=s.facts,
                    bullets=s.bullets,
                    present=s.present,
                )
                for s in report.sources
            ],
        )


class RunOut(BaseModel):
    id: str
    layer: str = Field(description="curation, or document (a document a run writes)")
    key: str
    scope: dict[str, str] | None
    state: Literal["running", "done", "failed", "cancelled"]
    trigger: Literal["request", "auto"] = Field(
        description="request: a caller started it; auto: the automatic curation of a quiet "
        "thread (the server's debounce queue)"
    )
    started_at: str
    finished_at: str | None
    result: dict[str, Any] | None = Field(
        description="the report, once the run is done: kind, extraction, consolidation, "
        "model (the chat model's calls summed) and fallback (the steps the model could not "
        "do, the error, done_by rules), each when there is one"
    )
    error: str | None = Field(None, description="why a failed run failed (class: message)")

    @classmethod
    def of(cls, run: Run) -> RunOut:
        from memstrata.codec import format_time, scope_to_json

        return cls(
            id=run.id,
            layer=run.layer,
            key=run.key,
            scope=None
            if run.scope is None
            else {k: str(v) for k, v in scope_to_json(run.scope).items()},
            state=run.state.value,
            trigger=run.trigger,
            started_at=format_time(run.started_at),
            finished_at=None if run.finished_at is None else format_time(run.finished_at),
            result=run.result,
            error=run.error,
        )


class RunPage(Page[RunOut]):
    """A page of runs, oldest first."""


class EventOut(BaseModel):
    """One event of a run, as the ``data`` of a server-sent event (its ``id`` is ``seq``)."""

    seq: int
    run_id: str
    at: str
    kind: str
    data: dict[str, Any]

    @classmethod
    def of(cls, event: Event) -> EventOut:
        from memstrata.codec import format_time

        return cls(
            seq=event.seq,
            run_id=event.run_id,
            at=format_time(event.at),
            kind=event.kind,
            data=dict(event.data),
        )


class DeleteOut(BaseModel):
    """What a deletion removed: the items asked for, what cascaded from them, and how many
    records of each kind went (episodes, facts, documents, bullets, history entries
    rewritten, raw trace lines erased); ``sites_waiting``, when present, is how many other
    data directories sharing the store have still to erase their copies (at their next
    sweep or open)."""

    deleted: list[str]
    cascaded: list[str]
    counts: dict[str, int]


class PreviewEpisodeOut(BaseModel):
    """A turn a deletion would remove."""

    id: str
    session_id: str
    speaker: str | None
    time: str
    text: str


class PreviewFactOut(BaseModel):
    """A fact a deletion would remove (``deleted``: as asked, ``cascaded``: it derives from
    what goes) or rewrite (``rewritten``: it loses a citation and stays)."""

    id: str
    text: str
    category: str
    how: Literal["deleted", "cascaded", "rewritten"]


class PreviewDocumentOut(BaseModel):
    """A document a deletion would remove whole."""

    id: str
    kind: str
    key: str


class PreviewBulletOut(BaseModel):
    """A bullet of a curated document a deletion would remove or rewrite (``rewritten``: it
    loses a citation; ``document-deleted``: its document goes whole)."""

    document: str = Field(description="the document's key (essentials, or a topic)")
    document_id: str
    bullet_id: str
    text: str | None
    how: Literal["deleted", "rewritten", "document-deleted"]


class PreviewSlotOut(BaseModel):
    """A profile slot a deletion would remove or rewrite."""

    document_id: str
    section: str
    slot: str
    value: str
    how: Literal["deleted", "rewritten"]


class ForgetPreviewOut(DeleteOut):
    """A dry run: what the deletion would do, nothing done. ``deleted``, ``cascaded`` and
    ``counts`` are what the deletion itself would report (made by the same plan and store
    transaction, rolled back); the lists say what those records hold (at most 500 each)."""

    dry_run: Literal[True]
    episodes: list[PreviewEpisodeOut]
    facts: list[PreviewFactOut]
    documents: list[PreviewDocumentOut]
    bullets: list[PreviewBulletOut]
    profile_slots: list[PreviewSlotOut]
    index_entries: int = Field(description="search index entries (turns, facts, bullets) that go")
    embedded_texts: int = Field(
        description="texts whose cached vectors and saved index entries are erased"
    )
    pending: bool = Field(
        description="an earlier deletion of the same target is pending: the call finishes it"
    )
    notes: list[str]


class ErrorDetail(BaseModel):
    """One problem of a request that does not match the schema."""

    loc: list[str] = Field(description="where: body, query or path, then the field names")
    msg: str
    type: str


class AuditResolveIn(BodyIn):
    """A person's decision on an audit flag, made against the document version they saw."""

    key: str = Field(pattern=KEY_PATTERN, description="essentials, or a topic document's key")
    bullet_id: BulletId
    action: Literal["keep", "delete", "edit"] = Field(
        description="keep: the bullet stands (not flagged again while its text and citations "
        "stay); delete or edit: through the document's preview and compare-and-swap apply"
    )
    text: Text | None = Field(None, description="edit: the bullet's new text")
    reason: DeleteReasonIn | None = Field(
        None, description="delete: why (default stale when no cited turn is left, else low-signal)"
    )
    expected_version: int = Field(ge=0, description="the document version the flag was shown at")


class ConflictDetail(BaseModel):
    """What a stale compare-and-swap found (409 ConflictError): nothing was written."""

    type: Literal["conflict"]
    item_id: str = Field(description="the item (or document) that changed")
    expected_version: int = Field(description="the version the request named")
    current_version: int | None = Field(description="the version stored now; null: deleted")


class ErrorOut(BaseModel):
    """The body of every 4xx and 5xx answer."""

    error: str = Field(
        description="the error class: InvalidInputError (422), TooLargeError (413), "
        "UnauthenticatedError (401), ForbiddenError (403), NotFoundError (404), "
        "MethodNotAllowedError (405), RequestTimeoutError (408), ConflictError or BusyError "
        "(409), StoreError (503), InternalError or another class of the exception tree (500)"
    )
    message: str = Field(description="what went wrong, for a person")
    details: list[ErrorDetail | ConflictDetail] | None = Field(
        default=None,
        description="each problem, when the request does not match the schema; for a 409 "
        "ConflictError, the version stored now",
    )
