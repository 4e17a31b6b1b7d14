"""The L0 identity: its text and version, and a new text to write."""

from __future__ import annotations

from pydantic import BaseModel, Field

from memstrata.server.schemas.common import BodyIn


class IdentityIn(BodyIn):
    """The L0 identity's new text; ``expected_version`` makes the write compare-and-swap."""

    text: str
    expected_version: int | None = Field(default=None, ge=0)


class IdentityOut(BaseModel):
    text: str
    version: int
