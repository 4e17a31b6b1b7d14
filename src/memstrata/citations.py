"""The one check every curated item passes: the episodes it cites exist in its scope."""

from __future__ import annotations

from collections.abc import Iterable

from memstrata.model import Scope
from memstrata.ports import RecordStore


def missing_episodes(store: RecordStore, scope: Scope, episode_ids: Iterable[str]) -> list[str]:
    """The ids among ``episode_ids`` that name no episode in ``scope``, sorted (one query)."""
    wanted = sorted(set(episode_ids))
    found = {e.id for e in store.get_episodes(scope, wanted)}
    return [i for i in wanted if i not in found]
