"""The MCP tools: for each, a name, a description that tells a model when to call it, an input
and an output model (:mod:`memstrata.server.schemas`, shared with the HTTP API), whether it
writes, and the one call on :class:`~memstrata.api.Memory` it makes.

Every tool acts in the scope the session was given (the user of ``memstrata mcp --user``, or
of the HTTP request's key): no tool takes a user, so a model cannot reach another one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memstrata.codec import record_to_json
from memstrata.document.format import serialize
from memstrata.errors import InvalidInputError
from memstrata.model import Scope
from memstrata.server.responses import (
    AppliedOut,
    DocOut,
    EpisodeOut,
    FactOut,
    HitPage,
    PreviewOut,
    RememberOut,
)
from memstrata.server.schemas.capture import TurnsIn
from memstrata.server.schemas.common import BodyIn
from memstrata.server.schemas.documents import DocChangeIn
from memstrata.server.schemas.erasure import DeleteOut, ForgetPreviewOut
from memstrata.server.schemas.records import FactFieldsIn
from memstrata.server.schemas.search import SearchIn
from memstrata.server.schemas.serving import (
    ContextIn,
    ContextOut,
    RecallIn,
    RecallOut,
    WakeUpIn,
    WakeUpOut,
)

if TYPE_CHECKING:
    from memstrata.api import Memory


class WakeUpArgs(WakeUpIn):
    """:class:`WakeUpIn`, as tool arguments: an unknown one is refused, not ignored."""

    model_config = ConfigDict(extra="forbid")


class RecallArgs(RecallIn):
    model_config = ConfigDict(extra="forbid")


class ContextArgs(ContextIn):
    model_config = ConfigDict(extra="forbid")


class SearchArgs(SearchIn):
    model_config = ConfigDict(extra="forbid")


class ForgetIn(BodyIn):
    """What to forget, on the user's request: one item, or one whole thread."""

    item_id: str | None = Field(
        None, description="a turn (ep_...), fact (fa_...) or document bullet (m_...)"
    )
    thread: str | None = Field(None, description="a thread of the user: all of it goes")
    dry_run: bool = Field(
        False, description="change nothing: list everything the forget would remove or rewrite"
    )

    @model_validator(mode="after")
    def _one_target(self) -> ForgetIn:
        if (self.item_id is None) == (self.thread is None):
            raise ValueError("give either item_id or thread")
        return self


class DocKeyIn(BodyIn):
    key: str = Field(min_length=1, description="essentials, or a topic key")


class DocProposeIn(DocChangeIn):
    """A change to a curated document, previewed: nothing is written."""

    key: str = Field(min_length=1, description="essentials, or a topic key")


class DocApplyIn(DocChangeIn):
    """A change to a curated document, applied whole against the version it was made from."""

    key: str = Field(min_length=1, description="essentials, or a topic key")
    expected_version: int = Field(ge=0, description="the version doc_show or doc_propose gave")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input: type[BaseModel]
    output: type[BaseModel]
    writes: bool
    run: Callable[[Memory, Scope, Any], BaseModel]
    destructive: bool = False
    idempotent: bool = False


def _wake_up(memory: Memory, scope: Scope, args: WakeUpIn) -> WakeUpOut:
    return WakeUpOut.of(memory.wake_up(scope, budget=args.budget))


def _search(memory: Memory, scope: Scope, args: SearchIn) -> HitPage:
    from memstrata.server.routes.search import search_page

    return search_page(memory, scope, args)


def _recall(memory: Memory, scope: Scope, args: RecallIn) -> RecallOut:
    return RecallOut.of(memory.recall(args.topic, scope, budget=args.budget))


def _context(memory: Memory, scope: Scope, args: ContextIn) -> ContextOut:
    return ContextOut.of(memory.context(args.q, scope, budget=args.budget), explain=args.explain)


def _remember(memory: Memory, scope: Scope, args: TurnsIn) -> RememberOut:
    turns = [t.turn() for t in args.turns]
    episodes = memory.remember(turns, scope, surface=args.surface, session_id=args.session_id)
    return RememberOut(episodes=[EpisodeOut.model_validate(record_to_json(e)) for e in episodes])


def _remember_fact(memory: Memory, scope: Scope, args: FactFieldsIn) -> FactOut:
    fact = memory.add_fact(
        args.text,
        scope,
        category=args.category,
        confidence=args.confidence,
        importance=args.importance,
        topic=args.topic,
        sources=args.sources,
        when=args.when_value(),
        slot=args.slot,
        value=args.value,
    )
    return FactOut.model_validate(record_to_json(fact))


def _forget(memory: Memory, scope: Scope, args: ForgetIn) -> DeleteOut:
    if args.item_id is not None:
        report = memory.forget(args.item_id, scope, dry_run=args.dry_run)
    else:
        target = Scope(scope.user, args.thread, scope.agent)
        if not scope.contains(target):
            raise InvalidInputError(
                f"this session is bound to thread {scope.thread!r}; it cannot forget "
                f"thread {args.thread!r}"
            )
        report = memory.forget_scope(target, dry_run=args.dry_run)
    if args.dry_run:
        return ForgetPreviewOut.model_validate(report.to_json())
    return DeleteOut.model_validate(report.to_json())


def _doc_show(memory: Memory, scope: Scope, args: DocKeyIn) -> DocOut:
    markdown, version = memory.doc_markdown(args.key, scope)
    return DocOut(key=args.key, version=version, markdown=markdown)


def _doc_propose(memory: Memory, scope: Scope, args: DocProposeIn) -> PreviewOut:
    preview = memory.preview_doc(
        args.key, scope, args.change(), expected_version=args.expected_version
    )
    from memstrata.server.routes.documents import preview_json

    return PreviewOut.model_validate(preview_json(preview))


def _doc_apply(memory: Memory, scope: Scope, args: DocApplyIn) -> AppliedOut:
    preview = memory.preview_doc(
        args.key, scope, args.change(), expected_version=args.expected_version
    )
    applied, version = memory.apply_doc(
        args.key, scope, preview.operations, expected_version=args.expected_version
    )
    stored = replace(preview, after=serialize(applied))  # as stored: ids, citations
    from memstrata.server.routes.documents import preview_json

    return AppliedOut.model_validate({**preview_json(stored), "version": version})


TOOLS: Final[tuple[ToolSpec, ...]] = (
    ToolSpec(
        "wake_up",
        "Wake up",
        "Load what memory knows about the user: who they are and the essentials (profile, "
        "preferences, the most important facts), as a <memory> block within a token budget. "
        "Call it once at the start of every session or conversation, before answering, and "
        "keep it in mind for the whole conversation.",
        WakeUpArgs,
        WakeUpOut,
        writes=False,
        run=_wake_up,
        idempotent=True,
    ),
    ToolSpec(
        "search",
        "Search memory",
        "Search everything the user said before (verbatim turns, whole sessions, facts or "
        "topic documents), in English or Chinese, with filters by speaker, session, time, "
        "category or topic. Call it before answering a question about past events, earlier "
        'conversations or anything the user told you ("what did I say about...", "when '
        'did I..."); each hit carries its id, time and speaker, to cite or to forget.',
        SearchArgs,
        HitPage,
        writes=False,
        run=_search,
        idempotent=True,
    ),
    ToolSpec(
        "recall",
        "Recall a topic",
        "Load the curated summary of one topic (e.g. travel, work, health, a project) with "
        "its citations, as a <memory> block. Call it when the conversation turns to a topic "
        "and you need what memory holds about it as a whole, rather than single past turns.",
        RecallArgs,
        RecallOut,
        writes=False,
        run=_recall,
        idempotent=True,
    ),
    ToolSpec(
        "context",
        "Memory for a message",
        "Assemble the memory relevant to one user message within a token budget: identity, "
        "profile, preferences, the topic, facts and past turns, by priority, as a <memory> "
        "block (empty when the message needs no memory). Call it before answering a message "
        "that may depend on what you know about the user; set explain to see why each item "
        "was chosen.",
        ContextArgs,
        ContextOut,
        writes=False,
        run=_context,
        idempotent=True,
    ),
    ToolSpec(
        "remember",
        "Remember turns",
        "Store conversation turns verbatim (the user's and your own), so later sessions can "
        "search them; facts are distilled from them later. Call it with the turns of the "
        "conversation as it goes, or at its end, and whenever the user shares something worth "
        "keeping. Do not store secrets the user did not mean to keep.",
        TurnsIn,
        RememberOut,
        writes=True,
        run=_remember,
    ),
    ToolSpec(
        "remember_fact",
        "Remember a fact or preference",
        "Store one lasting fact or preference the user states about themselves, in a short "
        'sentence about the user ("Prefers short answers, code first", "Is allergic to '
        'peanuts"), with its category (preference, profile, personal, health, plan...); when '
        "it names a time, `when` (the words and the interval they name, resolved against "
        "today), and the state it sets as `slot` (employer, residence, allergy:peanuts). "
        "Call it when the user states a preference, a correction or a fact meant to last "
        '("remember that...", "from now on..."); a new fact supersedes the one it '
        "contradicts.",
        FactFieldsIn,
        FactOut,
        writes=True,
        run=_remember_fact,
    ),
    ToolSpec(
        "forget",
        "Forget",
        "Forget, on the user's request, one item (a turn, a fact or a bullet, by its id from "
        "search or doc_show) or a whole thread, with every fact, summary bullet and copy that "
        "derives from it. Call it only when the user asks you to forget something; it cannot "
        "be undone. With dry_run it changes nothing and lists everything that would go: show "
        "that to the user first.",
        ForgetIn,
        DeleteOut,
        writes=True,
        run=_forget,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        "doc_show",
        "Show a memory document",
        "Show a curated memory document (essentials, or a topic key) as markdown: bullets "
        "with their citations and ids, and the version an edit must name. Call it before "
        "proposing a change to the document, or when the user asks what memory holds.",
        DocKeyIn,
        DocOut,
        writes=False,
        run=_doc_show,
        idempotent=True,
    ),
    ToolSpec(
        "doc_propose",
        "Propose a document change",
        "Preview a change to a curated memory document, given as the whole edited markdown or "
        "as operations (add, edit, delete with a reason, move): answers the operations and a "
        "unified diff, and writes nothing. Call it to show the user a correction before "
        "applying it with doc_apply.",
        DocProposeIn,
        PreviewOut,
        writes=False,
        run=_doc_propose,
        idempotent=True,
    ),
    ToolSpec(
        "doc_apply",
        "Apply a document change",
        "Apply a change to a curated memory document atomically, against expected_version "
        "(from doc_show or doc_propose); a stale version is a ConflictError and changes "
        "nothing: show the document again and redo the change. Call it once the user agreed "
        "to the change doc_propose previewed.",
        DocApplyIn,
        AppliedOut,
        writes=True,
        run=_doc_apply,
    ),
)

#: the tools by name
TOOLS_BY_NAME: Final = {tool.name: tool for tool in TOOLS}
