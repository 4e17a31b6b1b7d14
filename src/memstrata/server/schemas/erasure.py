"""Deletion and forgetting: what a deletion removed, and what a dry run says it would remove
or rewrite (turns, facts, documents, bullets, profile slots)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class DeleteOut(BaseModel):
    """What a deletion removed: the items asked for, what cascaded from them, and how many
    records of each kind went (episodes, facts, documents, bullets, history entries
    rewritten, raw trace lines erased); ``sites_waiting``, when present, is how many other
    data directories sharing the store have still to erase their copies (at their next
    sweep or open)."""

    deleted: list[str]
    cascaded: list[str]
    counts: dict[str, int]


class PreviewEpisodeOut(BaseModel):
    """A turn a deletion would remove."""

    id: str
    session_id: str
    speaker: str | None
    time: str
    text: str


class PreviewFactOut(BaseModel):
    """A fact a deletion would remove (``deleted``: as asked, ``cascaded``: it derives from
    what goes) or rewrite (``rewritten``: it loses a citation and stays)."""

    id: str
    text: str
    category: str
    how: Literal["deleted", "cascaded", "rewritten"]


class PreviewDocumentOut(BaseModel):
    """A document a deletion would remove whole."""

    id: str
    kind: str
    key: str


class PreviewBulletOut(BaseModel):
    """A bullet of a curated document a deletion would remove or rewrite (``rewritten``: it
    loses a citation; ``document-deleted``: its document goes whole)."""

    document: str = Field(description="the document's key (essentials, or a topic)")
    document_id: str
    bullet_id: str
    text: str | None
    how: Literal["deleted", "rewritten", "document-deleted"]


class PreviewSlotOut(BaseModel):
    """A profile slot a deletion would remove or rewrite."""

    document_id: str
    section: str
    slot: str
    value: str
    how: Literal["deleted", "rewritten"]


class ForgetPreviewOut(DeleteOut):
    """A dry run: what the deletion would do, nothing done. ``deleted``, ``cascaded`` and
    ``counts`` are what the deletion itself would report (made by the same plan and store
    transaction, rolled back); the lists say what those records hold (at most 500 each)."""

    dry_run: Literal[True]
    episodes: list[PreviewEpisodeOut]
    facts: list[PreviewFactOut]
    documents: list[PreviewDocumentOut]
    bullets: list[PreviewBulletOut]
    profile_slots: list[PreviewSlotOut]
    index_entries: int = Field(description="search index entries (turns, facts, bullets) that go")
    embedded_texts: int = Field(
        description="texts whose cached vectors and saved index entries are erased"
    )
    pending: bool = Field(
        description="an earlier deletion of the same target is pending: the call finishes it"
    )
    notes: list[str]
