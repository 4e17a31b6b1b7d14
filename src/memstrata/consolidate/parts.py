"""What every step of a consolidation works with: the store, the documents, the runs, the L1
budget, the user's name, the token counter, the clock, and the search that finds the facts a
new one could contradict. One frozen value, made by :class:`memstrata.consolidate.Consolidator`
and handed to each mode (:mod:`~memstrata.consolidate.update`, :mod:`~memstrata.consolidate.audit`,
:mod:`~memstrata.consolidate.dedup`) and to the model's steps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memstrata.curate.runs import RunRegistry
from memstrata.document.service import DocumentService
from memstrata.model import Scope
from memstrata.ports import Clock, RecordStore
from memstrata.tokens import TokenCounter


@dataclass(frozen=True, slots=True)
class Parts:
    store: RecordStore
    docs: DocumentService
    runs: RunRegistry
    essentials_budget: int
    user_speaker: str | None
    counter: TokenCounter
    clock: Clock
    #: ids of the facts a search finds for a text (the candidates a new fact could
    #: contradict, beside those of its topic and those sharing its terms)
    related: Callable[[Scope, str], Sequence[str]] | None

    def now(self) -> datetime:
        return self.clock.now()
