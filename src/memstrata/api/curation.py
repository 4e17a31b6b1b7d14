"""Curation: extraction, consolidation and their runs.

Every curation a front door or the server does is a run of :attr:`CurationMixin.runs`: one per
scope at a time, with its events, its report and what started it (``trigger``). A caller's
request runs in the background (:meth:`CurationMixin.start_run`, the HTTP API and the
workbench) or in the caller's thread (:meth:`CurationMixin.curate`, the CLI); the debounce
queue's automatic curation of a quiet thread (:meth:`CurationMixin.curate_quiet`) runs in the
queue's thread, marked ``auto``. The thread's new turns are extracted in the thread (its facts
cite its turns) and consolidated where the user's memory is (:func:`home_scope`), so the user
has one essentials document, one profile and one set of topics, not one more per thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from memstrata.api.common import ScopeLike, as_scope
from memstrata.api.fallback import ModelFallback, model_fallback
from memstrata.api.forgetting import ForgettingMixin
from memstrata.api.kept import kept_check
from memstrata.errors import InvalidInputError
from memstrata.model import Category, JsonValue, Scope
from memstrata.ports import LLM, Extractor, LockingStore
from memstrata.settings import load_settings

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from memstrata.consolidate import ConsolidationReport
    from memstrata.curate.pipeline import ExtractReport
    from memstrata.curate.runs import Run, RunRegistry, Trigger
    from memstrata.llm.metered import Call, MeteredLLM

#: what a curation run does: extract facts from new turns, or consolidate documents
RunKind = Literal["extract", "consolidate"]
#: consolidation modes
MODES: Final = ("update", "audit", "dedup")
#: the layer of the registry's runs that :meth:`CurationMixin.start_run` starts
CURATION: Final = "curation"
#: how many facts a search offers as the candidates a new fact could contradict
_RELATED_K: Final = 6
#: how long a curation waits for another of the same user (in any process) to finish
CURATION_WAIT_S: Final = 600.0
#: how long closing the memory waits for a cancelled run to stop, in seconds
_STOP_WAIT_S: Final = 10.0


def home_scope(scope: Scope) -> Scope:
    """Where the user's curated memory is for ``scope``: the user's scope, with the agent if
    ``scope`` names one (a thread's documents would be a second set beside the user's)."""
    return Scope(scope.user, None, scope.agent)


@dataclass(slots=True)
class Curation:
    """What one curation run did: its reports (extraction, consolidation), the chat model's
    calls summed (``model``, with a model), and what rules did because it could not."""

    kind: RunKind
    run: Run
    extraction: ExtractReport | None = None
    consolidation: ConsolidationReport | None = None
    model: dict[str, JsonValue] | None = None

    @property
    def fallback(self) -> ModelFallback | None:
        """The steps the model could not do, which rules did (None: it did every one)."""
        return model_fallback(
            self.extraction.failures if self.extraction is not None else (),
            self.consolidation.model_failures if self.consolidation is not None else (),
        )

    def to_json(self) -> dict[str, JsonValue]:
        """The run's report: ``kind``, ``extraction``, ``consolidation``, ``model`` and
        ``fallback`` (each when there is one)."""
        out: dict[str, JsonValue] = {"kind": self.kind}
        if self.extraction is not None:
            out["extraction"] = self.extraction.to_json()
        if self.consolidation is not None:
            out["consolidation"] = self.consolidation.to_json()
        if self.model is not None:
            out["model"] = self.model
        fallback = self.fallback
        if fallback is not None:
            out["fallback"] = fallback.to_json()
        return out


def _check_run(kind: str, mode: str) -> None:
    if kind not in ("extract", "consolidate"):
        raise InvalidInputError(f"unknown run kind {kind!r}; expected extract or consolidate")
    if mode not in MODES:
        raise InvalidInputError(f"unknown mode {mode!r}; expected update, audit or dedup")


class CurationMixin(ForgettingMixin):
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
        from memstrata.curate.extract_rules import RuleExtractor

        return LLMExtractor(llm, fallback=RuleExtractor())

    def metered_llm(self, run: Run | None = None) -> MeteredLLM | None:
        """The configured chat model measured and bounded for one run (None without one):
        every call's tokens and time recorded (as a ``model`` event of ``run``), and no call
        once the ``llm.run_token_budget`` is spent."""
        settings = self.settings or load_settings()
        llm = self.llm
        if llm is None or settings.llm is None:
            return None
        from memstrata.llm.metered import MeteredLLM

        def told(call: Call) -> None:
            if run is not None:
                run.emit("model", **call.to_json())

        return MeteredLLM(llm, budget=settings.llm.run_token_budget, on_call=told)

    def extract(
        self,
        scope: ScopeLike,
        *,
        extractor: Extractor | None = None,
        episode_ids: Sequence[str] | None = None,
    ) -> ExtractReport:
        """Extract facts from the scope's episodes that no fact cites yet (or from the given
        episodes), through the guards, into the store. Failures are reported, never raised.
        One extraction of a user's turns at a time in this process: a thread's and its user's,
        run side by side, would both take the thread's new turns (the model asked twice, and
        the facts stored twice when both finish together)."""
        from memstrata.curate.guards import DEFAULT_THRESHOLDS, GuardConfig
        from memstrata.curate.pipeline import extract_into, unextracted

        scope = as_scope(scope)
        settings = self.settings or load_settings()
        thresholds = {
            **DEFAULT_THRESHOLDS,
            **{Category(k): v for k, v in settings.confidence_thresholds.items()},
        }
        with self._extraction_lock(scope.user), self.curation_hold(scope.user):
            episodes = (
                self.store.get_episodes(scope, episode_ids)
                if episode_ids is not None
                else unextracted(self.store, scope)
            )
            return extract_into(
                self.store,
                scope,
                extractor or self.extractor(),
                episodes,
                now=self.clock.now(),
                config=GuardConfig(thresholds=thresholds),
            )

    @contextmanager
    def curation_hold(self, user: str) -> Iterator[None]:
        """Hold the store's lock on curating ``user`` for the block (a
        :class:`memstrata.ports.LockingStore`: every process using the store waits its turn,
        so two never extract the same turns); held once per thread, however deep the calls
        (a consolidation extracts)."""
        held: dict[str, int] = self._held_here()
        if held.get(user) or not isinstance(self.store, LockingStore):
            held[user] = held.get(user, 0) + 1
            try:
                yield
            finally:
                held[user] -= 1
            return
        with self.store.hold(f"curate:{user}", wait_s=CURATION_WAIT_S):
            held[user] = 1
            try:
                yield
            finally:
                held[user] = 0

    def _held_here(self) -> dict[str, int]:
        """The curation locks this thread holds, by user (depth)."""
        with self._index_lock:
            local: threading.local = self.__dict__.setdefault("_curation_held", threading.local())
        if not hasattr(local, "held"):
            local.held = {}
        return local.held  # type: ignore[no-any-return]

    def _extraction_lock(self, user: str) -> threading.Lock:
        """The lock one extraction of ``user``'s turns holds (made on first use)."""
        with self._index_lock:
            locks: dict[str, threading.Lock] = self.__dict__.setdefault("_extraction_locks", {})
            return locks.setdefault(user, threading.Lock())

    @property
    def runs(self) -> RunRegistry:
        """This process's curation runs (one per layer and key at a time)."""
        with self._index_lock:
            if self._runs is None:
                from memstrata.curate.runs import RunRegistry

                self._runs = RunRegistry(clock=self.clock)
            return self._runs

    def consolidate(
        self,
        scope: ScopeLike,
        *,
        mode: str = "update",
        remove: bool = False,
        user_speaker: str | None = None,
        llm: LLM | None = None,
        use_llm: bool = True,
    ) -> ConsolidationReport:
        """Consolidate curated documents. ``update``: facts new since the last run become
        bullets of their topic documents (and essentials), citing the same episodes, and
        superseded ones are removed; L1 is chosen again, the user being the speaker
        ``user_speaker`` names (default: the ``user_speaker`` setting; see
        :func:`memstrata.curate.essentials.choose_user`). ``audit``: bullets are checked
        against their evidence and unsupported ones flagged (deleted with ``remove``).
        ``dedup``: near-duplicate bullets are merged, their citations united.

        With a chat model (``llm``, else the configured one, measured and bounded by
        :meth:`metered_llm`; ``use_llm=False``: rules only) each mode lets the model do what
        rules cannot (see :mod:`memstrata.consolidate.by_model`); every output passes the
        guards and what the model could not do is done by rules."""
        from memstrata.consolidate import Consolidator

        if mode not in MODES:
            raise InvalidInputError(f"unknown mode {mode!r}; expected update, audit or dedup")
        settings = self.settings or load_settings()
        if use_llm and llm is None:
            llm = self.metered_llm()
        consolidator = Consolidator(
            self.store,
            self.docs.documents,
            self.runs,
            essentials_budget=settings.essentials_budget,
            user_speaker=user_speaker or settings.user_speaker,
            llm=llm if use_llm else None,
            clock=self.clock,
            related=self._related_facts,
        )
        scope = as_scope(scope)
        with self.curation_hold(scope.user):  # one curation of a user at a time, any process
            if mode == "update":
                report = consolidator.update(scope)
            elif mode == "audit":
                report = consolidator.audit(
                    scope, remove=remove, kept=kept_check(self.store, scope)
                )
            else:
                report = consolidator.dedup(scope)
        from memstrata.llm.metered import MeteredLLM

        if use_llm and isinstance(llm, MeteredLLM):
            report.usage = llm.totals()
        return report

    def _related_facts(self, scope: Scope, text: str) -> list[str]:
        """Ids of the facts a search for ``text`` finds (contradiction candidates)."""
        search = getattr(self, "search", None)
        if search is None:
            return []
        return [h.id for h in search(text, scope, k=_RELATED_K, granularity="fact", wait=False)]

    # runs ---------------------------------------------------------------------------
    def curate(
        self,
        scope: ScopeLike,
        kind: RunKind = "consolidate",
        *,
        mode: str = "update",
        extract: bool = True,
        remove: bool = False,
        user_speaker: str | None = None,
        use_llm: bool = True,
        trigger: Trigger = "request",
    ) -> Curation:
        """Curate the scope now, in this thread, as one run of :attr:`runs` (what
        :meth:`start_run` does in the background): ``BusyError`` while the scope has one.
        ``use_llm=False``: rules only. The run records its events, its report
        (``run.result``) and its end; a failure is recorded in it, then raised."""
        scope = as_scope(scope)
        _check_run(kind, mode)
        run = self.runs.open(CURATION, str(scope), scope=scope, trigger=trigger)
        with self.runs.running(run):
            return self._work(run, scope, kind, mode, extract, remove, user_speaker, use_llm)

    def curate_quiet(self, scope: ScopeLike) -> list[Curation]:
        """The automatic curation of a scope gone quiet (what the debounce queue of
        :meth:`memstrata.api.Memory.start_auto_curation` does), each step a run marked
        ``auto``: a thread's new turns are extracted in the thread (its facts cite its
        turns), then the user's memory is consolidated where it is (:func:`home_scope`); a
        scope without a thread is extracted and consolidated in one run. ``BusyError`` when
        a run holds either scope (the queue tries again later); nothing more once a run is
        cancelled."""
        scope = as_scope(scope)
        home = home_scope(scope)
        if home == scope:
            return [self.curate(scope, "consolidate", trigger="auto")]
        extracted = self.curate(scope, "extract", trigger="auto")
        if extracted.run.cancelled:
            return [extracted]
        return [extracted, self.curate(home, "consolidate", extract=False, trigger="auto")]

    def start_run(
        self,
        scope: ScopeLike,
        kind: RunKind = "consolidate",
        *,
        mode: str = "update",
        extract: bool = True,
        remove: bool = False,
        user_speaker: str | None = None,
    ) -> Run:
        """Start curating the scope in a background thread and return its run at once:
        ``extract`` extracts facts from the turns no fact cites yet; ``consolidate`` does
        what :meth:`consolidate` does (in mode ``update``, after extracting, unless
        ``extract`` is off). One run per scope at a time (:class:`BusyError`). The run's
        events (its own, and those of the documents it writes) replay from
        :attr:`runs`; its report is ``run.result`` once it is done. Cancelling it stops it
        before its next step (consolidation, after extraction). ``user_speaker`` names the
        scope's user for this run, as in :meth:`consolidate`."""
        scope = as_scope(scope)
        _check_run(kind, mode)
        run = self.runs.open(CURATION, str(scope), scope=scope)
        worker = threading.Thread(
            target=self._carry,
            args=(run, scope, kind, mode, extract, remove, user_speaker),
            name=f"memstrata-{run.id}",
            daemon=True,
        )
        with self._index_lock:
            self._workers = [w for w in self._workers if w.is_alive()] + [worker]
        worker.start()
        return run

    def _carry(
        self,
        run: Run,
        scope: Scope,
        kind: RunKind,
        mode: str,
        extract: bool,
        remove: bool,
        user_speaker: str | None,
    ) -> None:
        try:
            with self.runs.running(run):
                self._work(run, scope, kind, mode, extract, remove, user_speaker, True)
        except Exception:  # recorded as the run's failure; nobody waits to catch it
            log.warning("curation run %s failed", run.id, exc_info=True)

    def _work(
        self,
        run: Run,
        scope: Scope,
        kind: RunKind,
        mode: str,
        extract: bool,
        remove: bool,
        user_speaker: str | None,
        use_llm: bool,
    ) -> Curation:
        """The run's work: extraction, then consolidation, with one token budget for both."""
        done = Curation(kind, run)
        metered = self.metered_llm(run) if use_llm else None
        if kind == "extract" or (extract and mode == "update"):
            run.emit("step", step="extract")
            from memstrata.curate.extract_rules import RuleExtractor

            extractor: Extractor = RuleExtractor()
            if metered is not None:
                from memstrata.curate.extract_llm import LLMExtractor

                extractor = LLMExtractor(metered, fallback=extractor)
            with metered.step("extract") if metered is not None else nullcontext():
                done.extraction = self.extract(scope, extractor=extractor)
        if kind == "consolidate" and not run.cancelled:
            run.emit("step", step="consolidate", mode=mode)
            done.consolidation = self.consolidate(
                scope,
                mode=mode,
                remove=remove,
                user_speaker=user_speaker,
                llm=metered,
                use_llm=metered is not None,
            )
        if metered is not None:
            done.model = metered.totals()
        run.result = done.to_json()
        fallback = done.fallback
        if fallback is not None and run.trigger == "auto":  # no caller to tell: the log does
            log.warning("automatic curation run %s of %s: %s", run.id, scope, fallback.message())
        run.emit("report", result=run.result)
        return done

    def stop_runs(self) -> None:
        """Stop curating: no automatic run starts any more, the runs going are cancelled,
        and the background ones are waited for (a while)."""
        if self._queue is not None:
            self._queue.halt()
        with self._index_lock:
            workers, self._workers = self._workers, []
        if self._runs is not None:
            for run in self._runs.active():
                run.cancel()
        for worker in workers:
            worker.join(_STOP_WAIT_S)
