"""A scope's episodes restored from the raw trace (verbatim: same ids, times, threads)."""

from __future__ import annotations

import logging

from memstrata.codec import episode_from_json
from memstrata.errors import NotFoundError, StoreError
from memstrata.model import Episode, Scope
from memstrata.ports import RecordStore
from memstrata.trace import JsonlTrace, scan_file

log = logging.getLogger(__name__)


def trace_episodes(trace: JsonlTrace, scope: Scope) -> list[Episode]:
    """The episodes of ``scope`` as the trace holds them (verbatim, same ids and times), in id
    order; a deleted episode left only a tombstone and is not among them."""
    found: dict[str, Episode] = {}
    for file in trace.files():
        try:
            lines = list(scan_file(file))
        except OSError as exc:
            raise StoreError(f"cannot read the trace file {file}: {exc}") from exc
        for line in lines:
            event = line.event
            if event is None or event.get("event") != "episode" or event.get("id") in found:
                continue
            try:
                episode = episode_from_json(event)
            except (KeyError, TypeError, ValueError) as exc:
                log.warning("skipping %s:%d, not an episode event (%s)", file, line.number, exc)
                continue
            if scope.contains(episode.scope):
                found[episode.id] = episode
    return [found[k] for k in sorted(found)]


def restore_from_trace(
    store: RecordStore, trace: JsonlTrace, scope: Scope, *, missing: bool = False
) -> list[Episode]:
    """Restore the episodes of ``scope`` from the trace into the store; what was restored.

    The scope must be empty (no episodes, facts or documents), unless ``missing``: then only
    the episodes the store lacks are added (after a repair that could not read them all)."""
    episodes = trace_episodes(trace, scope)
    if not episodes:
        raise NotFoundError(f"the trace holds no episodes of scope {scope}")
    if not missing:
        store.restore(scope, episodes, [], [])
        return episodes
    stored = {e.id for e in store.get_episodes(scope, [e.id for e in episodes])}
    lacking = [e for e in episodes if e.id not in stored]
    if lacking:
        store.add_episodes(scope, lacking)
    return lacking
