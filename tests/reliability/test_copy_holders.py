"""Every holder of copies of user text (:mod:`memstrata.api.copies`) passes the same checks:
once a turn has reached it, its proof finds the copy (so the proof can fail); after the store
change of a deletion on request and the holder's erase, nothing is left, by its own read-back
and by its proof; the copies of another user's turn stay.

The turn reaches every holder as a memory copies it: the raw trace, the index built in this
process, a saved index, the vector cache (two hashing models in a blend), the store's files.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.api.copies import (
    CopyHolder,
    Erasing,
    LiveIndexCopies,
    SnapshotCopies,
    StoreFileCopies,
    TraceCopies,
    VectorCacheCopies,
)
from memstrata.model import DeleteReason, Erasure, Scope
from memstrata.settings import load_settings

TEXT = "I keep my grandmother's recipes for Oskvarel dumplings in a tin box."
OTHER = "我的邻居在景德镇做瓷器，每年春天都会送我一个茶杯。"
KINDS = [TraceCopies, LiveIndexCopies, SnapshotCopies, VectorCacheCopies, StoreFileCopies]
#: the holders whose proof finds a copy of a record still stored; the proofs of the saved
#: indexes and of the store's files pass over what stored records legitimately hold (a snapshot
#: saved since the last erasure, the store's rows): that they find a copy left behind is shown
#: by tests/reliability/test_erasure.py, which scans every file after a forget
SEES_LIVE_COPIES = (TraceCopies, LiveIndexCopies, VectorCacheCopies)


@pytest.fixture
def memory(data_dir: Path, env: dict[str, str]) -> Iterator[Memory]:
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        yield mem


def _job(mem: Memory, user: str, text: str, query: str) -> tuple[Erasing, str]:
    """A turn of ``user`` that has reached every holder, and the job its deletion gives."""
    episode = mem.remember([{"text": text, "speaker": "user"}], user)[0]
    assert mem.search(query, user, k=3)  # the index is built, vectors cached
    mem.indexes.save(user)  # and saved (if a search has not saved it already)
    assert mem.settings is not None
    assert any((mem.settings.index_dir).rglob("*")), "no saved index"
    texts = mem._derived_texts([episode])
    return Erasing(user, (episode.id,), texts, (episode.id,)), episode.id


def _holder(mem: Memory, kind: type) -> CopyHolder:
    found = [h for h in mem._copy_holders() if isinstance(h, kind)]
    assert len(found) == 1, mem._copy_holders()
    return found[0]


def _delete_in_store(mem: Memory, episode_id: str) -> None:
    """The store's part of a deletion on request of the turn (its transaction and journal)."""
    record = mem.store.erase(
        Scope("u"),
        Erasure(
            target=episode_id,
            reason=DeleteReason.USER_REQUEST.value,
            episode_ids=(episode_id,),
            derived=True,
        ),
    )
    assert record.episode_ids == (episode_id,)


def test_a_memory_on_a_data_directory_has_every_holder(memory: Memory) -> None:
    assert [type(h) for h in memory._copy_holders()] == KINDS


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.__name__)
def test_a_holder_erases_its_copies_and_proves_none_is_left(memory: Memory, kind: type) -> None:
    kept, _ = _job(memory, "v", OTHER, "景德镇 瓷器")
    job, episode_id = _job(memory, "u", TEXT, "Oskvarel dumplings")
    holder = _holder(memory, kind)
    if isinstance(holder, SEES_LIVE_COPIES):
        assert holder.residue(job), f"{holder.what}: the copy is not found before the erase"
    _delete_in_store(memory, episode_id)
    done = holder.erase(job)
    assert done.left == [], f"{holder.what}: {done.left}"
    assert holder.residue(job) == [], holder.what
    if isinstance(holder, TraceCopies):
        assert done.count == 1  # one line erased
    if isinstance(holder, SEES_LIVE_COPIES):
        assert holder.residue(kept), f"{holder.what}: another user's copy went too"


def test_a_holder_that_cannot_erase_leaves_the_others_erasing(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstrata.api.copies import erase_copies
    from memstrata.errors import StoreError

    job, episode_id = _job(memory, "u", TEXT, "Oskvarel dumplings")
    _delete_in_store(memory, episode_id)
    holders = memory._copy_holders()
    snapshots = next(h for h in holders if isinstance(h, SnapshotCopies))

    def refuse(job: Erasing) -> None:
        raise StoreError("the saved indexes are held by a save")

    monkeypatch.setattr(snapshots, "erase", refuse)
    count, left = erase_copies(holders, job)
    assert left == ["the saved indexes are held by a save"]
    assert count == 1
    for holder in holders:
        if isinstance(holder, SEES_LIVE_COPIES):
            assert holder.residue(job) == [], holder.what
