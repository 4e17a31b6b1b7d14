"""What the request and response models of every family share: the checks every body and
query passes, the annotated types of scope parts, ids, labels, text and times, the scope of
a body, a deletion's reasons, and the body of every error answer.

Every body refuses unknown fields, nesting deeper than 32 levels, non-finite numbers, and text
that is not valid Unicode (a lone surrogate such as ``"\\ud800"``, which JSON can spell but
UTF-8 cannot store) anywhere in it, keys included. The constraints the facade enforces on
what it is given (scope parts, ids, keys, labels, ranges, enums) are stated in the models, so
they appear in the OpenAPI document and a client learns them before it sends anything.
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

from memstrata.api.capture import MAX_LABEL_CHARS
from memstrata.ids import ID_PATTERN
from memstrata.model import SCOPE_PART_PATTERN, utc
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


class QueryIn(BaseModel):
    """Query parameters of a read (unknown ones are refused by the front end)."""

    model_config = ConfigDict(allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data: Any) -> Any:
        return check_json_values(data)


#: a user, thread or agent: 1-128 characters, no slash, backslash or control character, no
#: space at either end
ScopePart = Annotated[str, Field(pattern=SCOPE_PART_PATTERN)]
#: an item's id (``ep_``, ``fa_``, ``doc_``, ``m_`` and a ULID)
ItemId = Annotated[str, Field(pattern=ID_PATTERN, examples=["ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z"])]
#: a surface, session id or speaker name (as long as the facade takes them)
Label = Annotated[str, Field(max_length=MAX_LABEL_CHARS)]


def not_blank(value: str) -> str:
    """``value``, unless it is empty or only spaces."""
    if not value.strip():
        raise ValueError("must not be empty or only spaces")
    return value


#: text that is not only spaces (the schema states it as a pattern, the check says it plainly)
Text = Annotated[
    str, Field(min_length=1, json_schema_extra={"pattern": r"\S"}), AfterValidator(not_blank)
]


#: why something is deleted (a bullet of a document, an audit flag's bullet, an item)
DeleteReasonIn = Literal["contradicted", "superseded", "stale", "low-signal", "user-request"]


class ScopeIn(BodyIn):
    user: ScopePart | None = Field(
        None, description="may be left out with a key bound to one user (it is that user)"
    )
    thread: ScopePart | None = None
    agent: ScopePart | None = None


class ErrorDetail(BaseModel):
    """One problem of a request that does not match the schema."""

    loc: list[str] = Field(description="where: body, query or path, then the field names")
    msg: str
    type: str


class ConflictDetail(BaseModel):
    """What a stale compare-and-swap found (409 ConflictError): nothing was written."""

    type: Literal["conflict"]
    item_id: str = Field(description="the item (or document) that changed")
    expected_version: int = Field(description="the version the request named")
    current_version: int | None = Field(description="the version stored now; null: deleted")


class TooLargeDetail(BaseModel):
    """What was over a size limit (413 TooLargeError): nothing was done."""

    type: Literal["too-large"]
    limit: int = Field(description="the limit, in the unit the message names (characters, bytes)")
    size: int = Field(description="the size found (of a request body: at least this)")


class ErrorOut(BaseModel):
    """The body of every 4xx and 5xx answer."""

    error: str = Field(
        description="the error class: InvalidInputError (422), TooLargeError (413), "
        "UnauthenticatedError (401), ForbiddenError (403), NotFoundError (404), "
        "MethodNotAllowedError (405), RequestTimeoutError (408), ConflictError or BusyError "
        "(409), StoreError (503), InternalError or another class of the exception tree (500)"
    )
    message: str = Field(description="what went wrong, for a person")
    details: list[ErrorDetail | ConflictDetail | TooLargeDetail] | None = Field(
        default=None,
        description="each problem, when the request does not match the schema; for a 409 "
        "ConflictError, the version stored now; for a 413 TooLargeError, the limit and the "
        "size found",
    )
