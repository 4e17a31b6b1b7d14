"""The consolidator: one value of what the steps work with (:class:`Parts`), the model's
steps where a model is configured, and one method per mode, each carried out by its module
(:mod:`~memstrata.consolidate.update`, :mod:`~memstrata.consolidate.audit`,
:mod:`~memstrata.consolidate.dedup`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from memstrata.consolidate import audit, dedup, l1, update
from memstrata.consolidate.by_model import ModelSteps
from memstrata.consolidate.parts import Parts
from memstrata.consolidate.report import ConsolidationReport
from memstrata.curate.essentials import DEFAULT_ESSENTIALS_BUDGET, Selection
from memstrata.curate.runs import RunRegistry
from memstrata.document.format import Bullet
from memstrata.document.service import DocumentService
from memstrata.model import Fact, Scope
from memstrata.ports import LLM, Clock, RecordStore, SystemClock
from memstrata.tokens import HeuristicTokenCounter, TokenCounter


class Consolidator:
    def __init__(
        self,
        store: RecordStore,
        docs: DocumentService,
        runs: RunRegistry,
        *,
        essentials_budget: int = DEFAULT_ESSENTIALS_BUDGET,
        user_speaker: str | None = None,
        counter: TokenCounter | None = None,
        llm: LLM | None = None,
        clock: Clock | None = None,
        related: Callable[[Scope, str], Sequence[str]] | None = None,
    ) -> None:
        self.parts = Parts(
            store=store,
            docs=docs,
            runs=runs,
            essentials_budget=essentials_budget,
            user_speaker=user_speaker,
            counter=counter or HeuristicTokenCounter(),
            clock=clock or SystemClock(),
            related=related,
        )
        #: the model's steps (see :mod:`memstrata.consolidate.by_model`), None: rules only
        self.model = None if llm is None else ModelSteps(self.parts, llm)

    @property
    def store(self) -> RecordStore:
        return self.parts.store

    @property
    def docs(self) -> DocumentService:
        return self.parts.docs

    def now(self) -> datetime:
        return self.parts.now()

    def update(self, scope: Scope) -> ConsolidationReport:
        """Mode ``update``: see :mod:`memstrata.consolidate.update`."""
        return update.update(self.parts, self.model, scope)

    def audit(
        self,
        scope: Scope,
        *,
        remove: bool = False,
        kept: Callable[[Bullet], bool] | None = None,
    ) -> ConsolidationReport:
        """Mode ``audit``: see :func:`memstrata.consolidate.audit.audit`."""
        return audit.audit(self.parts, self.model, scope, remove=remove, kept=kept)

    def dedup(self, scope: Scope) -> ConsolidationReport:
        """Mode ``dedup``: see :func:`memstrata.consolidate.dedup.dedup`."""
        return dedup.dedup(self.parts, self.model, scope)

    def selection(self, scope: Scope, facts: Sequence[Fact] | None = None) -> Selection:
        """What L1 should state for ``scope`` now (:func:`memstrata.consolidate.l1.selection`)."""
        return l1.selection(self.parts, scope, facts)
