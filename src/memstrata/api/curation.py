"""Curation: extraction, consolidation and their runs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memstrata.api.common import ScopeLike, as_scope
from memstrata.api.records import RecordsMixin
from memstrata.errors import InvalidInputError
from memstrata.model import Category
from memstrata.ports import LLM, Extractor
from memstrata.settings import load_settings

if TYPE_CHECKING:
    from memstrata.consolidate import ConsolidationReport
    from memstrata.curate.pipeline import ExtractReport
    from memstrata.curate.runs import RunRegistry


class CurationMixin(RecordsMixin):
    """Extraction and consolidation, and the runs that carry them."""

    @property
    def llm(self) -> LLM | None:
        """The chat model the settings name (``llm``), or None: everything works without."""
        settings = self.settings or load_settings()
        if settings.llm is None:
            return None
        from memstrata.llm.openai_compat import OpenAIChat

        return OpenAIChat.from_settings(settings.llm)

    def extractor(self) -> Extractor:
        """The configured extractor: the LLM one when a chat model is set, else the rules."""
        llm = self.llm
        if llm is None:
            from memstrata.curate.extract_rules import RuleExtractor

            return RuleExtractor()
        from memstrata.curate.extract_llm import LLMExtractor

        return LLMExtractor(llm)

    def extract(
        self,
        scope: ScopeLike,
        *,
        extractor: Extractor | None = None,
        episode_ids: Sequence[str] | None = None,
    ) -> ExtractReport:
        """Extract facts from the scope's episodes that no fact cites yet (or from the given
        episodes), through the guards, into the store. Failures are reported, never raised."""
        from memstrata.curate.pipeline import extract_into, unextracted

        scope = as_scope(scope)
        episodes = (
            self.store.get_episodes(scope, episode_ids)
            if episode_ids is not None
            else unextracted(self.store, scope)
        )
        from memstrata.curate.guards import DEFAULT_THRESHOLDS, GuardConfig

        settings = self.settings or load_settings()
        thresholds = {
            **DEFAULT_THRESHOLDS,
            **{Category(k): v for k, v in settings.confidence_thresholds.items()},
        }
        return extract_into(
            self.store,
            scope,
            extractor or self.extractor(),
            episodes,
            now=self.clock.now(),
            config=GuardConfig(thresholds=thresholds),
        )

    @property
    def runs(self) -> RunRegistry:
        """This process's curation runs (one per layer and key at a time)."""
        with self._index_lock:
            if self._runs is None:
                from memstrata.curate.runs import RunRegistry

                self._runs = RunRegistry(clock=self.clock)
            return self._runs

    def consolidate(
        self, scope: ScopeLike, *, mode: str = "update", remove: bool = False
    ) -> ConsolidationReport:
        """Consolidate curated documents. ``update``: facts new since the last run become
        bullets of their topic documents (and essentials), citing the same episodes, and
        superseded ones are removed. ``audit``: bullets are checked against their evidence and
        unsupported ones flagged (deleted with ``remove``). ``dedup``: near-duplicate bullets
        are merged, their citations united."""
        from memstrata.consolidate import Consolidator

        settings = self.settings or load_settings()
        consolidator = Consolidator(
            self.store,
            self.documents,
            self.runs,
            essentials_budget=settings.essentials_budget,
            user_speaker=settings.user_speaker,
        )
        scope = as_scope(scope)
        if mode == "update":
            return consolidator.update(scope)
        if mode == "audit":
            return consolidator.audit(scope, remove=remove)
        if mode == "dedup":
            return consolidator.dedup(scope)
        raise InvalidInputError(f"unknown mode {mode!r}; expected update, audit or dedup")
