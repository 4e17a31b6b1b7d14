"""Hybrid search: its query parameters (the query, a page's size, the granularity, the
filters) and the one parser of filters."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from pydantic import Field

from memstrata.model import Category, Layer
from memstrata.server.schemas.common import IsoTime, Label, QueryIn, Text

if TYPE_CHECKING:
    from memstrata.model import SearchFilter

#: the most hits one search returns
MAX_K: Final = 1000
Granularity = Literal["turn", "session", "fact", "topic"]


class SearchIn(QueryIn):
    """A search: the query, how many hits, at which granularity, and filters."""

    q: Text = Field(description="what to look for, in any language")
    k: int = Field(10, ge=1, le=MAX_K, description="hits per page")
    granularity: Granularity = "turn"
    speaker: Label | None = Field(None, description="only turns by this speaker")
    session_id: Label | None = Field(None, description="only this session")
    since: IsoTime | None = Field(None, description="only from this time on")
    until: IsoTime | None = Field(None, description="only before this time")
    category: Category | None = Field(None, description="only facts of this category")
    topic: str | None = Field(None, description="only facts (or documents) of this topic")
    layer: Layer | None = Field(
        None, description="L1 essentials or L2 topics (granularity topic), L3 the archive"
    )
    surface: Label | None = Field(None, description="only turns from this surface")
    include_archived: bool = Field(False, description="also archived turns")
    current_only: bool = Field(True, description="only current facts, not superseded ones")
    rerank: bool = Field(False, description="let the configured chat model reorder the hits")
    wait: bool = Field(
        False,
        description="embed the scope's records that have no vector yet before searching "
        "(else they are ranked by their words alone, and the answer is partial)",
    )
    cursor: str | None = Field(
        None, pattern=r"^[0-9]{1,4}$", description="the next_cursor of the page before"
    )

    def filters(self) -> SearchFilter:
        """The search filter these parameters name (the one parser of filters)."""
        from memstrata.codec import search_filter

        return search_filter(
            speaker=self.speaker,
            session_id=self.session_id,
            surface=self.surface,
            since=self.since,
            until=self.until,
            category=self.category,
            topic=self.topic,
            layer=self.layer,
            include_archived=self.include_archived,
            current_only=self.current_only,
        )
