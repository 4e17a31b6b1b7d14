"""Request bodies of the HTTP API (responses use the records' JSON encoding)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class ScopeIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    user: str
    thread: str | None = None
    agent: str | None = None


class TurnIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    text: str
    speaker: str | None = None
    role: Literal["user", "assistant", "system", "tool", "other"] = "user"
    time: datetime | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class RememberIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scope: ScopeIn
    turns: list[TurnIn] = Field(min_length=1)
    surface: str = "chat"
    session_id: str | None = None


class FactIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    scope: ScopeIn
    text: str
    category: str = "other"
    confidence: float = 1.0
    importance: float = 0.5
    topic: str | None = None
    sources: list[str] = Field(default_factory=list)


class UpdateIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    changes: dict[str, Any]
    expected_version: int | None = None


class DocChangeIn(BaseModel):
    """A proposed change to a curated document: the whole edited markdown, or operations
    (as ``memstrata doc diff`` reads them: ``{"op": "add", "section": ..., "text": ...}``)."""

    model_config = ConfigDict(extra="forbid")
    markdown: str | None = None
    operations: list[dict[str, Any]] | None = None
    expected_version: int | None = Field(default=None, ge=0)
