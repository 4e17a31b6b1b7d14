"""Curation runs: a run to start, a run's state and report, a page of runs, and one event of
a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from memstrata.server.responses import Page
from memstrata.server.schemas.common import BodyIn, Label, ScopeIn

if TYPE_CHECKING:
    from memstrata.curate.runs import Event, Run

Mode = Literal["update", "audit", "dedup"]


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
