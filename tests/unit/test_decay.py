"""Decay scores and archiving beyond a cap: oldest, least used first; evidence kept; nothing
deleted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata.api import Memory
from memstrata.curate.decay import DecayPolicy, archive_beyond_cap, decay_score
from memstrata.errors import InvalidInputError
from memstrata.model import EpisodeFilter, Scope, SearchFilter, Turn

NOW = datetime(2025, 1, 1, tzinfo=UTC)
ALICE = Scope("alice")


def test_score_halves_every_half_life_and_grows_with_use() -> None:
    policy = DecayPolicy(half_life_days=30)
    fresh = decay_score(1.0, NOW, NOW, policy=policy)
    month = decay_score(1.0, NOW - timedelta(days=30), NOW, policy=policy)
    assert fresh == 1.0 and month == pytest.approx(0.5)
    assert decay_score(1.0, NOW, NOW, uses=3, policy=policy) > fresh
    assert decay_score(0.2, NOW, NOW, policy=policy) < fresh
    with pytest.raises(InvalidInputError):
        DecayPolicy(half_life_days=0)


def test_archive_beyond_cap(memory: Memory) -> None:
    days = [300, 200, 100, 50, 10, 1]
    eps = memory.remember(
        [Turn(f"turn said {d} days ago", time=NOW - timedelta(days=d)) for d in days], ALICE
    )
    cited = memory.add_fact("evidence for a current fact", ALICE, sources=[eps[0].id])
    report = archive_beyond_cap(memory.store, ALICE, now=NOW, policy=DecayPolicy(episode_cap=4))
    # 6 live, a cap of 4: two go
    assert report.live_before == 6 and len(report.archived) == 2
    assert eps[0].id not in report.archived  # oldest, but evidence of a current fact
    assert set(report.archived) == {eps[1].id, eps[2].id}  # the next oldest go
    live = memory.list(ALICE, episode_filter=EpisodeFilter(include_archived=False))
    assert len(live) == 4 and cited.valid_to is None
    assert memory.stats(ALICE).episodes == 6  # archived, never deleted
    assert memory.get(eps[1].id, ALICE).archived  # type: ignore[union-attr]
    again = archive_beyond_cap(memory.store, ALICE, now=NOW, policy=DecayPolicy(episode_cap=4))
    assert again.archived == ()


def test_archived_turns_are_searchable_on_request(tmp_path: object) -> None:
    from pathlib import Path

    from memstrata.embed.fake import HashingEmbedder
    from memstrata.settings import load_settings

    with Memory.open(
        settings=load_settings(data_dir=Path(str(tmp_path)) / "m"), embedder=HashingEmbedder(dim=32)
    ) as mem:
        old = mem.remember(
            Turn("an old note about sailing", time=NOW - timedelta(days=500)), ALICE
        )[0]
        mem.remember(Turn("a new note about cooking", time=NOW), ALICE)
        archive_beyond_cap(mem.store, ALICE, now=NOW, policy=DecayPolicy(episode_cap=1))
        assert old.id not in [h.id for h in mem.search("sailing", ALICE)]
        found = mem.search("sailing", ALICE, filters=SearchFilter(include_archived=True))
        assert found[0].id == old.id
