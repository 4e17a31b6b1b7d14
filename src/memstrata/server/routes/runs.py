"""Curation runs: start one (extraction or consolidation, in the background), see its state,
cancel it, follow its events as server-sent events replayed from a cursor."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Final

import anyio
from fastapi import APIRouter, Header, Path, Query, Request
from fastapi.responses import StreamingResponse

from memstrata.curate.runs import Event, Run, RunState
from memstrata.errors import NotFoundError
from memstrata.ids import ID_PATTERN
from memstrata.model import Scope
from memstrata.server.deps import READER, WRITER, Limit, MemoryDep, ScopeDep, body_scope
from memstrata.server.schemas.runs import EventOut, RunIn, RunOut, RunPage

router = APIRouter(tags=["runs"])

RunPath = Annotated[str, Path(pattern=ID_PATTERN, description="the run's id")]
#: how often a follower looks for new events, in seconds
POLL_S: Final = 0.1
#: the events that end a run
_ENDS: Final = frozenset(s.value for s in RunState if s != RunState.RUNNING)


def visible_run(memory: MemoryDep, run_id: str, scope: Scope) -> Run:
    """The run, if it belongs to the scope (another scope's run is not found)."""
    run = memory.runs.get(run_id)
    if run.scope is None or not scope.contains(run.scope):
        raise NotFoundError(f"no run {run_id}")
    return run


@router.post("/v1/runs", dependencies=[WRITER], status_code=202)
def start_run(body: RunIn, request: Request, memory: MemoryDep) -> RunOut:
    """Start extracting or consolidating the scope in the background; one run per scope at
    a time (409 BusyError)."""
    run = memory.start_run(
        body_scope(body.scope, request),
        body.kind,
        mode=body.mode,
        extract=body.extract,
        remove=body.remove,
        user_speaker=body.user_speaker,
    )
    return RunOut.of(run)


@router.get("/v1/runs", dependencies=[READER])
def list_runs(
    memory: MemoryDep,
    scope: ScopeDep,
    limit: Limit = 100,
    cursor: Annotated[
        str | None, Query(pattern=ID_PATTERN, description="the next_cursor of the page before")
    ] = None,
) -> RunPage:
    """The scope's curation runs this server remembers (running and recent), oldest first."""
    runs = [
        r
        for r in memory.runs.runs("curation")
        if r.scope is not None and scope.contains(r.scope) and (cursor is None or r.id > cursor)
    ]
    more = len(runs) > limit
    runs = runs[:limit]
    return RunPage(items=[RunOut.of(r) for r in runs], next_cursor=runs[-1].id if more else None)


@router.get("/v1/runs/{run_id}", dependencies=[READER])
def run_status(run_id: RunPath, memory: MemoryDep, scope: ScopeDep) -> RunOut:
    return RunOut.of(visible_run(memory, run_id, scope))


@router.post("/v1/runs/{run_id}/cancel", dependencies=[WRITER])
def cancel_run(run_id: RunPath, memory: MemoryDep, scope: ScopeDep) -> RunOut:
    """Ask the run to stop; it stops before its next step (the state says when it has)."""
    run = visible_run(memory, run_id, scope)
    run.cancel()
    return RunOut.of(run)


def _sse(event: Event) -> str:
    data = json.dumps(EventOut.of(event).model_dump(), ensure_ascii=False)
    return f"id: {event.seq}\nevent: {event.kind}\ndata: {data}\n\n"


@router.get(
    "/v1/runs/{run_id}/events",
    dependencies=[READER],
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "server-sent events: each has the event's seq as id, its kind as "
            "event and EventOut as data; a first `missed` event says how many events after "
            "the cursor were overwritten",
            "content": {"text/event-stream": {"schema": {"type": "string"}}},
        }
    },
)
async def run_events(
    run_id: RunPath,
    request: Request,
    memory: MemoryDep,
    scope: ScopeDep,
    cursor: Annotated[
        int | None, Query(ge=0, description="replay the events after this seq (default 0)")
    ] = None,
    follow: Annotated[bool, Query(description="keep the stream open until the run ends")] = True,
    last_event_id: Annotated[
        int | None,
        Header(ge=0, alias="Last-Event-ID", description="a reconnecting client's cursor"),
    ] = None,
) -> StreamingResponse:
    """The run's events (and those of the documents it writes) after the cursor, then, with
    ``follow``, each new one as it happens until the run ends."""
    run = visible_run(memory, run_id, scope)
    registry = memory.runs
    start = cursor if cursor is not None else (last_event_id or 0)

    async def stream() -> AsyncIterator[str]:
        at = start
        first = registry.replay(at, run_id=run.id)
        kept_whole = (
            bool(first.events)
            and first.events[0].run_id == run.id
            and (first.events[0].kind == "started")
        )
        if first.missed and not kept_whole:  # some of this run's events may be gone
            yield f"event: missed\ndata: {json.dumps({'missed': first.missed})}\n\n"
        replay = first
        while True:
            for event in replay.events:
                at = event.seq
                yield _sse(event)
                if event.run_id == run.id and event.kind in _ENDS:
                    return
            if not follow or (run.finished_at is not None and not replay.events):
                return
            if await request.is_disconnected():
                return
            await anyio.sleep(POLL_S)
            replay = registry.replay(at, run_id=run.id)

    return StreamingResponse(stream(), media_type="text/event-stream")
