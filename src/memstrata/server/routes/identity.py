"""The L0 identity: ``GET`` and ``PUT /v1/identity``."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata.server.deps import READER, WRITER, MemoryDep, ScopeDep
from memstrata.server.schemas.identity import IdentityIn, IdentityOut

router = APIRouter(tags=["identity"])


@router.get("/v1/identity", dependencies=[READER])
def identity(memory: MemoryDep, scope: ScopeDep) -> IdentityOut:
    ident = memory.identity(scope)
    return IdentityOut(text=ident.text, version=ident.version)


@router.put("/v1/identity", dependencies=[WRITER])
def set_identity(body: IdentityIn, memory: MemoryDep, scope: ScopeDep) -> IdentityOut:
    ident = memory.set_identity(body.text, scope, expected_version=body.expected_version)
    return IdentityOut(text=ident.text, version=ident.version)
