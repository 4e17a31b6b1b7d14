"""Curated documents: a bullet's id and citations, the operations that edit a document, and a
proposed change (the whole markdown, or operations)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field

from memstrata.errors import InvalidInputError
from memstrata.server.schemas.common import BodyIn, DeleteReasonIn, Text

if TYPE_CHECKING:
    from memstrata.document.ops import Operation

#: a bullet's id
BulletId = Annotated[str, Field(pattern=r"^m_[0-9A-HJKMNP-TV-Z]{26}$")]
#: a citation: the surface and the id of the episode, ``chat:ep_...``
CitationIn = Annotated[
    str, Field(pattern=r"^[^:]*:", examples=["chat:ep_01JD3M8V4Q5R6S7T8V9W0X1Y2Z"])
]
Section = Annotated[str, Field(min_length=1, description="the section's heading")]
Position = Annotated[int, Field(description="the index in the section (default: the end)")]


class AddIn(BodyIn):
    """Add a bullet to a section (created if new); the id is made unless given."""

    op: Literal["add"]
    section: Section
    text: Text
    citations: list[CitationIn] | None = None
    id: BulletId | None = None
    position: Position | None = None


class EditIn(BodyIn):
    """Change a bullet's text, its citations, or both."""

    op: Literal["edit"]
    id: BulletId
    text: Text | None = None
    citations: list[CitationIn] | None = None


class DeleteIn(BodyIn):
    """Delete a bullet, saying why."""

    op: Literal["delete"]
    id: BulletId
    reason: DeleteReasonIn


class MoveIn(BodyIn):
    """Move a bullet to a section (and position)."""

    op: Literal["move"]
    id: BulletId
    section: Section
    position: Position | None = None


#: one edit of a curated document, as ``memstrata doc diff`` reads it
OperationIn = Annotated[AddIn | EditIn | DeleteIn | MoveIn, Field(discriminator="op")]


class DocChangeIn(BodyIn):
    """A proposed change to a curated document: the whole edited markdown, or operations."""

    markdown: str | None = None
    operations: list[OperationIn] | None = None
    expected_version: int | None = Field(default=None, ge=0)

    def change(self) -> str | list[Operation]:
        """The change proposed: the whole edited markdown, or the operations."""
        from memstrata.document.ops import operation_from_json

        if (self.markdown is None) == (self.operations is None):
            raise InvalidInputError("give either markdown or operations")
        if self.markdown is not None:
            return self.markdown
        return [
            operation_from_json(op.model_dump(exclude_none=True), i)
            for i, op in enumerate(self.operations or [])
        ]
