"""Records: a fact to add (its slot, value and time), the changes to an item, and which kind
of item a list shows."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, model_validator

from memstrata.model import SLOT_MAX, SLOT_PATTERN, VALUE_MAX, WHEN_TEXT_MAX, Category
from memstrata.server.schemas.common import BodyIn, IsoTime, ItemId, ScopeIn, Text

ListKind = Literal["episode", "fact", "document"]


def _stripped(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


#: a fact's slot: the state it sets for its subject, surrounding spaces stripped
SlotText = Annotated[
    str,
    BeforeValidator(_stripped),
    Field(
        max_length=SLOT_MAX,
        pattern=SLOT_PATTERN,
        description="the state the fact sets for its subject (the speaker of the turn it "
        "cites first), as kind or kind:qualifier; facts of one subject with the same slot "
        "supersede each other; 1-200 characters, no control characters, case kept",
        examples=["employer", "allergy:shrimp", "plan:trip to kyoto"],
    ),
]


#: a slot's value, surrounding spaces stripped
ValueText = Annotated[
    str, BeforeValidator(_stripped), Field(min_length=1, max_length=VALUE_MAX, pattern=r"\S")
]

#: the words that named a fact's time, surrounding spaces stripped
WhenText = Annotated[str, BeforeValidator(_stripped), Field(min_length=1, max_length=WHEN_TEXT_MAX)]


class WhenIn(BodyIn):
    """The time a fact speaks of: the interval ``[start, end)`` and the words that named it."""

    text: WhenText | None = Field(
        None,
        description="the words that named the time ('last Friday', '下个月', 'in May'); "
        "left out: a rendering of the interval (2026-05, 2026-05-01/2026-05-08)",
    )
    start: IsoTime = Field(description="where the interval starts (included)")
    end: IsoTime = Field(description="where it ends (not included): after start")

    @model_validator(mode="after")
    def _ordered(self) -> WhenIn:
        if not self.start < self.end:
            raise ValueError("when's start must be before its end")
        return self


class FactFieldsIn(BodyIn):
    """A fact to add (``add_fact``; the MCP tool ``remember_fact``). Without ``sources`` its
    own words are stored as a turn (surface ``manual``) and cited."""

    text: Text
    category: Category = Category.OTHER
    confidence: float = Field(1.0, ge=0.0, le=1.0)
    importance: float = Field(0.5, ge=0.0, le=1.0)
    topic: Text | None = None
    sources: list[ItemId] = Field(default_factory=list, description="ids of the turns it rests on")
    when: WhenIn | None = Field(None, description="the time the fact speaks of, if it names one")
    slot: SlotText | None = None
    value: ValueText | None = Field(
        None, description="the slot's value as said (CATL, husband 王磊): what a profile shows"
    )

    def when_value(self) -> dict[str, Any] | None:
        """``when`` as :meth:`memstrata.api.Memory.add_fact` takes it."""
        return None if self.when is None else self.when.model_dump()


class FactIn(FactFieldsIn):
    scope: ScopeIn


class ChangesIn(BodyIn):
    """The fields to change: a fact's (any of them), or a document's ``content``."""

    text: Text | None = None
    category: Category | None = None
    confidence: float | None = Field(None, ge=0.0, le=1.0)
    importance: float | None = Field(None, ge=0.0, le=1.0)
    topic: str | None = None
    sources: list[ItemId] | None = None
    valid_from: IsoTime | None = None
    valid_to: IsoTime | None = None
    superseded_by: ItemId | None = None
    when: WhenIn | None = Field(None, description="a fact's time; null clears it")
    slot: SlotText | None = Field(None, description="a fact's slot; null clears it")
    value: ValueText | None = Field(None, description="a fact's slot value; null clears it")
    content: dict[str, Any] | None = None


class UpdateIn(BodyIn):
    changes: ChangesIn
    expected_version: int | None = Field(default=None, ge=0)
