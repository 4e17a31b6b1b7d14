"""Capture: remember turns, ingest a conversation file (the formats of ``memstrata ingest``)."""

from __future__ import annotations

import re
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, File, Form, Request, UploadFile

from memstrata import importers
from memstrata.codec import record_to_json
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.server.deps import WRITER, MemoryDep, ScopeDep, body_scope
from memstrata.server.responses import EpisodeOut
from memstrata.server.schemas.capture import ImportFormat, IngestOut, RememberIn

router = APIRouter(tags=["capture"])

#: what an uploaded file's name keeps (it names the source in reports and errors)
_UNSAFE = re.compile(r"[^\w.\-]+")


@router.post(
    "/v1/remember", dependencies=[WRITER], status_code=201, response_model=list[EpisodeOut]
)
def remember(body: RememberIn, request: Request, memory: MemoryDep) -> list[dict[str, Any]]:
    episodes = memory.remember(
        [t.turn() for t in body.turns],
        body_scope(body.scope, request),
        surface=body.surface,
        session_id=body.session_id,
    )
    return [record_to_json(e) for e in episodes]


@router.post("/v1/ingest", dependencies=[WRITER], status_code=201)
def ingest(
    file: Annotated[UploadFile, File(description="the conversation file")],
    format: Annotated[ImportFormat, Form(description="the file's format")],
    memory: MemoryDep,
    scope: ScopeDep,
    dry_run: Annotated[
        bool, Form(description="report what would be imported; write nothing")
    ] = False,
    all_branches: Annotated[
        bool, Form(description="chatgpt: every branch, not only the one last seen")
    ] = False,
) -> IngestOut:
    """Import a conversation file or another memory system's export into the user: each
    conversation becomes a thread. The whole file is parsed and checked before anything is
    stored; exports of other systems (chatgpt, claude, deerflow, mem0, mempalace, deeptutor)
    can be dry-run first and import idempotently."""
    if scope.thread is not None or scope.agent is not None:
        raise InvalidInputError(
            "ingest stores each conversation in a thread of its own: give only the user"
        )
    name = _UNSAFE.sub("_", Path(file.filename or "").name).strip("._")[:100] or "upload"
    with tempfile.TemporaryDirectory(prefix="memstrata-ingest-") as tmp:
        path = Path(tmp) / name
        with path.open("wb") as fh:
            while chunk := file.file.read(1 << 16):
                fh.write(chunk)
        try:
            batch = importers.load(path, format, all_branches=all_branches)
        except ImportFormatError as exc:  # name the upload, not where it was kept
            raise ImportFormatError(str(exc).replace(str(path), name)) from None
    report = memory.ingest(replace(batch, source=name), scope.user, dry_run=dry_run)
    return IngestOut.of(report)
