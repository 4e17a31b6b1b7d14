"""Request bodies and error responses of the HTTP API (records use their JSON encoding).

Every body refuses unknown fields, nesting deeper than 32 levels, non-finite numbers, and text
that is not valid Unicode (a lone surrogate such as ``"\\ud800"``, which JSON can spell but
UTF-8 cannot store) anywhere in it, keys included.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    model_validator,
)

from memstrata.model import utc
from memstrata.textio import surrogate_at

#: how deep objects and arrays may nest in a request body (what is stored must read back)
MAX_DEPTH: Final = 32


def _leaves(value: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Any]]:
    """Every key and scalar in ``value`` with where it is (``turns.0.metadata``)."""
    if isinstance(value, dict | list | tuple) and len(path) >= MAX_DEPTH:
        raise ValueError(f"objects and arrays nest deeper than {MAX_DEPTH} levels")
    where = ".".join(path) or "the body"
    if isinstance(value, dict):
        for key, item in value.items():
            yield f"a key of {where}", key
            yield from _leaves(item, (*path, str(key)))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            yield from _leaves(item, (*path, str(index)))
    else:
        yield where, value


def check_json_values(value: Any) -> Any:
    """``value`` unchanged, if it nests at most :data:`MAX_DEPTH` levels, every text in it
    encodes as UTF-8 and every number is finite (Python's JSON reader accepts ``NaN`` and
    ``Infinity``; JSON has neither)."""
    for where, leaf in _leaves(value):
        if isinstance(leaf, str):
            at = surrogate_at(leaf)
            if at is not None:
                raise ValueError(
                    f"{where} is not valid Unicode (a lone surrogate at position {at})"
                )
        elif isinstance(leaf, float) and not math.isfinite(leaf):
            raise ValueError(f"{where} must be a finite number, not {leaf}")
    return value


def _iso_time(value: Any) -> Any:
    if isinstance(value, str | datetime):
        return value
    raise ValueError("a time is an ISO 8601 string, e.g. 2025-03-01T08:00:00Z")


def _in_utc(value: datetime) -> datetime:
    try:
        return utc(value)
    except OverflowError:
        raise ValueError("the time is out of range in UTC") from None


#: an ISO 8601 time, as UTC (a value without a zone is taken as UTC)
IsoTime = Annotated[datetime, BeforeValidator(_iso_time), AfterValidator(_in_utc)]


class BodyIn(BaseModel):
    """A request body: no unknown fields, nothing that is not valid Unicode."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data: Any) -> Any:
        return check_json_values(data)


class ScopeIn(BodyIn):
    user: str
    thread: str | None = None
    agent: str | None = None


class TurnIn(BodyIn):
    text: str
    speaker: str | None = None
    role: Literal["user", "assistant", "system", "tool", "other"] = "user"
    time: IsoTime | None = None
    session_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class RememberIn(BodyIn):
    scope: ScopeIn
    turns: list[TurnIn] = Field(min_length=1)
    surface: str = "chat"
    session_id: str | None = None


class FactIn(BodyIn):
    scope: ScopeIn
    text: str
    category: str = "other"
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    importance: float = Field(0.5, ge=0.0, le=1.0)
    topic: str | None = None
    sources: list[str] = Field(default_factory=list)


class ChangesIn(BodyIn):
    """The fields to change: a fact's (any of them), or a document's ``content``."""

    text: str | None = None
    category: str | None = None
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    topic: str | None = None
    sources: list[str] | None = None
    valid_from: IsoTime | None = None
    valid_to: IsoTime | None = None
    superseded_by: str | None = None
    content: dict[str, Any] | None = None


class UpdateIn(BodyIn):
    changes: ChangesIn
    expected_version: int | None = Field(default=None, ge=0)


class OperationIn(BodyIn):
    """One edit of a curated document, as ``memstrata doc diff`` reads it: ``add`` (section,
    text, citations as ``surface:episode_id``, position), ``edit`` (id, text and/or
    citations), ``delete`` (id, reason), ``move`` (id, section, position)."""

    op: Literal["add", "edit", "delete", "move"]
    id: str | None = None
    section: str | None = None
    text: str | None = None
    citations: list[str] | None = None
    reason: str | None = Field(
        None, description="contradicted, superseded, stale, low-signal or user-request"
    )
    position: int | None = None


class DocChangeIn(BodyIn):
    """A proposed change to a curated document: the whole edited markdown, or operations."""

    markdown: str | None = None
    operations: list[OperationIn] | None = None
    expected_version: int | None = Field(default=None, ge=0)


class IdentityIn(BodyIn):
    """The L0 identity's new text; ``expected_version`` makes the write compare-and-swap."""

    text: str
    expected_version: int | None = Field(default=None, ge=0)


class IdentityOut(BaseModel):
    text: str
    version: int


class ErrorDetail(BaseModel):
    """One problem of a request that does not match the schema."""

    loc: list[str] = Field(description="where: body, query or path, then the field names")
    msg: str
    type: str


class ErrorOut(BaseModel):
    """The body of every 4xx and 5xx answer."""

    error: str = Field(
        description="the error class: InvalidInputError (422), TooLargeError (413), "
        "NotFoundError (404), MethodNotAllowedError (405), ConflictError or BusyError (409), "
        "StoreError (503), InternalError or another class of the exception tree (500)"
    )
    message: str = Field(description="what went wrong, for a person")
    details: list[ErrorDetail] | None = Field(
        default=None, description="each problem, when the request does not match the schema"
    )
