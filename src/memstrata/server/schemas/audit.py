"""Audit flags: a person's decision on one (keep, delete, edit)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memstrata.document.service import KEY_PATTERN
from memstrata.server.schemas.common import BodyIn, DeleteReasonIn, Text
from memstrata.server.schemas.documents import BulletId


class AuditResolveIn(BodyIn):
    """A person's decision on an audit flag, made against the document version they saw."""

    key: str = Field(pattern=KEY_PATTERN, description="essentials, or a topic document's key")
    bullet_id: BulletId
    action: Literal["keep", "delete", "edit"] = Field(
        description="keep: the bullet stands (not flagged again while its text and citations "
        "stay); delete or edit: through the document's preview and compare-and-swap apply"
    )
    text: Text | None = Field(None, description="edit: the bullet's new text")
    reason: DeleteReasonIn | None = Field(
        None, description="delete: why (default stale when no cited turn is left, else low-signal)"
    )
    expected_version: int = Field(ge=0, description="the document version the flag was shown at")
