"""API keys: a new key's role, users and name."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memstrata.server.schemas.common import BodyIn, ScopePart


class KeyIn(BodyIn):
    """A new API key: its role and the users it serves (``null``: every user)."""

    role: Literal["admin", "writer", "reader"]
    users: list[ScopePart] | None = Field(
        description="the users the key serves, or null for every user", min_length=1
    )
    name: str = Field("", max_length=200, description="a label to tell keys apart")
