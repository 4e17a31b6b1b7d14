"""Searching curated documents: topic granularity, layer filters, and the index following every
document change (consolidation, edits, moves, deletes), in English and Chinese."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.codec import hit_to_json
from memstrata.document.ops import Operation, OpKind
from memstrata.document.service import kind_for
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import InvalidInputError
from memstrata.model import DeleteReason, Granularity, Layer, Scope, SearchFilter
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice")
TOPIC = Granularity.TOPIC


@pytest.fixture
def mem(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    with Memory.open(
        settings=load_settings(data_dir=data_dir), clock=clock, embedder=HashingEmbedder(dim=128)
    ) as m:
        m.add_fact("Alice is planning a trip to Kyoto in April", ALICE, topic="travel")
        m.add_fact("Alice booked a ryokan near the Kyoto station", ALICE, topic="travel")
        m.add_fact("Alice 在学 Rust，觉得借用检查器很难", ALICE, topic="编程")
        m.add_fact("Alice prefers short answers with code first", ALICE, category="preference")
        m.consolidate(ALICE)
        yield m


def _keys(hits: list) -> list[str | None]:  # type: ignore[type-arg]
    return [h.topic for h in hits]


def test_a_topic_search_finds_the_document_by_its_bullets(mem: Memory) -> None:
    hits = mem.search("Kyoto ryokan trip", ALICE, granularity=TOPIC, k=3)
    assert hits[0].topic == "travel" and hits[0].granularity == TOPIC
    travel = mem.store.get_document(ALICE, kind_for("travel"), "travel")
    assert travel is not None and hits[0].id == travel.id
    doc, _ = mem.doc("travel", ALICE)
    bullet_ids = {b.id for s in doc.sections for b in s.bullets}
    assert len(hits[0].bullets) == 2 and set(hits[0].bullets) == bullet_ids
    assert "Kyoto" in hits[0].text and hits[0].session_id is None
    as_json = hit_to_json(hits[0])
    assert as_json["topic"] == "travel" and as_json["bullets"] == list(hits[0].bullets)


def test_chinese_topics_are_found(mem: Memory) -> None:
    hits = mem.search("借用检查器", ALICE, granularity=TOPIC, k=2)
    assert hits[0].topic == "编程"


def test_layers_separate_essentials_from_topics(mem: Memory) -> None:
    l1 = mem.search(
        "short answers code", ALICE, granularity=TOPIC, filters=_layer(Layer.ESSENTIALS)
    )
    assert _keys(l1) == ["essentials"]
    l2 = mem.search("short answers code", ALICE, granularity=TOPIC, filters=_layer(Layer.TOPICS))
    assert "essentials" not in _keys(l2) and "preferences" in _keys(l2)
    turns = mem.search("Kyoto", ALICE, filters=_layer(Layer.ARCHIVE))
    assert turns and all(h.granularity == Granularity.TURN for h in turns)
    only_travel = mem.search(
        "Alice", ALICE, granularity=TOPIC, filters=SearchFilter(topic="travel")
    )
    assert _keys(only_travel) == ["travel"]


@pytest.mark.parametrize(
    ("granularity", "layer"),
    [
        (Granularity.TURN, Layer.TOPICS),
        (Granularity.FACT, Layer.ESSENTIALS),
        (Granularity.SESSION, Layer.TOPICS),
        (TOPIC, Layer.ARCHIVE),
    ],
)
def test_a_layer_that_granularity_cannot_reach_is_refused(
    mem: Memory, granularity: Granularity, layer: Layer
) -> None:
    with pytest.raises(InvalidInputError, match="granularity topic"):
        mem.search("Kyoto", ALICE, granularity=granularity, filters=_layer(layer))


def test_the_index_follows_edits_moves_and_deletes(mem: Memory) -> None:
    assert mem.search("Kyoto", ALICE, granularity=TOPIC, k=1)[0].topic == "travel"
    doc, version = mem.doc("travel", ALICE)
    first, second = (b for s in doc.sections for b in s.bullets)
    mem.apply_doc(
        "travel",
        ALICE,
        [Operation(OpKind.EDIT, first.id, text="Alice is planning a trip to Lisbon in May")],
        expected_version=version,
    )
    hits = mem.search("Lisbon", ALICE, granularity=TOPIC, k=1)
    assert hits[0].topic == "travel" and hits[0].bullets[0] == first.id
    assert "Lisbon" in hits[0].text
    doc, version = mem.doc("travel", ALICE)
    mem.apply_doc(
        "travel",
        ALICE,
        [Operation(OpKind.DELETE, second.id, reason=DeleteReason.USER_REQUEST)],
        expected_version=version,
    )
    for hit in mem.search("ryokan station", ALICE, granularity=TOPIC, k=5):
        assert second.id not in hit.bullets and "ryokan" not in hit.text
    stored = mem.store.get_document(ALICE, kind_for("travel"), "travel")
    assert stored is not None
    mem.delete(stored.id, ALICE)
    assert "travel" not in _keys(mem.search("Lisbon Kyoto", ALICE, granularity=TOPIC, k=10))


def test_a_rebuilt_index_has_the_documents_too(mem: Memory) -> None:
    mem.indexes.drop()
    assert mem.search("Kyoto ryokan", ALICE, granularity=TOPIC, k=1)[0].topic == "travel"


def test_topics_stay_in_their_scope(mem: Memory) -> None:
    mem.add_fact("Bob collects vintage cameras", "bob", topic="hobbies")
    mem.consolidate("bob")
    assert "hobbies" not in _keys(mem.search("vintage cameras", ALICE, granularity=TOPIC))
    thread = Scope("alice", thread="t1")
    mem.add_fact("Alice plays the cello on Sundays", thread, topic="music")
    mem.consolidate(thread)
    assert "music" in _keys(mem.search("cello", thread, granularity=TOPIC))
    other = Scope("alice", thread="t2")
    assert "music" not in _keys(mem.search("cello", other, granularity=TOPIC))


def _layer(layer: Layer) -> SearchFilter:
    return SearchFilter(layer=layer)
