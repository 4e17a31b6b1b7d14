"""Serving an agent: the parameters of ``wake-up``, ``recall`` and ``context`` (their token
budgets) and what each answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, Field

from memstrata.server.schemas.common import QueryIn, Text

if TYPE_CHECKING:
    from memstrata.context import Context, Item
    from memstrata.layers import Recall, WakeUp

#: token budgets of wake_up, recall and context
MIN_BUDGET: Final = 80
MIN_CONTEXT_BUDGET: Final = 50
MAX_BUDGET: Final = 100_000


class WakeUpIn(QueryIn):
    budget: int = Field(800, ge=MIN_BUDGET, le=MAX_BUDGET, description="tokens at most")


class RecallIn(QueryIn):
    topic: Text = Field(description="the topic, by name or in other words")
    budget: int = Field(1200, ge=MIN_BUDGET, le=MAX_BUDGET, description="tokens at most")


class ContextIn(QueryIn):
    q: Text = Field(description="what the agent is about to answer")
    budget: int = Field(1000, ge=MIN_CONTEXT_BUDGET, le=MAX_BUDGET, description="tokens at most")
    explain: bool = Field(False, description="say why each item is in and what was cut")


class WakeUpOut(BaseModel):
    text: str = Field(description="the <memory> block: L0 identity and L1 essentials")
    tokens: int
    budget: int
    scope: dict[str, str]
    facts: list[str] = Field(description="ids of the facts in the block")
    left_out: dict[str, int] = Field(description="items not shown, per part")

    @classmethod
    def of(cls, result: WakeUp) -> WakeUpOut:
        from memstrata.codec import scope_to_json

        return cls(
            text=result.text,
            tokens=result.tokens,
            budget=result.budget,
            scope={k: str(v) for k, v in scope_to_json(result.scope).items()},
            facts=list(result.facts_included),
            left_out=dict(result.left_out),
        )


class RecallOut(BaseModel):
    topic: str
    text: str = Field(description="the <memory> block: the topic's documents and facts")
    tokens: int
    budget: int
    documents: list[str] = Field(description="keys of the documents in the block")
    facts: list[str]
    left_out: int

    @classmethod
    def of(cls, result: Recall) -> RecallOut:
        return cls(
            topic=result.topic,
            text=result.text,
            tokens=result.tokens,
            budget=result.budget,
            documents=list(result.documents),
            facts=list(result.facts_included),
            left_out=result.left_out,
        )


class ExplainOut(BaseModel):
    """One item of a context, in or cut, and why: ``why`` in one line for a person, then its
    parts (every field of the item, so a client rebuilds the context whole)."""

    id: str
    kind: str
    text: str = Field("", description="the item's words as stored (not escaped)")
    included: bool
    why: str
    reason: str = Field("", description="what the item is: why it is a candidate")
    relevance: float | None = Field(
        None,
        description="its score on the one scale of relevance (the hybrid search's fused "
        "score); null: nothing scored it",
    )
    scored: str = Field("", description="where its relevance came from")
    position: int | None = Field(None, description="where it was admitted, from 1; null: cut")
    cut: str = Field("", description="why an item left out is out")
    line: str = Field("", description="the line served for it, escaped")
    sources: list[str] = Field(default_factory=list, description="ids of the turns it rests on")
    rank: int = Field(0, description="its rank in the search that found it, from 0")

    @classmethod
    def of(cls, item: Item, included: bool, entry: dict[str, object]) -> ExplainOut:
        """``item`` with its entry of :meth:`Context.explain` (``entry``)."""
        return cls.model_validate(
            {
                **entry,
                "reason": item.reason,
                "relevance": item.relevance,
                "cut": item.cut,
                "line": item.line,
                "sources": list(item.sources),
                "rank": item.rank,
            }
        )


class ContextOut(BaseModel):
    route: str = Field(description="profile, topic, detail or none (no memory needed)")
    topic: str | None
    text: str = Field(description="the <memory> block, escaped")
    tokens: int
    budget: int
    explain: list[ExplainOut] | None = None

    @classmethod
    def of(cls, result: Context, *, explain: bool = False) -> ContextOut:
        return cls(
            route=result.route,
            topic=result.topic,
            text=result.text,
            tokens=result.tokens,
            budget=result.budget,
            explain=_explained(result) if explain else None,
        )


def _explained(result: Context) -> list[ExplainOut]:
    """Every item of ``result``, in (in the order admitted) then cut, as :meth:`explain`
    lists them."""
    items = [(i, True) for i in result.included] + [(i, False) for i in result.cut]
    return [
        ExplainOut.of(item, included, entry)
        for (item, included), entry in zip(items, result.explain(), strict=True)
    ]
