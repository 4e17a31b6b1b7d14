"""Export a scope: every record as JSONL, or the markdown export as a zip."""

from __future__ import annotations

import io
import json
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from fastapi import APIRouter
from fastapi.responses import Response, StreamingResponse

from memstrata.server.deps import READER, MemoryDep, ScopeDep

router = APIRouter(tags=["export"])


@router.get(
    "/v1/export",
    dependencies=[READER],
    response_class=Response,
    responses={
        200: {
            "description": "jsonl: one record per line (episodes, facts, documents); markdown: "
            "a zip of the markdown export (documents as markdown, records as JSONL)",
            "content": {"application/x-ndjson": {}, "application/zip": {}},
        }
    },
)
def export(
    memory: MemoryDep, scope: ScopeDep, format: Literal["jsonl", "markdown"] = "jsonl"
) -> Response:
    if format == "jsonl":
        records = memory.export(scope)

        def lines() -> Iterator[bytes]:
            for record in records:
                yield (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")

        return StreamingResponse(
            lines(),
            media_type="application/x-ndjson",
            headers={"content-disposition": 'attachment; filename="memstrata.jsonl"'},
        )
    buffer = io.BytesIO()
    with tempfile.TemporaryDirectory(prefix="memstrata-export-") as tmp:
        root = Path(tmp) / "export"
        memory.export_markdown(scope, root)
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(p for p in root.rglob("*") if p.is_file()):
                archive.write(path, path.relative_to(root).as_posix())
    return Response(
        buffer.getvalue(),
        media_type="application/zip",
        headers={"content-disposition": 'attachment; filename="memstrata-markdown.zip"'},
    )
