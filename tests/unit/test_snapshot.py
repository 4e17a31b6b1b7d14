"""Saved search indexes: a snapshot loads to the same index, damage and mismatch rebuild it,
later writes are caught up, a deletion on request leaves no copy in it, and a save that fails
halfway (or another process's save) never breaks the snapshot in use."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from memstrata.api import Memory
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.fake import HashingEmbedder
from memstrata.index import snapshot as snapshot_module
from memstrata.index.config import RankingConfig
from memstrata.index.scope_index import UserIndex
from memstrata.index.snapshot import SnapshotStore
from memstrata.model import Granularity, Scope, SearchFilter
from memstrata.settings import load_settings
from tests.reliability.scan import scan

ROOT = Path(__file__).resolve().parents[2]
START = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)
SECRET = "Our vault code is kept under the Tarnwick lighthouse stairs, tell nobody."


def blend() -> BlendEmbedder:
    return BlendEmbedder([HashingEmbedder(16), HashingEmbedder(24)], {})


def open_memory(data_dir: Path, ranking: RankingConfig | None = None) -> Memory:
    return Memory.open(settings=load_settings(data_dir=data_dir), embedder=blend(), ranking=ranking)


def conversation(n: int, *, offset: int = 0) -> list[dict[str, object]]:
    words = ["hiking", "piano", "北京", "budget", "recipe", "dentist", "马拉松", "garden"]
    return [
        {
            "text": f"{words[i % 8]} {words[(i * 3) % 8]} note {i + offset} 第{i % 5}次",
            "speaker": ("Ann", "Bob", "小明")[i % 3],
            "time": (START + timedelta(hours=i + offset)).isoformat(),
            "session_id": f"s{(i + offset) // 6}",
        }
        for i in range(n)
    ]


def fill(memory: Memory, n: int = 60) -> None:
    memory.remember(conversation(n), Scope("u", "t1"))
    memory.remember(conversation(n // 2, offset=1000), Scope("u", "t2"))
    memory.remember([{"text": SECRET, "speaker": "Ann"}], Scope("u", "t1"), session_id="s1")
    memory.remember([{"text": "a note of another user about hiking"}], "v")
    memory.extract("u")
    memory.consolidate("u")  # facts, topic documents and essentials


QUERIES = ("hiking piano", "北京 马拉松", "budget recipe note 7", "Ann dentist", "Tarnwick vault")
SEARCHES: list[tuple[Scope, Granularity, SearchFilter]] = [
    (Scope("u"), Granularity.TURN, SearchFilter()),
    (Scope("u", "t2"), Granularity.TURN, SearchFilter()),
    (Scope("u"), Granularity.TURN, SearchFilter(speaker="小明")),
    (Scope("u"), Granularity.TURN, SearchFilter(since=START + timedelta(hours=10))),
    (Scope("u"), Granularity.TURN, SearchFilter(session_id="s2")),
    (Scope("u"), Granularity.SESSION, SearchFilter()),
    (Scope("u"), Granularity.FACT, SearchFilter()),
    (Scope("u"), Granularity.TOPIC, SearchFilter()),
]


def results(memory: Memory) -> list[list[tuple[object, ...]]]:
    out = []
    for query in QUERIES:
        for scope, level, filters in SEARCHES:
            hits = memory.search(query, scope, k=5, granularity=level, filters=filters)
            out.append([(h.id, h.score, h.components, h.text, h.episodes, h.bullets) for h in hits])
    return out


def snapshot_files(data_dir: Path) -> dict[str, str]:
    return {
        str(p.relative_to(data_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted((data_dir / "index").rglob("*"))
        if p.is_file() and ".lock" not in p.name
    }


@pytest.fixture
def saved(data_dir: Path) -> list[list[tuple[object, ...]]]:
    """A data directory whose user ``u`` has a saved index; the results it gave."""
    with open_memory(data_dir) as memory:
        fill(memory)
        before = results(memory)
        memory.indexes.wait()
        assert memory.indexes.rebuilds == 1
    assert SnapshotStore(data_dir / "index").info("u") is not None
    return before


def test_a_loaded_index_answers_as_the_built_one(
    data_dir: Path, saved: list[list[tuple[object, ...]]]
) -> None:
    with open_memory(data_dir) as memory:
        assert results(memory) == saved
        assert (memory.indexes.loads, memory.indexes.rebuilds) == (1, 0)
        index = memory.indexes.index("u")
        assert index.views[0].mapped_nbytes > 0  # the matrices are mapped, not read


def same_hits(got: list[list[tuple[object, ...]]], want: list[list[tuple[object, ...]]]) -> None:
    """The same hits in the same order, scores equal up to float rounding (an index built in
    another slot order sums in another order)."""
    assert [[h[0] for h in hits] for hits in got] == [[h[0] for h in hits] for hits in want]
    for mine, theirs in zip(got, want, strict=True):
        assert [h[1] for h in mine] == pytest.approx([h[1] for h in theirs], rel=1e-4, abs=1e-5)


def rebuilt_results(memory: Memory) -> list[list[tuple[object, ...]]]:
    """What the memory's records give when the index is built from them."""
    from memstrata.api.common import document_passages
    from memstrata.index.manager import IndexManager

    memory._indexes = IndexManager(memory.store, memory.embedder, passages=document_passages)
    return results(memory)


def test_a_loaded_index_takes_writes_and_matches_one_built_with_them(
    data_dir: Path, saved: list[list[tuple[object, ...]]]
) -> None:
    files = snapshot_files(data_dir)
    with open_memory(data_dir) as memory:
        index = memory.indexes.index("u")
        assert memory.indexes.loads == 1
        rows = index.views[0]._base_rows
        snapshots, memory.indexes.snapshots = memory.indexes.snapshots, None  # no save yet
        memory.remember(conversation(400, offset=5000), Scope("u", "t1"))  # past the mapped rows
        memory.remember(conversation(4, offset=1003), Scope("u", "t2"))  # into a mapped session
        memory.indexes.index("u")
        assert len(index) > rows and memory.indexes.loads == 1
        assert snapshot_files(data_dir) == files  # mapped copy-on-write: the files never change
        memory.indexes.snapshots = snapshots
        turns = memory.list(Scope("u", "t2"), "episode")
        memory.delete(turns[0].id, "u")
        after = results(memory)
        assert memory.indexes.index("u") is index  # caught up, not rebuilt
        same_hits(after, rebuilt_results(memory))


def test_pending_dense_work_loads_as_pending(data_dir: Path, saved: object) -> None:
    with open_memory(data_dir) as memory:
        index = memory.indexes.index("u")
        slot = index.catalog.slots[next(iter(index.catalog.slots))]
        for view in index.views:
            view.remove(slot)  # alive in the catalog, not in the views: dense work to do
        info = memory.indexes.snapshots.save(index, memory.store)  # type: ignore[union-attr]
        assert info is not None
    with open_memory(data_dir) as memory:
        loaded = memory.indexes.index("u")
        assert memory.indexes.loads == 1
        assert loaded.catalog.alive[slot]
        assert all(slot not in view for view in loaded.views)
        assert loaded.pending == 1  # the background indexer's work, found again
        assert all(
            not view.scores(np.ones(40, np.float32), slot + 1)[slot] for view in loaded.views
        )


def _damage_archive(path: Path) -> None:
    archive = path / "index.npz"
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))


def _truncate_matrix(path: Path) -> None:
    matrix = path / "view1.block1.npy"
    matrix.write_bytes(matrix.read_bytes()[:-64])


def _other_format(path: Path) -> None:
    meta = json.loads((path / "meta.json").read_text())
    (path / "meta.json").write_text(json.dumps({**meta, "format": meta["format"] + 1}))


def _garbage_meta(path: Path) -> None:
    (path / "meta.json").write_text("{not json")


@pytest.mark.parametrize(
    "damage", [_damage_archive, _truncate_matrix, _other_format, _garbage_meta]
)
def test_a_damaged_snapshot_is_set_aside_and_the_index_rebuilt(
    data_dir: Path,
    saved: list[list[tuple[object, ...]]],
    damage: object,
    caplog: pytest.LogCaptureFixture,
) -> None:
    current = SnapshotStore(data_dir / "index").current("u")
    assert current is not None
    damage(current)  # type: ignore[operator]
    with open_memory(data_dir) as memory:
        assert results(memory) == saved
        assert (memory.indexes.loads, memory.indexes.rebuilds) == (0, 1)
    assert "not used" in caplog.text


@pytest.mark.parametrize(
    ("embedder", "ranking"),
    [
        (BlendEmbedder([HashingEmbedder(24), HashingEmbedder(16)], {}), None),
        (HashingEmbedder(40), None),
        (BlendEmbedder([HashingEmbedder(16), HashingEmbedder(24)], {}, (True, False)), None),
        (None, RankingConfig(dense_views=(0,))),
        (None, RankingConfig(lexical_prev=1)),
    ],
)
def test_a_snapshot_of_another_embedder_or_ranking_is_not_used(
    data_dir: Path, saved: object, embedder: object, ranking: RankingConfig | None
) -> None:
    settings = load_settings(data_dir=data_dir)
    with Memory.open(settings=settings, embedder=embedder or blend(), ranking=ranking) as memory:  # type: ignore[arg-type]
        assert memory.search("Tarnwick vault", "u", k=3)[0].text.endswith(SECRET)
        assert (memory.indexes.loads, memory.indexes.rebuilds) == (0, 1)


def test_weights_that_do_not_shape_the_index_keep_the_snapshot(
    data_dir: Path, saved: object
) -> None:
    with open_memory(data_dir, RankingConfig(lexical_weight=0.7, k1=1.5)) as memory:
        assert memory.search("Tarnwick vault", "u", k=3)
        assert memory.indexes.loads == 1


def test_a_snapshot_of_another_database_is_not_used(data_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    with open_memory(other) as memory:
        memory.remember(conversation(40), "u")
        memory.search("hiking", "u")
    with open_memory(data_dir) as memory:  # as many changes, other records
        memory.remember(conversation(40, offset=77), "u")
    (other / "index").rename(data_dir / "index")
    with open_memory(data_dir) as memory:
        hits = memory.search("note 80", "u", k=1)
        assert hits[0].text.endswith("note 80 第3次")
        assert (memory.indexes.loads, memory.indexes.rebuilds) == (0, 1)


def test_a_load_catches_up_with_writes_of_another_process(
    data_dir: Path, saved: list[list[tuple[object, ...]]]
) -> None:
    script = (
        "import sys\n"
        "from memstrata.api import Memory\n"
        "from memstrata.settings import load_settings\n"
        "from tests.unit.test_snapshot import blend\n"
        "settings = load_settings(data_dir=sys.argv[1])\n"
        "with Memory.open(settings=settings, embedder=blend()) as m:\n"
        "    turn = {'text': 'the Quorvane festival starts on Friday', 'speaker': 'Bob'}\n"
        "    m.remember([turn], 'u')\n"
    )
    subprocess.run([sys.executable, "-c", script, str(data_dir)], check=True, cwd=ROOT, timeout=120)
    with open_memory(data_dir) as memory:
        hits = memory.search("Quorvane festival", "u", k=1)
        assert hits[0].text == "Bob: the Quorvane festival starts on Friday"
        assert (memory.indexes.loads, memory.indexes.rebuilds) == (1, 0)
        same_hits(results(memory), rebuilt_results(memory))


def test_forgetting_leaves_no_copy_in_any_snapshot(data_dir: Path, saved: object) -> None:
    assert {f.path.name for f in scan(data_dir / "index", [SECRET])} == {"index.npz"}
    with open_memory(data_dir) as reader:
        loaded = reader.indexes.index("u")  # another user of the snapshot: mapped
        assert reader.indexes.loads == 1
        with open_memory(data_dir) as memory:
            hit = memory.search("Tarnwick vault", "u", k=1)[0]
            assert hit.text.endswith(SECRET)
            slot = loaded.catalog.slots[hit.id]
            mapped = loaded.views[0]._base[0]
            other = next(s for s in range(len(mapped)) if s != slot and mapped[s].any())
            memory.forget(hit.id, "u")
            assert not mapped[slot].any() and mapped[other].any()  # only its row was zeroed
            assert not scan(data_dir / "index", [SECRET])
            assert SnapshotStore(data_dir / "index").info("u") is not None  # saved again
        assert not scan(data_dir / "index", [SECRET])
        after = results(reader)  # caught up; the rows it maps are intact but the erased ones
        assert reader.indexes.index("u") is loaded
        assert not any(SECRET in str(hit) for hits in after for hit in hits)
        same_hits(after, rebuilt_results(reader))
    assert not scan(data_dir, [SECRET])


def test_a_save_begun_before_an_erasure_is_not_put_in_place(data_dir: Path) -> None:
    with open_memory(data_dir) as memory:
        fill(memory, 12)
        index = memory.indexes.index("u")
        hit = memory.search("Tarnwick vault", "u", k=1)[0]
        stale = UserIndex.from_parts(
            "u",
            index.embedder,
            index.config,
            index.passages,
            catalog=index.catalog,
            lexical=index.lexical,
            views=index.views,
            groups=index.groups(),
            generation=index.generation,
        )
        memory.forget(hit.id, "u")  # the mark is past the stale index's generation
        memory.indexes.wait()
        store = SnapshotStore(data_dir / "index")
        held = store.current("u")
        assert store.save(stale, memory.store) is None
        assert store.current("u") == held
        assert not scan(data_dir / "index", [SECRET])


def test_a_save_that_dies_halfway_leaves_the_snapshot_in_use(
    data_dir: Path, saved: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SnapshotStore(data_dir / "index")
    held = store.current("u")
    real = snapshot_module._write_matrix
    calls = []

    def dies(path: Path, *args: object) -> None:
        calls.append(path)
        if len(calls) == 3:
            raise KeyboardInterrupt  # as abrupt as it gets inside a process
        real(path, *args)  # type: ignore[arg-type]

    with open_memory(data_dir) as memory:
        memory.remember(conversation(5, offset=300), "u")
        index = memory.indexes.index("u")
        monkeypatch.setattr(snapshot_module, "_write_matrix", dies)
        with pytest.raises(KeyboardInterrupt):
            store.save(index, memory.store)
        monkeypatch.setattr(snapshot_module, "_write_matrix", real)
        assert store.current("u") == held
        loaded = store.load("u", blend(), RankingConfig(), None, memory.store)
        assert loaded is not None and len(loaded) == len(index) - 5
        assert [p.name for p in store.directory("u").iterdir() if p.is_dir()] == [held.name]  # type: ignore[union-attr]


def test_a_crashed_save_leaves_a_directory_the_next_save_removes(
    data_dir: Path, saved: object
) -> None:
    store = SnapshotStore(data_dir / "index")
    current = store.current("u")
    assert current is not None
    crashed = store.directory("u") / ".tmp-deadbeef"
    crashed.mkdir()
    (crashed / "index.npz").write_bytes((current / "index.npz").read_bytes())  # killed here
    with open_memory(data_dir) as memory:
        memory.search("hiking", "u")
        assert memory.indexes.loads == 1
        memory.remember(conversation(2, offset=900), "u")
        memory.search("hiking", "u")  # caught up: two changes are not worth a save yet
        assert memory.indexes.save("u") == 1
    assert not crashed.exists()
    now = store.current("u")
    assert now is not None and now != current
    assert [p for p in store.directory("u").iterdir() if p.is_dir()] == [now]


def test_a_new_snapshot_does_not_disturb_a_process_using_the_old_one(
    data_dir: Path, saved: list[list[tuple[object, ...]]]
) -> None:
    with open_memory(data_dir) as reader:
        assert results(reader) == saved
        old = SnapshotStore(data_dir / "index").current("u")
        with open_memory(data_dir) as writer:
            writer.remember(conversation(30, offset=400), "u")
            writer.search("hiking", "u")
            assert writer.indexes.save() == 1
        assert SnapshotStore(data_dir / "index").current("u") != old
        assert old is not None and not old.exists()
        fresh = results(reader)  # caught up on the writes, the old matrices still mapped
        same_hits(fresh, rebuilt_results(reader))
    with open_memory(data_dir) as memory:
        assert results(memory) == fresh
        assert memory.indexes.loads == 1


def test_the_save_policy_saves_on_close_only_what_changed(data_dir: Path, saved: object) -> None:
    files = snapshot_files(data_dir)
    with open_memory(data_dir) as memory:
        memory.search("hiking", "u")
    assert snapshot_files(data_dir) == files  # nothing changed: nothing written
    with open_memory(data_dir) as memory:
        memory.remember(conversation(1, offset=600), "u")
        memory.search("hiking", "u")
    assert snapshot_files(data_dir) != files


def test_config_content_fields_are_fields_of_the_ranking() -> None:
    assert set(snapshot_module.CONTENT_FIELDS) <= set(RankingConfig.__dataclass_fields__)
    same = snapshot_module.config_identity(replace(RankingConfig(), lexical_weight=0.9))
    assert same == snapshot_module.config_identity(RankingConfig())


def test_doctor_reports_a_damaged_snapshot_and_removes_it(data_dir: Path, saved: object) -> None:
    from memstrata.doctor import diagnose

    settings = load_settings(data_dir=data_dir)
    assert diagnose(settings).ok
    store = SnapshotStore(data_dir / "index")
    current = store.current("u")
    assert current is not None
    _damage_archive(current)
    (store.directory("u") / ".tmp-0123").mkdir()
    found = [p.what for p in diagnose(settings).problems if p.part == "index"]
    assert len(found) == 2 and "interrupted save" in found[0] and "cannot be used" in found[1]
    repaired = diagnose(settings, repair=True)
    assert repaired.ok and all(p.fixed for p in repaired.problems)
    assert store.current("u") is None
    assert not [p for p in store.directory("u").iterdir() if p.is_dir()]
    assert diagnose(settings).ok
    with open_memory(data_dir) as memory:
        assert memory.search("Tarnwick vault", "u", k=1)[0].text.endswith(SECRET)
        assert memory.indexes.rebuilds == 1


@pytest.mark.parametrize("strings", [[], [""], ["a", "", "b\x00c", "名字"], ["x"] * 3])
def test_strings_pack_and_unpack_whatever_they_hold(strings: list[str]) -> None:
    out: dict[str, np.ndarray] = {}  # type: ignore[type-arg]
    snapshot_module._pack("s", strings, out)
    assert snapshot_module._unpack("s", out) == strings


def test_the_approximate_graph_is_saved_and_loaded(data_dir: Path) -> None:
    pytest.importorskip("usearch")
    ranking = RankingConfig(ann_threshold=30, ann_candidates=20)
    with open_memory(data_dir, ranking) as memory:
        memory.remember(conversation(120), "u")
        before = [memory.search(q, "u", k=5) for q in QUERIES]
        assert all(view.approximate for view in memory.indexes.index("u").views)
    with open_memory(data_dir, ranking) as memory:
        assert [memory.search(q, "u", k=5) for q in QUERIES] == before
        assert memory.indexes.loads == 1
        assert all(view.approximate for view in memory.indexes.index("u").views)
    with open_memory(data_dir, replace(ranking, ann_threshold=None)) as memory:
        memory.search("hiking", "u")  # the same content, searched exactly: no graph loaded
        assert memory.indexes.loads == 1
        assert not any(view.approximate for view in memory.indexes.index("u").views)


def test_an_erasure_reads_its_proof_back_before_any_save_may_start(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save begun after the erasure (another process's index from before it) is refused by
    the mark, but while it writes, its temporary directory holds the texts: the erasure's
    read-back runs while saves are held off, so it never finds that directory."""
    free_at_proof: list[bool] = []
    residue = SnapshotStore.residue

    def watched(self: SnapshotStore, user: str, texts: object) -> list[str]:
        if sys._getframe(1).f_code.co_name != "erase":  # the facade's own proof, later
            return residue(self, user, texts)  # type: ignore[arg-type]
        with snapshot_module._flock(
            self.directory(user) / snapshot_module._SAVE_LOCK, exclusive=True, wait=0
        ) as free:
            free_at_proof.append(free)
        return residue(self, user, texts)  # type: ignore[arg-type]

    with open_memory(data_dir) as memory:
        fill(memory, 12)
        memory.indexes.save("u")
        hit = memory.search("Tarnwick vault", "u", k=1)[0]
        monkeypatch.setattr(SnapshotStore, "residue", watched)
        memory.forget(hit.id, "u")
    assert free_at_proof and not any(free_at_proof)  # a save could not have begun meanwhile
    assert not scan(data_dir / "index", [SECRET])
