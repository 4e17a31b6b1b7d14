"""The RecordStore contract (see memstrata.ports.RecordStore): one suite, every store.

A new store joins by adding its backend to ``tests.contract.backends``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.ids import new_id
from memstrata.model import (
    ApiKey,
    Category,
    DocumentKind,
    DocumentWrite,
    Episode,
    EpisodeFilter,
    Erasure,
    Fact,
    FactFilter,
    HistoryOp,
    HistoryRewrite,
    ItemEvent,
    KeyRole,
    Role,
    Scope,
    When,
)
from memstrata.ports import RecordStore
from tests.conftest import FixedClock
from tests.contract.backends import (
    BACKENDS,
    fresh_url,
    migration_names,
    open_before_last_migration,
    open_fresh,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALICE = Scope("alice")
ALICE_T1 = Scope("alice", "t1")
ALICE_T2 = Scope("alice", "t2")
BOB = Scope("bob")


@pytest.fixture(params=BACKENDS)
def store(
    request: pytest.FixtureRequest, tmp_path: Path, clock: FixedClock
) -> Iterator[RecordStore]:
    with open_fresh(request.param, tmp_path, clock) as s:
        yield s


def episode(
    scope: Scope,
    text: str = "hello",
    *,
    session: str = "s1",
    speaker: str = "alice",
    minutes: int = 0,
) -> Episode:
    return Episode(
        id=new_id("ep"),
        scope=scope,
        surface="chat",
        session_id=session,
        speaker=speaker,
        role=Role.USER,
        text=text,
        time=T0 + timedelta(minutes=minutes),
        metadata={"n": minutes, "note": "中文"},
    )


def fact(
    scope: Scope,
    sources: tuple[str, ...],
    text: str = "Alice likes tea",
    category: Category = Category.PREFERENCE,
) -> Fact:
    return Fact(
        id=new_id("fa"),
        scope=scope,
        text=text,
        category=category,
        confidence=0.9,
        importance=0.5,
        topic="drinks",
        sources=sources,
        valid_from=T0,
        valid_to=None,
        superseded_by=None,
        created_at=T0,
        updated_at=T0,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_new_store_applies_every_migration_of_its_engine_once(
    backend: str, tmp_path: Path, clock: FixedClock
) -> None:
    from memstrata.store.opening import open_store

    with fresh_url(backend, tmp_path) as url:
        store = open_store(url, clock=clock)
        try:
            assert store.applied_migrations() == list(migration_names(backend))
            ep = episode(ALICE)
            store.add_episodes(ALICE, [ep])
        finally:
            store.close()
        again = open_store(url, clock=clock)  # finds them recorded: applies none again
        try:
            assert again.applied_migrations() == list(migration_names(backend))
            assert again.get_episode(ALICE, ep.id) == ep
        finally:
            again.close()


class TestEpisodes:
    def test_round_trip_keeps_every_field(self, store: RecordStore) -> None:
        ep = episode(ALICE_T1, "我喜欢喝茶, I like tea")
        store.add_episodes(ALICE_T1, [ep])
        assert store.get_episode(ALICE_T1, ep.id) == ep

    def test_listing_is_in_id_order_and_pages(self, store: RecordStore) -> None:
        eps = [episode(ALICE, f"turn {i}", minutes=i) for i in range(7)]
        store.add_episodes(ALICE, eps)
        first = store.list_episodes(ALICE, limit=3)
        rest = store.list_episodes(ALICE, after=first[-1].id, limit=10)
        assert [e.id for e in first + rest] == [e.id for e in eps]
        assert [e.id for e in store.iter_episodes(ALICE)] == [e.id for e in eps]

    def test_filters(self, store: RecordStore) -> None:
        a = episode(ALICE, "a", session="s1", speaker="alice", minutes=0)
        b = episode(ALICE, "b", session="s2", speaker="bot", minutes=10)
        c = episode(ALICE, "c", session="s2", speaker="alice", minutes=20)
        store.add_episodes(ALICE, [a, b, c])

        def ids(f: EpisodeFilter) -> list[str]:
            return [e.id for e in store.list_episodes(ALICE, f)]

        assert ids(EpisodeFilter(session_id="s2")) == [b.id, c.id]
        assert ids(EpisodeFilter(speaker="alice")) == [a.id, c.id]
        assert ids(EpisodeFilter(since=T0 + timedelta(minutes=5))) == [b.id, c.id]
        assert ids(EpisodeFilter(until=T0 + timedelta(minutes=10))) == [a.id]
        assert ids(EpisodeFilter(surface="notebook")) == []

    def test_batch_is_atomic(self, store: RecordStore) -> None:
        good = episode(ALICE)
        store.add_episodes(ALICE, [good])
        with pytest.raises(InvalidInputError):
            store.add_episodes(ALICE, [episode(ALICE, "new"), good])  # duplicate id
        assert [e.id for e in store.list_episodes(ALICE)] == [good.id]

    def test_archive_and_delete(self, store: RecordStore) -> None:
        a, b = episode(ALICE), episode(ALICE)
        store.add_episodes(ALICE, [a, b])
        assert store.archive_episodes(ALICE, [a.id]) == 1
        assert store.get_episode(ALICE, a.id).archived
        assert [
            e.id for e in store.list_episodes(ALICE, EpisodeFilter(include_archived=False))
        ] == [b.id]
        assert store.delete_episodes(ALICE, [a.id, "ep_01AAAAAAAAAAAAAAAAAAAAAAAA"]) == 1
        with pytest.raises(NotFoundError):
            store.get_episode(ALICE, a.id)

    def test_get_episodes_returns_only_existing(self, store: RecordStore) -> None:
        a = episode(ALICE)
        store.add_episodes(ALICE, [a])
        assert [e.id for e in store.get_episodes(ALICE, [a.id, new_id("ep")])] == [a.id]

    def test_existing_episodes_names_only_stored_ids(self, store: RecordStore) -> None:
        stored = [episode(ALICE) for _ in range(3)]
        store.add_episodes(ALICE, stored)
        asked = [*(e.id for e in stored), stored[0].id, new_id("ep")]
        assert store.existing_episodes(ALICE, asked) == {e.id for e in stored}
        assert store.existing_episodes(ALICE, []) == set()
        # more ids than one statement takes
        many = [new_id("ep") for _ in range(1500)]
        assert store.existing_episodes(ALICE, [*many, stored[1].id]) == {stored[1].id}


class TestIsolation:
    def test_a_user_never_sees_another_user(self, store: RecordStore) -> None:
        mine, theirs = episode(ALICE), episode(BOB)
        store.add_episodes(ALICE, [mine])
        store.add_episodes(BOB, [theirs])
        f = store.add_fact(BOB, fact(BOB, (theirs.id,)))
        doc = store.put_document(
            BOB, DocumentKind.IDENTITY, "identity", {"text": "bob"}, expected_version=0
        )
        with pytest.raises(NotFoundError):
            store.get_episode(ALICE, theirs.id)
        with pytest.raises(NotFoundError):
            store.get_fact(ALICE, f.id)
        with pytest.raises(NotFoundError):
            store.get_document_by_id(ALICE, doc.id)
        with pytest.raises(NotFoundError):
            store.history(ALICE, f.id)
        assert store.get_episodes(ALICE, [theirs.id]) == []
        assert store.existing_episodes(ALICE, [theirs.id, mine.id]) == {mine.id}
        assert [e.id for e in store.list_episodes(ALICE)] == [mine.id]
        assert store.list_facts(ALICE) == []
        assert store.list_documents(ALICE) == []
        assert store.facts_citing(ALICE, [theirs.id]) == []
        assert store.stats(ALICE).episodes == 1

    def test_writes_and_deletes_cannot_reach_another_scope(self, store: RecordStore) -> None:
        theirs = episode(BOB)
        store.add_episodes(BOB, [theirs])
        f = store.add_fact(BOB, fact(BOB, (theirs.id,)))
        with pytest.raises(InvalidInputError):
            store.add_episodes(ALICE, [episode(BOB)])
        with pytest.raises(InvalidInputError):
            store.add_fact(ALICE, fact(BOB, (theirs.id,)))
        with pytest.raises(InvalidInputError):  # citing another user's episode
            store.add_fact(ALICE, fact(ALICE, (theirs.id,)))
        assert store.delete_episodes(ALICE, [theirs.id]) == 0
        assert store.archive_episodes(ALICE, [theirs.id]) == 0
        with pytest.raises(NotFoundError):
            store.delete_fact(ALICE, f.id, reason="user-request")
        with pytest.raises(NotFoundError):
            store.update_fact(ALICE, f.evolve(text="hijacked"), expected_version=1)
        assert store.get_fact(BOB, f.id).text == f.text
        assert store.get_episode(BOB, theirs.id) == theirs

    def test_threads(self, store: RecordStore) -> None:
        t1, t2, top = episode(ALICE_T1), episode(ALICE_T2), episode(ALICE)
        store.add_episodes(ALICE, [t1, t2, top])
        assert [e.id for e in store.list_episodes(ALICE_T1)] == [t1.id]
        assert {e.id for e in store.list_episodes(ALICE)} == {t1.id, t2.id, top.id}
        with pytest.raises(NotFoundError):
            store.get_episode(ALICE_T1, t2.id)
        with pytest.raises(InvalidInputError):
            store.add_episodes(ALICE_T1, [episode(ALICE_T2)])

    def test_agents(self, store: RecordStore) -> None:
        a = episode(Scope("alice", agent="coder"))
        b = episode(Scope("alice", agent="writer"))
        store.add_episodes(ALICE, [a, b])
        assert [e.id for e in store.list_episodes(Scope("alice", agent="coder"))] == [a.id]

    def test_documents_are_per_exact_scope(self, store: RecordStore) -> None:
        store.put_document(
            ALICE, DocumentKind.IDENTITY, "identity", {"text": "user"}, expected_version=0
        )
        store.put_document(
            ALICE_T1, DocumentKind.IDENTITY, "identity", {"text": "thread"}, expected_version=0
        )
        user_doc = store.get_document(ALICE, DocumentKind.IDENTITY, "identity")
        thread_doc = store.get_document(ALICE_T1, DocumentKind.IDENTITY, "identity")
        assert user_doc is not None and user_doc.content == {"text": "user"}
        assert thread_doc is not None and thread_doc.content == {"text": "thread"}
        assert store.get_document(ALICE_T2, DocumentKind.IDENTITY, "identity") is None
        assert store.get_document(BOB, DocumentKind.IDENTITY, "identity") is None


class TestFacts:
    def _setup(self, store: RecordStore) -> tuple[Episode, Fact]:
        ep = episode(ALICE)
        store.add_episodes(ALICE, [ep])
        return ep, store.add_fact(ALICE, fact(ALICE, (ep.id,)))

    def test_round_trip(self, store: RecordStore) -> None:
        _, f = self._setup(store)
        assert store.get_fact(ALICE, f.id) == f
        assert f.version == 1

    def test_sources_must_exist(self, store: RecordStore) -> None:
        with pytest.raises(InvalidInputError, match="cite"):
            store.add_fact(ALICE, fact(ALICE, (new_id("ep"),)))
        with pytest.raises(InvalidInputError, match="cites no episode"):
            store.add_fact(ALICE, fact(ALICE, ()))
        assert store.list_facts(ALICE) == []

    def test_compare_and_swap(self, store: RecordStore, clock: FixedClock) -> None:
        _, f = self._setup(store)
        clock.advance(minutes=1)
        v2 = store.update_fact(ALICE, f.evolve(text="Alice likes green tea"), expected_version=1)
        assert v2.version == 2
        with pytest.raises(ConflictError) as info:
            store.update_fact(ALICE, f.evolve(text="stale writer"), expected_version=1)
        assert (info.value.expected, info.value.actual) == (1, 2)
        assert store.get_fact(ALICE, f.id).text == "Alice likes green tea"

    def test_history_keeps_every_version(self, store: RecordStore) -> None:
        ep, f = self._setup(store)
        later = store.update_fact(ALICE, f.evolve(importance=0.9), expected_version=1)
        newer = store.add_fact(ALICE, fact(ALICE, (ep.id,), "Alice likes coffee now"))
        store.update_fact(
            ALICE,
            later.evolve(valid_to=T0 + timedelta(days=1), superseded_by=newer.id),
            expected_version=2,
            op="supersede",
        )
        hist = store.history(ALICE, f.id)
        assert [(h.version, h.op) for h in hist] == [
            (1, HistoryOp.CREATE),
            (2, HistoryOp.UPDATE),
            (3, HistoryOp.SUPERSEDE),
        ]
        assert hist[0].data["importance"] == 0.5 and hist[1].data["importance"] == 0.9
        assert hist[2].data["superseded_by"] == newer.id

    def test_delete_erases_history_content(self, store: RecordStore) -> None:
        _, f = self._setup(store)
        store.delete_fact(ALICE, f.id, reason="user-request")
        with pytest.raises(NotFoundError):
            store.get_fact(ALICE, f.id)
        hist = store.history(ALICE, f.id)
        assert hist[-1].op == HistoryOp.DELETE and hist[-1].reason == "user-request"
        assert all(h.data == {} for h in hist)
        with pytest.raises(NotFoundError):
            store.update_fact(ALICE, f, expected_version=1)

    def test_filters_and_validity(self, store: RecordStore) -> None:
        ep, f = self._setup(store)
        other = store.add_fact(
            ALICE,
            replace(fact(ALICE, (ep.id,), "Alice is a nurse", Category.PROFILE), topic="work"),
        )
        store.update_fact(ALICE, f.evolve(valid_to=T0 + timedelta(days=10)), expected_version=1)
        assert [x.id for x in store.list_facts(ALICE, FactFilter(current_only=True))] == [other.id]
        assert store.list_facts(ALICE, FactFilter(superseded_only=True)) == []
        store.update_fact(ALICE, other.evolve(superseded_by=f.id), expected_version=1)
        assert [x.id for x in store.list_facts(ALICE, FactFilter(superseded_only=True))] == [
            other.id
        ]
        other = store.get_fact(ALICE, other.id)
        assert [
            x.id for x in store.list_facts(ALICE, FactFilter(category=Category.PREFERENCE))
        ] == [f.id]
        assert [x.id for x in store.list_facts(ALICE, FactFilter(topic="work"))] == [other.id]
        at_day_5 = FactFilter(valid_at=T0 + timedelta(days=5))
        assert {x.id for x in store.list_facts(ALICE, at_day_5)} == {f.id, other.id}
        at_day_20 = FactFilter(valid_at=T0 + timedelta(days=20))
        assert [x.id for x in store.list_facts(ALICE, at_day_20)] == [other.id]
        assert {x.id for x in store.list_facts(ALICE, FactFilter(source=ep.id))} == {f.id, other.id}

    def test_deleting_episodes_removes_citations(self, store: RecordStore) -> None:
        ep, f = self._setup(store)
        assert [x.id for x in store.facts_citing(ALICE, [ep.id])] == [f.id]
        store.delete_episodes(ALICE, [ep.id])
        assert store.facts_citing(ALICE, [ep.id]) == []
        assert store.get_fact(ALICE, f.id).sources == ()


MAY = When("下个月 next month", T0 + timedelta(days=120), T0 + timedelta(days=151))


class TestFactTimeAndSlot:
    """The time a fact speaks of (``when``), the state it sets (``slot``) and category health,
    through every path a fact takes in a store."""

    def test_round_trip_update_history_and_restore(
        self, store: RecordStore, tmp_path: Path, clock: FixedClock, request: pytest.FixtureRequest
    ) -> None:
        ep = episode(ALICE_T1)
        store.add_episodes(ALICE_T1, [ep])
        made = replace(
            fact(ALICE_T1, (ep.id,), "Alice is allergic to shrimp 对虾过敏", Category.HEALTH),
            when=MAY,
            slot="Allergy:shrimp 虾",
        )
        added = store.add_fact(ALICE_T1, made)
        got = store.get_fact(ALICE, added.id)
        assert got == added and got.when == MAY and got.slot == "Allergy:shrimp 虾"
        assert got.category is Category.HEALTH
        assert store.list_facts(ALICE, FactFilter(category=Category.HEALTH)) == [got]
        assert store.get_facts(ALICE, [added.id]) == [got]
        assert store.facts_citing(ALICE, [ep.id]) == [got]
        clock.advance(minutes=1)
        later = When("last Friday", T0 - timedelta(days=4), T0 - timedelta(days=3))
        v2 = store.update_fact(
            ALICE, got.evolve(when=later, slot="allergy:peanuts"), expected_version=1
        )
        with pytest.raises(ConflictError):
            store.update_fact(ALICE, got.evolve(slot="stale"), expected_version=1)
        assert store.get_fact(ALICE, added.id) == v2 and v2.when == later
        v3 = store.update_fact(ALICE, v2.evolve(when=None, slot=None), expected_version=2)
        assert store.get_fact(ALICE, added.id).when is None
        assert store.get_fact(ALICE, added.id).slot is None
        history = store.history(ALICE, added.id)
        assert [h.data["slot"] for h in history] == ["Allergy:shrimp 虾", "allergy:peanuts", None]
        assert history[0].data["when"] == {
            "text": "下个月 next month",
            "start": "2026-05-01T00:00:00.000000Z",
            "end": "2026-06-01T00:00:00.000000Z",
        }
        assert history[1].data["when"]["text"] == "last Friday"  # type: ignore[index]
        assert history[2].data["when"] is None and history[0].data["category"] == "health"
        back = store.update_fact(ALICE, v3.evolve(when=MAY, slot="allergy"), expected_version=3)
        (tmp_path / "other").mkdir()
        backend = request.node.callspec.params["store"]
        with open_fresh(backend, tmp_path / "other", clock) as other:
            other.restore(ALICE, [ep], [back], [])
            assert other.get_fact(ALICE, back.id) == back
            assert other.history(ALICE, back.id)[-1].data["slot"] == "allergy"

    def test_slot_and_slot_kind_filters_in_sql(self, store: RecordStore) -> None:
        ep, bobs = episode(ALICE), episode(BOB)
        store.add_episodes(ALICE, [ep])
        store.add_episodes(BOB, [bobs])
        slots = [
            "allergy:shrimp",
            "allergy",
            "allergy:",
            "allergyx:dust",
            "allergy;x",
            "Allergy:cat",
            "a%b:1",
            "axxb:1",
            "a_b:2",
            "axb:2",
            "a\\b:3",
            "a\\\\b:3",
            "a\\%:4",
            "过敏:虾",
            "过敏",
            "过敏症:花粉",
            "routine:running 🏃",
        ]
        ids = {
            slot: store.add_fact(ALICE, replace(fact(ALICE, (ep.id,), slot), slot=slot)).id
            for slot in slots
        }
        store.add_fact(ALICE, fact(ALICE, (ep.id,), "no slot"))
        store.add_fact(BOB, replace(fact(BOB, (bobs.id,)), slot="allergy:shrimp"))

        def found(**filters: str) -> set[str]:
            return {f.text for f in store.list_facts(ALICE, FactFilter(**filters))}  # type: ignore[arg-type]

        for slot in slots:
            assert found(slot=slot) == {slot}
        assert found(slot="allergy:Shrimp") == set()
        assert found(slot_kind="allergy") == {"allergy:shrimp", "allergy", "allergy:"}
        assert found(slot_kind="Allergy") == {"Allergy:cat"}
        assert found(slot_kind="a%b") == {"a%b:1"}
        assert found(slot_kind="a_b") == {"a_b:2"}
        assert found(slot_kind="a\\b") == {"a\\b:3"}
        assert found(slot_kind="a\\\\b") == {"a\\\\b:3"}
        assert found(slot_kind="a\\%") == {"a\\%:4"}
        assert found(slot_kind="a") == set()
        assert found(slot_kind="过敏") == {"过敏:虾", "过敏"}
        assert found(slot_kind="routine") == {"routine:running 🏃"}
        assert found(slot_kind="allergy", slot="allergy") == {"allergy"}
        # with the other filters, in the scope only
        old = ids["allergy:shrimp"]
        store.update_fact(
            ALICE,
            store.get_fact(ALICE, old).evolve(valid_to=T0 + timedelta(days=1)),
            expected_version=1,
        )
        assert {
            f.id
            for f in store.list_facts(ALICE, FactFilter(slot_kind="allergy", current_only=True))
        } == {ids["allergy"], ids["allergy:"]}
        assert [f.text for f in store.list_facts(BOB, FactFilter(slot_kind="allergy"))] == [
            "Alice likes tea"
        ]
        first = store.list_facts(ALICE, FactFilter(slot_kind="allergy"), limit=1)
        rest = store.list_facts(ALICE, FactFilter(slot_kind="allergy"), after=first[0].id)
        assert len(first) == 1 and len(rest) == 2

    @pytest.mark.parametrize("backend", BACKENDS)
    def test_a_store_of_the_previous_schema_migrates_and_keeps_its_facts(
        self, backend: str, tmp_path: Path, clock: FixedClock
    ) -> None:
        from memstrata.store.opening import open_store

        with fresh_url(backend, tmp_path) as url:
            old = open_before_last_migration(backend, url, clock)
            try:
                before = old.applied_migrations()
                ep = episode(ALICE, "我对虾过敏 I'm allergic to shrimp")
                old.add_episodes(ALICE, [ep])
                made = fact(ALICE, (ep.id,), "Alice is allergic to shrimp", Category.PERSONAL)
                with old._write() as tx:  # type: ignore[attr-defined]
                    tx.execute(
                        'INSERT INTO facts (id, "user", thread, agent, text, category, '
                        "confidence, importance, topic, valid_from, valid_to, superseded_by, "
                        "created_at, updated_at, access_count, version) "
                        "VALUES (?, ?, '', '', ?, ?, ?, ?, ?, ?, NULL, NULL, ?, ?, 0, 1)",
                        (
                            made.id,
                            "alice",
                            made.text,
                            made.category.value,
                            made.confidence,
                            made.importance,
                            made.topic,
                            "2026-01-01T00:00:00.000000Z",
                            "2026-01-01T00:00:00.000000Z",
                            "2026-01-01T00:00:00.000000Z",
                        ),
                    )
                    tx.execute(
                        "INSERT INTO fact_sources (fact_id, episode_id, ord) VALUES (?, ?, 0)",
                        (made.id, ep.id),
                    )
            finally:
                old.close()
            store = open_store(url, clock=clock)
            try:
                assert len(store.applied_migrations()) == len(before) + 1
                kept = store.get_fact(ALICE, made.id)
                assert kept == made and kept.when is None and kept.slot is None
                assert store.list_facts(ALICE, FactFilter(slot_kind="allergy")) == []
                store.update_fact(
                    ALICE, kept.evolve(slot="allergy:shrimp", when=MAY), expected_version=1
                )
                [now] = store.list_facts(ALICE, FactFilter(slot_kind="allergy"))
                assert now.slot == "allergy:shrimp" and now.when == MAY
            finally:
                store.close()

    @pytest.mark.parametrize("backend", BACKENDS)
    def test_a_copy_carries_them_and_its_digest_covers_them(
        self, backend: str, tmp_path: Path, clock: FixedClock
    ) -> None:
        from memstrata.store.copy import migrate_store
        from memstrata.store.opening import open_store
        from memstrata.store.sql.copying import TABLES

        (tmp_path / "a").mkdir()
        (tmp_path / "b").mkdir()
        with fresh_url(backend, tmp_path / "a") as src, fresh_url(backend, tmp_path / "b") as dst:
            source = open_store(src, clock=clock)
            try:
                ep = episode(ALICE)
                source.add_episodes(ALICE, [ep])
                made = replace(
                    fact(ALICE, (ep.id,), "Takes insulin 胰岛素", Category.HEALTH),
                    when=MAY,
                    slot="medication:insulin",
                )
                source.add_fact(ALICE, made)
                # every column of the table is copied and digested
                with source._write() as tx:  # type: ignore[attr-defined]
                    row = tx.execute("SELECT * FROM facts").fetchone()
                    assert set(dict(row)) == set(TABLES["facts"][0])
                digest = source.table_digests()["facts"]  # type: ignore[attr-defined]
                with source._write() as tx:  # type: ignore[attr-defined]
                    tx.execute("UPDATE facts SET slot = ?", ("medication:Insulin",))
                assert source.table_digests()["facts"] != digest  # type: ignore[attr-defined]
                with source._write() as tx:  # type: ignore[attr-defined]
                    tx.execute("UPDATE facts SET slot = ?", ("medication:insulin",))
                assert source.table_digests()["facts"] == digest  # type: ignore[attr-defined]
            finally:
                source.close()
            assert migrate_store(src, dst).tables["facts"] == digest
            target = open_store(dst, clock=clock)
            try:
                assert target.get_fact(ALICE, made.id) == made
                assert target.history(ALICE, made.id)[0].data["slot"] == "medication:insulin"
            finally:
                target.close()


class TestDocuments:
    def test_create_update_conflict(self, store: RecordStore, clock: FixedClock) -> None:
        d1 = store.put_document(
            ALICE, DocumentKind.TOPIC, "travel", {"markdown": "# Travel"}, expected_version=0
        )
        assert d1.version == 1
        with pytest.raises(ConflictError):
            store.put_document(
                ALICE, DocumentKind.TOPIC, "travel", {"markdown": "again"}, expected_version=0
            )
        clock.advance(seconds=5)
        d2 = store.put_document(
            ALICE, DocumentKind.TOPIC, "travel", {"markdown": "# 旅行"}, expected_version=1
        )
        assert (d2.id, d2.version, d2.created_at) == (d1.id, 2, d1.created_at)
        assert d2.updated_at > d1.updated_at
        with pytest.raises(ConflictError) as info:
            store.put_document(
                ALICE, DocumentKind.TOPIC, "travel", {"markdown": "stale"}, expected_version=1
            )
        assert info.value.actual == 2
        assert store.get_document_by_id(ALICE, d1.id).content == {"markdown": "# 旅行"}
        assert [h.version for h in store.history(ALICE, d1.id)] == [1, 2]

    def test_list_and_delete(self, store: RecordStore) -> None:
        a = store.put_document(ALICE, DocumentKind.TOPIC, "a", {}, expected_version=0)
        store.put_document(ALICE, DocumentKind.PROFILE, "profile", {}, expected_version=0)
        assert [d.key for d in store.list_documents(ALICE, DocumentKind.TOPIC)] == ["a"]
        assert len(store.list_documents(ALICE)) == 2
        store.delete_document(ALICE, a.id, reason="stale")
        assert store.get_document(ALICE, DocumentKind.TOPIC, "a") is None
        assert store.history(ALICE, a.id)[-1].op == HistoryOp.DELETE
        # the key is free again
        assert (
            store.put_document(ALICE, DocumentKind.TOPIC, "a", {}, expected_version=0).version == 1
        )


class TestErasure:
    def test_one_transaction_with_its_journal(self, store: RecordStore) -> None:
        gone, kept = episode(ALICE_T1, "secret"), episode(ALICE, "kept")
        store.add_episodes(ALICE, [gone, kept])
        only = store.add_fact(ALICE, fact(ALICE, (gone.id,), "only the secret"))
        both = store.add_fact(ALICE, fact(ALICE, (gone.id, kept.id), "both"))
        doc = store.put_document(
            ALICE, DocumentKind.TOPIC, "t", {"v": "secret"}, expected_version=0
        )
        record = store.erase(
            ALICE_T1,
            Erasure(
                target=gone.id,
                reason="user-request",
                episode_ids=(gone.id,),
                documents=(
                    DocumentWrite(
                        doc.id,
                        {"v": ""},
                        1,
                        (ItemEvent("m_x", HistoryOp.DELETE, "user-request", {}),),
                    ),
                ),
                history=(HistoryRewrite(doc.id, ALICE, 1, {"v": ""}),),
                texts=("bullet text",),
            ),
        )
        assert record.deleted == (gone.id,) and record.cascaded == (only.id, "m_x")
        assert record.episode_ids == (gone.id,) and not record.done
        assert set(record.texts) == {"secret", "only the secret", "bullet text"}
        assert record.counts == {
            "episodes": 1,
            "facts": 1,
            "documents": 0,
            "bullets": 1,
            "history": 1,
        }
        assert store.get_episodes(ALICE, [gone.id, kept.id]) == [kept]
        assert store.get_fact(ALICE, both.id).sources == (kept.id,)
        assert "secret" not in str([h.data for h in store.history(ALICE, doc.id)])
        assert [h.data for h in store.history(ALICE, only.id)] == [{}, {}]
        assert store.pending_erasures() == [record]
        assert store.find_erasure(ALICE, gone.id) == record
        assert store.find_erasure(BOB, gone.id) is None
        store.finish_erasure(record.id)
        assert store.pending_erasures() == []
        done = store.find_erasure(ALICE_T1, gone.id)
        assert done is not None and done.done and done.texts == ()

    def test_a_dry_run_reports_the_erasure_and_changes_nothing(self, store: RecordStore) -> None:
        gone, kept = episode(ALICE_T1, "secret"), episode(ALICE, "kept")
        store.add_episodes(ALICE, [gone, kept])
        only = store.add_fact(ALICE, fact(ALICE, (gone.id,), "only the secret"))
        both = store.add_fact(ALICE, fact(ALICE, (gone.id, kept.id), "both"))
        doc = store.put_document(
            ALICE, DocumentKind.TOPIC, "t", {"v": "secret"}, expected_version=0
        )
        erasure = Erasure(
            target=gone.id,
            reason="user-request",
            episode_ids=(gone.id,),
            documents=(
                DocumentWrite(
                    doc.id, {"v": ""}, 1, (ItemEvent("m_x", HistoryOp.DELETE, "user-request", {}),)
                ),
            ),
            history=(HistoryRewrite(doc.id, ALICE, 1, {"v": ""}),),
        )
        generation = store.generation("alice")
        history = store.history(ALICE, doc.id)
        preview = store.erase(ALICE_T1, erasure, dry_run=True)
        assert store.generation("alice") == generation
        assert store.get_episodes(ALICE, [gone.id, kept.id]) == [gone, kept]
        assert store.get_fact(ALICE, both.id) == both and store.get_fact(ALICE, only.id) == only
        assert store.history(ALICE, doc.id) == history
        assert store.pending_erasures() == [] and store.find_erasure(ALICE, gone.id) is None
        record = store.erase(ALICE_T1, erasure)
        assert (preview.deleted, preview.cascaded, preview.counts, set(preview.texts)) == (
            record.deleted,
            record.cascaded,
            record.counts,
            set(record.texts),
        )

    def test_an_erasure_waits_for_every_data_directory_enrolled_before_it(
        self, store: RecordStore, clock: FixedClock
    ) -> None:
        store.enrol_site("site_A", "host-a:/data")
        store.enrol_site("site_B", "host-b:/data")
        gone = episode(ALICE, "secret")
        store.add_episodes(ALICE, [gone])
        clock.advance(hours=1)
        record = store.erase(ALICE, Erasure(gone.id, "user-request", episode_ids=(gone.id,)))
        clock.advance(hours=1)
        store.enrol_site("site_C", "host-c:/data")  # new since: it holds no copy of it
        assert [r.id for r in store.erasures_for_site("site_A")] == [record.id]
        assert [r.id for r in store.erasures_for_site("site_B")] == [record.id]
        assert store.erasures_for_site("site_C") == []
        assert store.erasures_for_site("site_unknown") == []
        assert store.finish_erasure(record.id, "site_A") == 1  # B still holds copies
        assert store.erasures_for_site("site_A") == []
        waiting = store.find_erasure(ALICE, gone.id)
        assert waiting is not None and not waiting.done
        assert waiting.sites == ("site_A",) and "secret" in waiting.texts
        assert store.pending_erasures()[0].sites == ("site_A",)
        assert store.finish_erasure(record.id, "site_A") == 1  # said twice: the same
        assert store.finish_erasure(record.id, "site_B") == 0
        done = store.find_erasure(ALICE, gone.id)
        assert done is not None and done.done and done.texts == ()
        assert done.sites == ("site_A", "site_B")
        assert store.pending_erasures() == [] and store.erasures_for_site("site_B") == []
        with pytest.raises(NotFoundError):
            store.finish_erasure("er_01JAAAAAAAAAAAAAAAAAAAAAAA", "site_A")

    def test_a_data_directory_not_seen_within_the_wait_is_not_waited_for(
        self, store: RecordStore, clock: FixedClock
    ) -> None:
        store.enrol_site("site_A", "a")
        store.enrol_site("site_B", "b")
        gone = episode(ALICE, "secret")
        store.add_episodes(ALICE, [gone])
        clock.advance(hours=2)
        store.enrol_site("site_A", "a")  # seen again; B not since
        record = store.erase(ALICE, Erasure(gone.id, "user-request", episode_ids=(gone.id,)))
        assert store.finish_erasure(record.id, "site_A", wait=timedelta(hours=3)) == 1
        assert store.finish_erasure(record.id, wait=timedelta(hours=1)) == 0  # B is gone
        done = store.find_erasure(ALICE, gone.id)
        assert done is not None and done.done and done.texts == ()
        # B comes back: it still has the erasure to apply, by its ids (the texts are gone)
        store.enrol_site("site_B", "b")
        (missed,) = store.erasures_for_site("site_B")
        assert missed.done and missed.texts == () and missed.episode_ids == (gone.id,)
        assert store.finish_erasure(record.id, "site_B") == 0
        assert store.erasures_for_site("site_B") == []

    def test_a_complete_sweep_bounds_what_a_data_directory_looks_at_again(
        self, store: RecordStore, clock: FixedClock
    ) -> None:
        store.enrol_site("site_A", "a")
        store.enrol_site("site_B", "b")
        early, late = episode(ALICE, "early"), episode(ALICE, "late")
        store.add_episodes(ALICE, [early, late])
        clock.advance(minutes=5)
        first = store.erase(ALICE, Erasure(early.id, "user-request", episode_ids=(early.id,)))
        assert store.finish_erasure(first.id, wait=timedelta(0)) == 0  # no one waited for
        clock.advance(hours=1)
        store.enrol_site("site_A", "a", swept=clock.now())  # A says it applied all before now
        clock.advance(minutes=5)
        second = store.erase(ALICE, Erasure(late.id, "user-request", episode_ids=(late.id,)))
        assert [r.id for r in store.erasures_for_site("site_A")] == [second.id]
        assert [r.id for r in store.erasures_for_site("site_B")] == [first.id, second.id]
        store.enrol_site("site_A", "a", swept=clock.now() - timedelta(days=1))  # never back
        assert [r.id for r in store.erasures_for_site("site_A")] == [second.id]

    def test_a_data_directory_retired_while_in_use_applies_what_it_missed_on_its_return(
        self, store: RecordStore, clock: FixedClock
    ) -> None:
        assert store.enrol_site("site_A", "a") is True and store.enrol_site("site_B", "b") is True
        assert store.enrol_site("site_B", "b") is False  # known now
        gone, kept = episode(ALICE, "secret"), episode(ALICE, "kept")
        store.add_episodes(ALICE, [gone, kept])
        assert store.retire_site("site_B")  # by mistake: B still holds copies
        clock.advance(hours=1)
        record = store.erase(ALICE, Erasure(gone.id, "user-request", episode_ids=(gone.id,)))
        assert store.finish_erasure(record.id, "site_A") == 0  # B not waited for: done
        clock.advance(hours=1)
        assert store.enrol_site("site_B", "b", returning=True) is True
        (missed,) = store.erasures_for_site("site_B")  # made an hour before it came back
        assert missed.id == record.id and missed.done and missed.episode_ids == (gone.id,)
        assert store.finish_erasure(record.id, "site_B") == 0
        assert store.erasures_for_site("site_B") == []
        store.enrol_site("site_C", "c")  # new: holds no copy of anything before it
        assert store.erasures_for_site("site_C") == []

    def test_an_erasure_waiting_for_a_data_directory_reaches_it_whatever_its_clock_said(
        self, store: RecordStore, clock: FixedClock
    ) -> None:
        store.enrol_site("site_A", "a")
        store.enrol_site("site_B", "b")
        store.enrol_site("site_B", "b", swept=clock.now() + timedelta(hours=2))  # B's clock ahead
        gone = episode(ALICE, "secret")
        store.add_episodes(ALICE, [gone])
        clock.advance(minutes=5)
        record = store.erase(ALICE, Erasure(gone.id, "user-request", episode_ids=(gone.id,)))
        assert store.finish_erasure(record.id, "site_A") == 1  # it waits for B
        (missed,) = store.erasures_for_site("site_B")
        assert missed.id == record.id and "secret" in missed.texts
        assert store.finish_erasure(record.id, "site_B") == 0
        assert store.erasures_for_site("site_B") == []

    def test_without_data_directories_finishing_marks_an_erasure_done(
        self, store: RecordStore
    ) -> None:
        gone = episode(ALICE, "secret")
        store.add_episodes(ALICE, [gone])
        record = store.erase(ALICE, Erasure(gone.id, "user-request", episode_ids=(gone.id,)))
        assert store.finish_erasure(record.id) == 0
        with pytest.raises(InvalidInputError):
            store.enrol_site("", "nowhere")

    def test_a_failed_erasure_changes_nothing(self, store: RecordStore) -> None:
        ep = episode(ALICE)
        store.add_episodes(ALICE, [ep])
        doc = store.put_document(ALICE, DocumentKind.TOPIC, "t", {}, expected_version=0)
        stale = Erasure(
            target=ep.id,
            reason="user-request",
            episode_ids=(ep.id,),
            documents=(DocumentWrite(doc.id, {}, 7),),
        )
        with pytest.raises(ConflictError):
            store.erase(ALICE, stale)
        with pytest.raises(NotFoundError):  # another user's episode is a missing one
            store.erase(BOB, Erasure(target=ep.id, reason="user-request", episode_ids=(ep.id,)))
        assert store.get_episodes(ALICE, [ep.id]) == [ep]
        assert store.pending_erasures() == []

    def test_derived_facts_go_with_their_episode(self, store: RecordStore) -> None:
        gone, kept = episode(ALICE, "secret"), episode(ALICE, "kept")
        store.add_episodes(ALICE, [gone, kept])
        both = store.add_fact(ALICE, fact(ALICE, (gone.id, kept.id), "secret and kept"))
        other = store.add_fact(ALICE, fact(ALICE, (kept.id,), "kept only"))
        record = store.erase(
            ALICE,
            Erasure(target=gone.id, reason="user-request", episode_ids=(gone.id,), derived=True),
        )
        assert record.cascaded == (both.id,) and "secret and kept" in record.texts
        assert [f.id for f in store.list_facts(ALICE)] == [other.id]
        assert store.history(ALICE, both.id)[-1].reason == "user-request"

    def test_settled_episodes_are_kept_per_user(self, store: RecordStore) -> None:
        ep = episode(ALICE)
        store.add_episodes(ALICE, [ep])
        f = store.add_fact(ALICE, fact(ALICE, (ep.id,)))
        assert store.settled_episodes(ALICE, [ep.id]) == set()
        store.erase(
            ALICE,
            Erasure(target=f.id, reason="stale", fact_ids=(f.id,), settled=(ep.id,)),
        )
        assert store.settled_episodes(ALICE, [ep.id, "ep_other"]) == {ep.id}
        assert store.settled_episodes(BOB, [ep.id]) == set()
        store.erase(ALICE, Erasure(target=ep.id, reason="stale", episode_ids=(ep.id,)))
        assert store.settled_episodes(ALICE, [ep.id]) == set()  # it went with its episode

    def test_erased_ids_are_known_per_user_and_a_dry_run_adds_none(
        self, store: RecordStore
    ) -> None:
        gone, kept = episode(ALICE_T1, "secret"), episode(ALICE, "kept")
        store.add_episodes(ALICE, [gone, kept])
        cited = store.add_fact(ALICE, fact(ALICE, (gone.id,), "only the secret"))
        plain = store.add_fact(ALICE, fact(ALICE, (kept.id,), "plain"))
        probe = [gone.id, kept.id, cited.id, plain.id, "ep_never_stored"]
        erasure = Erasure(target=gone.id, reason="user-request", episode_ids=(gone.id,))
        store.erase(ALICE_T1, erasure, dry_run=True)
        assert store.erased(ALICE, probe) == set()
        store.erase(ALICE_T1, erasure)
        store.erase(ALICE, Erasure(target=plain.id, reason="stale", fact_ids=(plain.id,)))
        assert store.erased(ALICE, probe) == {gone.id, cited.id, plain.id}
        assert store.erased(ALICE_T2, [gone.id]) == {gone.id}  # any thread of the user
        assert store.erased(BOB, probe) == set()
        assert store.erased(ALICE, []) == set()

    def test_a_whole_scope_goes_and_nothing_else(self, store: RecordStore) -> None:
        t1, t2 = episode(ALICE_T1, "thread one"), episode(ALICE_T2, "thread two")
        store.add_episodes(ALICE, [t1, t2])
        f1 = store.add_fact(ALICE_T1, fact(ALICE_T1, (t1.id,), "from t1"))
        user_fact = store.add_fact(ALICE, fact(ALICE, (t1.id, t2.id), "from both"))
        d1 = store.put_document(ALICE_T1, DocumentKind.TOPIC, "t", {}, expected_version=0)
        d2 = store.put_document(ALICE_T2, DocumentKind.TOPIC, "t", {}, expected_version=0)
        record = store.erase(
            ALICE_T1, Erasure(target="scope", reason="user-request", whole_scope=True)
        )
        assert set(record.deleted) == {t1.id, f1.id, d1.id}
        assert store.list_episodes(ALICE) == [t2]
        assert store.get_fact(ALICE, user_fact.id).sources == (t2.id,)
        assert [d.id for d in store.list_documents(ALICE)] == [d2.id]
        with pytest.raises(NotFoundError):
            store.history(ALICE, d1.id)
        assert store.history(ALICE, d2.id)


def test_history_is_kept_per_scope(store: RecordStore) -> None:
    """A bullet id chosen by a client may be used by two users: two histories."""
    for scope in (ALICE, BOB):
        store.put_document(
            scope,
            DocumentKind.TOPIC,
            "t",
            {},
            expected_version=0,
            item_events=(ItemEvent("m_same", HistoryOp.CREATE, None, {"text": scope.user}),),
        )
    store.put_document(
        ALICE,
        DocumentKind.TOPIC,
        "t",
        {},
        expected_version=1,
        item_events=(ItemEvent("m_same", HistoryOp.DELETE, "user-request", {}),),
    )
    bob = store.history(BOB, "m_same")
    assert [(h.version, h.data["text"]) for h in bob] == [(1, "bob")]
    assert [(h.version, dict(h.data)) for h in store.history(ALICE, "m_same")] == [
        (1, {}),
        (2, {"document": store.list_documents(ALICE)[0].id}),
    ]


def test_stats(store: RecordStore) -> None:
    eps = [
        episode(ALICE_T1, session="s1", speaker="alice", minutes=1),
        episode(ALICE_T1, session="s1", speaker="bot", minutes=2),
        episode(ALICE_T2, session="s1", speaker="alice", minutes=3),
    ]
    store.add_episodes(ALICE, eps)
    f = store.add_fact(ALICE, fact(ALICE, (eps[0].id,)))
    store.update_fact(ALICE, f.evolve(valid_to=T0), expected_version=1)
    store.add_fact(ALICE, fact(ALICE, (eps[1].id,)))
    store.put_document(ALICE, DocumentKind.TOPIC, "x", {}, expected_version=0)
    s = store.stats(ALICE)
    assert (s.episodes, s.sessions, s.speakers) == (3, 2, 2)
    assert (s.facts_current, s.facts_superseded) == (1, 1)
    assert s.documents == {"topic": 1}
    assert s.first_time == T0 + timedelta(minutes=1) and s.last_time == T0 + timedelta(minutes=3)
    assert store.stats(BOB).episodes == 0
    assert store.users() == ["alice"]


def test_record_counts_cover_every_user(store: RecordStore) -> None:
    assert store.record_counts() == {
        "episode": 0,
        "archived_episode": 0,
        "fact": 0,
        "superseded_fact": 0,
    }
    eps = [episode(ALICE_T1), episode(ALICE_T2), episode(BOB)]
    store.add_episodes(ALICE, eps[:2])
    store.add_episodes(BOB, eps[2:])
    store.archive_episodes(ALICE, [eps[1].id])
    f = store.add_fact(ALICE, fact(ALICE, (eps[0].id,)))
    store.update_fact(ALICE, f.evolve(valid_to=T0), expected_version=1)
    store.add_fact(BOB, fact(BOB, (eps[2].id,)))
    store.put_document(ALICE, DocumentKind.TOPIC, "x", {}, expected_version=0)
    store.put_document(BOB, DocumentKind.TOPIC, "y", {}, expected_version=0)
    assert store.record_counts() == {
        "episode": 2,
        "archived_episode": 1,
        "fact": 1,
        "superseded_fact": 1,
        "topic": 2,
    }


def test_generation_counts_writes_not_reads(store: RecordStore) -> None:
    assert store.generation("alice") == 0
    ep = episode(ALICE)
    store.add_episodes(ALICE, [ep])
    g1 = store.generation("alice")
    assert g1 > 0
    store.list_episodes(ALICE)
    store.get_episode(ALICE, ep.id)
    store.stats(ALICE)
    assert store.generation("alice") == g1
    f = store.add_fact(ALICE, fact(ALICE, (ep.id,)))
    g2 = store.generation("alice")
    store.update_fact(ALICE, f.evolve(text="x"), expected_version=1)
    g3 = store.generation("alice")
    store.delete_fact(ALICE, f.id, reason="stale")
    g4 = store.generation("alice")
    d = store.put_document(ALICE, DocumentKind.TOPIC, "t", {}, expected_version=0)
    g5 = store.generation("alice")
    store.delete_document(ALICE, d.id, reason="stale")
    g6 = store.generation("alice")
    store.archive_episodes(ALICE, [ep.id])
    g7 = store.generation("alice")
    store.delete_episodes(ALICE, [ep.id])
    g8 = store.generation("alice")
    assert g1 < g2 < g3 < g4 < g5 < g6 < g7 < g8
    assert store.generation("bob") == 0  # another user's feed is untouched
    feed = store.changes_since("alice", 0)
    assert [(c.item_id, c.op.value) for c in feed] == [
        (ep.id, "upsert"),
        (f.id, "upsert"),
        (f.id, "upsert"),
        (f.id, "delete"),
        (d.id, "upsert"),
        (d.id, "delete"),
        (ep.id, "upsert"),
        (ep.id, "delete"),
    ]
    assert feed[-1].seq == g8
    assert [c.item_id for c in store.changes_since("alice", g6)] == [ep.id, ep.id]
    with pytest.raises(ConflictError):  # a failed write counts nothing
        store.put_document(ALICE, DocumentKind.TOPIC, "t2", {}, expected_version=3)
    assert store.generation("alice") == g8


def test_get_facts_returns_only_those_in_scope(store: RecordStore) -> None:
    mine, theirs = episode(ALICE), episode(BOB)
    store.add_episodes(ALICE, [mine])
    store.add_episodes(BOB, [theirs])
    a = store.add_fact(ALICE, fact(ALICE, (mine.id,)))
    b = store.add_fact(BOB, fact(BOB, (theirs.id,)))
    assert [f.id for f in store.get_facts(ALICE, [b.id, a.id, new_id("fa")])] == [a.id]


def test_item_events_join_the_document_write(store: RecordStore) -> None:
    from memstrata.model import ItemEvent

    add = ItemEvent("m_01AAAAAAAAAAAAAAAAAAAAAAAA", HistoryOp.CREATE, None, {"text": "likes tea"})
    doc = store.put_document(
        ALICE, DocumentKind.TOPIC, "drinks", {"v": 1}, expected_version=0, item_events=[add]
    )
    [entry] = store.history(ALICE, add.item_id)
    assert entry.data == {"document": doc.id, "text": "likes tea"} and entry.version == 1
    stale = ItemEvent(add.item_id, HistoryOp.UPDATE, None, {"text": "never stored"})
    with pytest.raises(ConflictError):
        store.put_document(
            ALICE, DocumentKind.TOPIC, "drinks", {"v": 2}, expected_version=0, item_events=[stale]
        )
    assert len(store.history(ALICE, add.item_id)) == 1
    gone = ItemEvent(add.item_id, HistoryOp.DELETE, "user-request", {})
    store.put_document(
        ALICE, DocumentKind.TOPIC, "drinks", {"v": 2}, expected_version=1, item_events=[gone]
    )
    hist = store.history(ALICE, add.item_id)
    assert [(h.version, h.op) for h in hist] == [(1, HistoryOp.CREATE), (2, HistoryOp.DELETE)]
    assert hist[0].data == {}  # the text deleted on request is gone from history too
    with pytest.raises(NotFoundError):
        store.history(BOB, add.item_id)


def test_restore_inserts_records_exactly_into_an_empty_scope(
    store: RecordStore, tmp_path: Path, clock: FixedClock, request: pytest.FixtureRequest
) -> None:
    ep = episode(ALICE_T1)
    store.add_episodes(ALICE_T1, [ep])
    f = store.add_fact(ALICE_T1, fact(ALICE_T1, (ep.id,)))
    f = store.update_fact(ALICE_T1, f.evolve(importance=0.9), expected_version=1)
    d = store.put_document(ALICE_T1, DocumentKind.TOPIC, "t", {"a": 1}, expected_version=0)
    d = store.put_document(ALICE_T1, DocumentKind.TOPIC, "t", {"a": 2}, expected_version=1)
    (tmp_path / "other").mkdir()
    backend = request.node.callspec.params["store"]
    with open_fresh(backend, tmp_path / "other", clock) as other:
        other.restore(ALICE, [ep], [f], [d])
        assert other.get_episode(ALICE, ep.id) == ep
        assert other.get_fact(ALICE, f.id) == f and f.version == 2
        assert other.get_document_by_id(ALICE, d.id) == d and d.version == 2
        assert other.history(ALICE, f.id)[-1].reason == "restored"
        assert {c.item_id for c in other.changes_since("alice", 0)} == {ep.id, f.id, d.id}
        with pytest.raises(InvalidInputError, match="empty scope"):
            other.restore(ALICE, [], [], [d])
        with pytest.raises(InvalidInputError):  # a fact citing nothing restored is refused whole
            other.restore(BOB, [], [fact(BOB, (new_id("ep"),))], [])
        assert other.stats(BOB).facts_current == 0


def test_iter_facts_pages_in_id_order(store: RecordStore) -> None:
    ep = episode(ALICE)
    store.add_episodes(ALICE, [ep])
    facts = [store.add_fact(ALICE, fact(ALICE, (ep.id,), f"fact {i}")) for i in range(1203)]
    store.update_fact(ALICE, facts[5].evolve(valid_to=T0), expected_version=1)
    assert [f.id for f in store.iter_facts(ALICE)] == [f.id for f in facts]
    current = list(store.iter_facts(ALICE, FactFilter(current_only=True)))
    assert len(current) == 1202 and facts[5].id not in {f.id for f in current}
    assert [f.id for f in store.iter_facts(ALICE, after=facts[1200].id)] == [
        facts[1201].id,
        facts[1202].id,
    ]
    assert list(store.iter_facts(BOB)) == []


def api_key(prefix: str = "ms_abcdefgh", users: tuple[str, ...] | None = ("alice",)) -> ApiKey:
    return ApiKey(
        id=new_id("key"),
        prefix=prefix,
        name="ci 测试",
        role=KeyRole.WRITER,
        users=users,
        created_at=T0,
    )


def test_keys_are_stored_listed_and_found_by_prefix_with_their_digest(
    store: RecordStore,
) -> None:
    first, second = api_key(), api_key(users=None)
    third = api_key("ms_zzzzzzzz", ("alice", "bob"))
    assert store.add_key(first, "d1") and store.add_key(second, "d2")
    assert store.add_key(third, "d3")
    assert store.list_keys() == [first, second, third]  # creation order, every field kept
    assert store.find_keys("ms_abcdefgh") == [(first, "d1"), (second, "d2")]
    assert store.find_keys("ms_zzzzzzzz") == [(third, "d3")]
    assert store.find_keys("ms_nothing") == []
    with pytest.raises(InvalidInputError):  # a digest is one key's
        store.add_key(api_key(), "d1")
    with pytest.raises(InvalidInputError):  # a new key cannot start revoked
        store.add_key(replace(api_key(), revoked_at=T0), "d4")
    assert len(store.list_keys()) == 3
    assert store.generation("alice") == 0  # keys are not records of a user


def test_a_revoked_key_stays_listed_and_found_with_its_time(store: RecordStore) -> None:
    key = api_key()
    store.add_key(key, "d1")
    revoked = store.revoke_key(key.id, T0 + timedelta(hours=1))
    assert revoked == replace(key, revoked_at=T0 + timedelta(hours=1)) and not revoked.active
    assert store.revoke_key(key.id, T0 + timedelta(hours=2)) == revoked  # the first time stays
    assert store.find_keys(key.prefix) == [(revoked, "d1")]
    assert store.list_keys() == [revoked]
    with pytest.raises(NotFoundError):
        store.revoke_key(new_id("key"), T0)


def test_only_if_none_stores_a_key_only_while_no_active_key_exists(store: RecordStore) -> None:
    first = api_key()
    assert store.add_key(first, "d1", only_if_none=True)
    assert not store.add_key(api_key(), "d2", only_if_none=True)
    assert store.list_keys() == [first]
    store.revoke_key(first.id, T0)
    again = api_key()
    assert store.add_key(again, "d3", only_if_none=True)
    assert [k.id for k in store.list_keys()] == [first.id, again.id]


def test_text_round_trips_chinese_emoji_and_case(store: RecordStore) -> None:
    text = "我喜欢喝茶 🍵🎉 naïve 𝒳"
    ep = episode(ALICE, text)
    store.add_episodes(ALICE, [ep])
    upper = Scope("Alice")  # another user: ids, users and keys compare byte by byte
    store.add_episodes(upper, [episode(upper, "other")])
    assert store.get_episode(ALICE, ep.id).text == text
    assert [e.id for e in store.list_episodes(ALICE)] == [ep.id]
    doc = store.put_document(ALICE, DocumentKind.TOPIC, "茶 🍵", {"t": text}, expected_version=0)
    assert store.get_document(ALICE, DocumentKind.TOPIC, "茶 🍵") == doc
    assert store.get_document(ALICE, DocumentKind.TOPIC, "茶 🍵 ") is None
    assert store.users() == ["Alice", "alice"]


def test_compare_and_swap_holds_between_concurrent_writers(store: RecordStore) -> None:
    """Four threads (each on its own connection, for a server store) write at version 1:
    exactly one wins, for a fact and for a document alike."""
    ep = episode(ALICE)
    store.add_episodes(ALICE, [ep])
    f = store.add_fact(ALICE, fact(ALICE, (ep.id,)))
    store.put_document(ALICE, DocumentKind.TOPIC, "t", {"a": 0}, expected_version=0)
    results: list[str] = []

    def write(i: int) -> None:
        try:
            store.update_fact(ALICE, f.evolve(text=f"v{i}"), expected_version=1)
            results.append("fact")
        except ConflictError:
            results.append("fact-conflict")
        try:
            store.put_document(ALICE, DocumentKind.TOPIC, "t", {"a": i}, expected_version=1)
            results.append("doc")
        except ConflictError:
            results.append("doc-conflict")

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("fact") == 1 and results.count("fact-conflict") == 3
    assert results.count("doc") == 1 and results.count("doc-conflict") == 3
    assert store.get_fact(ALICE, f.id).version == 2
    assert [v.version for v in store.history(ALICE, f.id)] == [1, 2]


def test_summaries_and_sizes_counted_in_place_equal_the_records_read(
    store: RecordStore,
) -> None:
    from memstrata.api.browse import _read_scope_summaries, _read_session_summaries
    from memstrata.ports import SizingStore, SummarizingStore

    assert isinstance(store, SummarizingStore) and isinstance(store, SizingStore)
    t1, helper = ALICE_T1, Scope("alice", "t1", "helper")
    said = [
        episode(t1, "hello", minutes=1),
        replace(episode(t1, "我住在杭州", speaker="", minutes=2), surface="notebook"),
        episode(t1, "later", session="s2", speaker="bob", minutes=3),
        episode(ALICE_T2, "tea, not coffee", minutes=4),
        episode(helper, "an agent's turn", session="a1", minutes=5),
        episode(BOB, "bob's own", minutes=6),
    ]
    for e in said:
        store.add_episodes(e.scope, [e])
    store.archive_episodes(t1, [said[0].id])
    store.add_fact(ALICE_T2, fact(ALICE_T2, (said[3].id,), "Alice drinks tea 茶"))
    store.put_document(t1, DocumentKind.TOPIC, "t", {"v": "话题"}, expected_version=0)

    def key(s: object) -> str:
        return repr(s)

    for scope in (ALICE, t1, ALICE_T2):
        assert sorted(store.session_summaries(scope), key=key) == sorted(
            _read_session_summaries(store, scope), key=key
        )
    assert sorted(store.scope_summaries("alice"), key=key) == sorted(
        _read_scope_summaries(store, ALICE), key=key
    )
    sizes = store.text_bytes(ALICE)
    assert sizes["episode"] == sum(len(e.text.encode()) for e in said[:5])
    assert sizes["fact"] == len("Alice drinks tea 茶".encode())
    assert sizes["topic"] > len("话题".encode())
    assert store.text_bytes(Scope("nobody")) == {"episode": 0, "fact": 0}


def test_data_directories_finishing_an_erasure_at_once_leave_it_done(
    store: RecordStore,
) -> None:
    store.enrol_site("site_A", "a")
    store.enrol_site("site_B", "b")
    for round_ in range(12):
        gone = episode(ALICE, f"secret {round_}")
        store.add_episodes(ALICE, [gone])
        record = store.erase(ALICE, Erasure(gone.id, "user-request", episode_ids=(gone.id,)))
        start = threading.Barrier(2)
        waiting: dict[str, int] = {}

        def finish(
            site: str,
            record_id: str = record.id,
            start: threading.Barrier = start,
            waiting: dict[str, int] = waiting,
        ) -> None:
            start.wait()
            waiting[site] = store.finish_erasure(record_id, site)

        threads = [threading.Thread(target=finish, args=(s,)) for s in ("site_A", "site_B")]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(waiting.values()) == [0, 1]  # one finished first, the other last
        done = store.find_erasure(ALICE, gone.id)
        assert done is not None and done.done and done.texts == ()


def _try_hold(store: RecordStore, name: str, wait_s: float) -> str:
    """Whether another thread (another session of a server) gets the lock ``name``."""
    from memstrata.errors import BusyError
    from memstrata.ports import LockingStore

    assert isinstance(store, LockingStore)
    out: list[str] = []

    def run() -> None:
        try:
            with store.hold(name, wait_s=wait_s):
                out.append("held")
        except BusyError as exc:
            out.append(f"busy: {exc}")

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(timeout=30)
    return out[0] if out else "hung"


def test_a_named_lock_has_one_holder_at_a_time_across_sessions(store: RecordStore) -> None:
    from memstrata.errors import InvalidInputError
    from memstrata.ports import LockingStore

    assert isinstance(store, LockingStore)
    with store.hold("curate:alice", wait_s=1):
        refused = _try_hold(store, "curate:alice", 0.2)
        assert refused.startswith("busy:") and "curate:alice" in refused
        assert _try_hold(store, "curate:bob", 0.2) == "held"  # another name is its own lock
    assert _try_hold(store, "curate:alice", 0.2) == "held"  # released with the block
    for bad in ("", "x" * 201, "a\x00b"):
        with pytest.raises(InvalidInputError), store.hold(bad, wait_s=0):
            pass


def test_a_named_lock_is_released_when_its_block_raises(store: RecordStore) -> None:
    from memstrata.ports import LockingStore

    assert isinstance(store, LockingStore)
    with pytest.raises(RuntimeError), store.hold("curate:alice", wait_s=1):
        raise RuntimeError("the curation failed")
    assert _try_hold(store, "curate:alice", 0.2) == "held"
