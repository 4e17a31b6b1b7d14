"""Capture: turns stored verbatim as episodes (and in the raw trace), and conversation files
imported whole (:meth:`CaptureService.ingest`; keyed batches are :mod:`memstrata.api.imports`).

A service of the facade (``memory.capture``): it takes the :class:`~memstrata.api.runtime.Runtime`
and nothing else, and :class:`memstrata.api.Memory` delegates ``remember`` and ``ingest`` to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from time import perf_counter
from typing import Final

from memstrata import importers
from memstrata.api.inputs import (
    IngestReport,
    ScopeLike,
    TurnLike,
    as_scope,
    as_turn,
    scrubbed,
    scrubbed_json,
)
from memstrata.api.runtime import Runtime
from memstrata.codec import episode_to_json
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.ids import new_id
from memstrata.importers import ImportBatch
from memstrata.model import Episode, JsonValue, Scope, Turn, utc

#: the longest surface, session id or speaker name accepted
MAX_LABEL_CHARS: Final = 256


class CaptureService:
    """Storing turns verbatim as episodes (and in the raw trace), and imports."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def remember(
        self,
        turns: TurnLike | Iterable[TurnLike],
        scope: ScopeLike,
        *,
        surface: str = "chat",
        session_id: str | None = None,
    ) -> list[Episode]:
        """Store turns verbatim as episodes (L3) and append them to the raw trace.

        ``turns`` is one turn or several: text, :class:`Turn` or a mapping with the same
        fields. All turns are checked before any is stored; the batch is stored whole.
        """
        scope = as_scope(scope)
        if isinstance(turns, str | Turn | Mapping):
            items: list[TurnLike] = [turns]
        elif isinstance(turns, Iterable):
            items = list(turns)
        else:
            raise InvalidInputError(
                f"turns are text, a Turn, a mapping or a list of them, not {type(turns).__name__}"
            )
        if not items:
            raise InvalidInputError("no turns to remember")
        turns_in = [as_turn(t) for t in items]
        runtime = self.runtime
        for number, turn in enumerate(turns_in, start=1):
            runtime.check_size(turn.text, f"turn {number}" if len(turns_in) > 1 else "the turn")
        parsed = [self.capture_text(t, scope) for t in turns_in]
        episodes = self.episodes(parsed, scope, surface=surface, session_id=session_id)
        runtime.store.add_episodes(scope, episodes)
        self.trace_episodes(surface, episodes)
        runtime.written(scope)
        runtime.touched(scope)
        return episodes

    def capture_text(self, turn: Turn, scope: Scope) -> Turn:
        """Secrets are scrubbed from verbatim capture unless configured off: from the turn's
        text and from every string of its metadata (an imported record, a LangGraph value)."""
        settings = self.runtime.settings
        if settings is not None and not settings.scrub_capture:
            return turn
        text = scrubbed(turn.text, scope, secrets_only=True)
        metadata = scrubbed_json(turn.metadata, scope) if turn.metadata else turn.metadata
        if text == turn.text and metadata == turn.metadata:
            return turn
        return replace(turn, text=text, metadata=metadata)

    def episodes(
        self, turns: Sequence[Turn], scope: Scope, *, surface: str, session_id: str | None
    ) -> list[Episode]:
        """Episodes of ``turns`` as they will be stored (new ids, the session and time given
        or now's); the labels checked."""
        if not surface or not surface.strip():
            raise InvalidInputError("surface must not be empty")
        for turn in turns:
            for name, label in (
                ("surface", surface),
                ("session", session_id or turn.session_id),
                ("speaker", turn.speaker),
            ):
                if label is not None and len(label) > MAX_LABEL_CHARS:
                    raise InvalidInputError(
                        f"{name} has {len(label)} characters; at most {MAX_LABEL_CHARS}"
                    )
        now = self.runtime.clock.now()
        default_session = session_id or now.strftime("%Y-%m-%d")
        return [
            Episode(
                id=new_id("ep"),
                scope=scope,
                surface=surface,
                session_id=t.session_id or default_session,
                speaker=t.speaker if t.speaker is not None else t.role.value,
                role=t.role,
                text=t.text,
                time=utc(t.time) if t.time is not None else now,
                metadata=dict(t.metadata),
            )
            for t in turns
        ]

    def trace_episodes(self, surface: str, episodes: Sequence[Episode]) -> None:
        """Append ``episodes`` to the raw trace (if there is one)."""
        trace = self.runtime.trace
        if trace is None:
            return
        events: list[Mapping[str, JsonValue]] = [
            {"event": "episode", **episode_to_json(e)} for e in episodes
        ]
        trace.append(surface, events)

    def ingest(
        self,
        source: str | Path | ImportBatch,
        user: str,
        *,
        fmt: str | None = None,
    ) -> IngestReport:
        """Import a conversation file; each conversation goes to thread ``<key>`` of ``user``.

        The whole file is parsed and checked before anything is stored.
        """
        started = perf_counter()
        if isinstance(source, ImportBatch):
            batch = source
        else:
            if fmt is None:
                raise InvalidInputError(
                    "name the import format (locomo, longmemeval, madial or jsonl)"
                )
            batch = importers.load(source, fmt)
        if batch.turn_count == 0:
            raise ImportFormatError("holds no turns to import", source=batch.source)
        runtime = self.runtime
        for conv in batch.conversations:  # every turn checked before anything is stored
            for number, turn in enumerate(conv.turns, start=1):
                runtime.check_size(turn.text, f"{batch.source}: thread {conv.key}, turn {number}")
        prepared = []
        for conv in batch.conversations:
            scope = Scope(user, conv.key)
            prepared.append(
                (
                    scope,
                    self.episodes(
                        [self.capture_text(t, scope) for t in conv.turns],
                        scope,
                        surface="import",
                        session_id=None,
                    ),
                )
            )
        everything = [e for _, episodes in prepared for e in episodes]
        runtime.store.add_episodes(Scope(user), everything)  # one transaction: all or nothing
        self.trace_episodes("import", everything)
        runtime.written(Scope(user))
        return IngestReport(
            source=batch.source,
            format=batch.format,
            conversations=len(batch.conversations),
            turns=batch.turn_count,
            questions=batch.question_count,
            scopes=tuple(s for s, _ in prepared),
            seconds=perf_counter() - started,
        )
