"""Curated documents: show, preview a change as a diff, apply it (compare-and-swap)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any

from fastapi import APIRouter, Path

from memstrata.document.format import serialize
from memstrata.document.ops import operation_to_json
from memstrata.document.service import KEY_PATTERN, DocPreview
from memstrata.errors import InvalidInputError
from memstrata.server.deps import READER, WRITER, MemoryDep, ScopeDep
from memstrata.server.responses import AppliedOut, DocOut, PreviewOut
from memstrata.server.schemas.documents import DocChangeIn

router = APIRouter(tags=["documents"])

KeyPath = Annotated[
    str, Path(pattern=KEY_PATTERN, description="essentials, or a topic document's key")
]


def preview_json(preview: DocPreview) -> dict[str, Any]:
    return {
        "key": preview.key,
        "base_version": preview.base_version,
        "operations": [operation_to_json(op) for op in preview.operations],
        "diff": preview.diff,
        "after": preview.after,
    }


@router.get("/v1/docs/{key}", dependencies=[READER], response_model=DocOut)
def doc_show(key: KeyPath, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    markdown, version = memory.doc_markdown(key, scope)
    return {"key": key, "version": version, "markdown": markdown}


@router.post("/v1/docs/{key}/diff", dependencies=[READER], response_model=PreviewOut)
def doc_diff(key: KeyPath, body: DocChangeIn, memory: MemoryDep, scope: ScopeDep) -> dict[str, Any]:
    preview = memory.preview_doc(key, scope, body.change(), expected_version=body.expected_version)
    return preview_json(preview)


@router.post("/v1/docs/{key}/apply", dependencies=[WRITER], response_model=AppliedOut)
def doc_apply(
    key: KeyPath, body: DocChangeIn, memory: MemoryDep, scope: ScopeDep
) -> dict[str, Any]:
    if body.expected_version is None:
        raise InvalidInputError("apply needs expected_version (compare-and-swap)")
    preview = memory.preview_doc(key, scope, body.change(), expected_version=body.expected_version)
    applied, version = memory.apply_doc(
        key, scope, preview.operations, expected_version=body.expected_version
    )
    stored = replace(preview, after=serialize(applied))  # as stored: ids, citations
    return {**preview_json(stored), "version": version}
