"""Capture: the turns ``remember`` stores (a batch of them, in a scope), and what an import
(``ingest``) reports."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field

from memstrata.model import Role, Turn
from memstrata.server.schemas.common import (
    BodyIn,
    IsoTime,
    Label,
    ScopeIn,
    Text,
    not_blank,
)

if TYPE_CHECKING:
    from memstrata.api.common import IngestReport

RoleName = Literal["user", "assistant", "system", "tool", "other"]
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
        AfterValidator(not_blank),
    ] = "chat"
    session_id: Label | None = None


class RememberIn(TurnsIn):
    scope: ScopeIn


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
