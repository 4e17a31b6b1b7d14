"""The one check every curated item passes: the episodes it cites exist in its scope."""

from __future__ import annotations

from collections.abc import Iterable

from memstrata.model import Episode, Scope
from memstrata.ports import RecordStore


def missing_episodes(store: RecordStore, scope: Scope, episode_ids: Iterable[str]) -> list[str]:
    """The ids among ``episode_ids`` that name no episode in ``scope``, sorted (one query)."""
    wanted = sorted(set(episode_ids))
    found = {e.id for e in store.get_episodes(scope, wanted)}
    return [i for i in wanted if i not in found]


def missing_among(
    episodes: Iterable[Episode], scope: Scope, episode_ids: Iterable[str]
) -> list[str]:
    """The same check against episodes about to be stored with what cites them (an import
    into an empty scope): the ids naming none of ``episodes`` within ``scope``, sorted."""
    known = {e.id for e in episodes if scope.contains(e.scope)}
    return [i for i in sorted(set(episode_ids)) if i not in known]
