"""The facade: remember, facts, get/update/delete/history/list/stats/export, L0/L1 documents."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memstrata import importers
from memstrata.api import Memory
from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.ids import new_id
from memstrata.model import (
    Category,
    Document,
    DocumentKind,
    Episode,
    Fact,
    FactFilter,
    HistoryOp,
    Profile,
    Role,
    Scope,
    Slot,
    Turn,
)
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice", "t1")


def test_remember_accepts_text_turns_and_mappings(memory: Memory) -> None:
    eps = memory.remember(
        [
            "plain text",
            Turn("a turn", speaker="alice", role=Role.USER),
            {
                "text": "一个映射",
                "speaker": "bot",
                "role": "assistant",
                "time": "2024-03-01T10:00:00Z",
                "session_id": "s7",
                "metadata": {"lang": "zh"},
            },
        ],
        ALICE,
    )
    assert [e.text for e in eps] == ["plain text", "a turn", "一个映射"]
    assert eps[0].speaker == "user" and eps[1].speaker == "alice"
    assert eps[2].session_id == "s7" and eps[2].time == datetime(2024, 3, 1, 10, tzinfo=UTC)
    assert eps[0].session_id == eps[1].session_id  # one call without a session: one session
    assert [e.id for e in memory.list(ALICE)] == [e.id for e in eps]
    assert memory.remember("只有一句", "bob")[0].scope == Scope("bob")


@pytest.mark.parametrize(
    "bad",
    [
        [],
        [""],
        ["ok", "   "],
        [{"speaker": "x"}],
        [{"text": "x", "role": "robot"}],
        [{"text": "x", "colour": "red"}],
        [42],
    ],
)
def test_remember_checks_everything_before_storing(memory: Memory, bad: list[object]) -> None:
    with pytest.raises(InvalidInputError):
        memory.remember(bad, ALICE)  # type: ignore[arg-type]
    assert memory.list(ALICE) == []


def test_remember_writes_the_trace(memory: Memory) -> None:
    eps = memory.remember(["第一句", "second"], ALICE, surface="notebook")
    assert memory.trace is not None
    events = list(memory.trace.read("notebook"))  # type: ignore[attr-defined]
    assert [e["id"] for e in events] == [e.id for e in eps]
    assert events[0]["text"] == "第一句" and events[0]["scope"] == {"user": "alice", "thread": "t1"}


def test_invalid_scopes_are_refused() -> None:
    for bad in ["", " alice", "a/b", "x\x00"]:
        with pytest.raises(InvalidInputError):
            Scope(bad)
    with pytest.raises(InvalidInputError):
        Scope("alice", thread="")


class TestFacts:
    def test_a_fact_without_sources_cites_its_own_statement(self, memory: Memory) -> None:
        fact = memory.add_fact("Alice is allergic to peanuts", ALICE, category="personal")
        [source] = fact.sources
        ep = memory.get(source, ALICE)
        assert isinstance(ep, Episode) and ep.surface == "manual" and ep.text == fact.text

    def test_sources_must_exist_in_scope(self, memory: Memory) -> None:
        other = memory.remember("bob's turn", "bob")[0]
        with pytest.raises(InvalidInputError, match="do not exist"):
            memory.add_fact("x", ALICE, sources=[other.id])
        with pytest.raises(InvalidInputError, match="unknown category"):
            memory.add_fact("x", ALICE, category="gossip")
        with pytest.raises(InvalidInputError, match="between 0 and 1"):
            memory.add_fact("x", ALICE, confidence=1.5)

    def test_update_history_and_cas(self, memory: Memory, clock: FixedClock) -> None:
        ep = memory.remember("I like tea", ALICE)[0]
        fact = memory.add_fact(
            "Alice likes tea", ALICE, category=Category.PREFERENCE, sources=[ep.id]
        )
        v2 = memory.update(fact.id, ALICE, text="Alice likes green tea")
        assert isinstance(v2, Fact) and v2.version == 2
        with pytest.raises(ConflictError):
            memory.update(fact.id, ALICE, expected_version=1, importance=0.9)
        v3 = memory.update(fact.id, ALICE, expected_version=2, importance=0.9)
        assert v3.version == 3
        hist = memory.history(fact.id, ALICE)
        assert [h.data["text"] for h in hist] == ["Alice likes tea"] + ["Alice likes green tea"] * 2
        with pytest.raises(InvalidInputError, match="cannot update"):
            memory.update(fact.id, ALICE, colour="red")
        with pytest.raises(InvalidInputError, match="verbatim"):
            memory.update(ep.id, ALICE, text="rewritten")

    def test_an_update_that_changes_nothing_writes_no_version(self, memory: Memory) -> None:
        fact = memory.add_fact("Alice likes tea", ALICE, importance=0.4)
        same = memory.update(fact.id, ALICE, text="  Alice likes tea ", importance=0.4)
        assert same == fact and same.version == 1
        assert len(memory.history(fact.id, ALICE)) == 1
        with pytest.raises(ConflictError):  # a stale version is a conflict all the same
            memory.update(fact.id, ALICE, expected_version=0, text="Alice likes tea")
        doc = memory.store.put_document(
            ALICE,
            DocumentKind.TOPIC,
            "tea",
            {"title": "Tea", "sections": []},
            expected_version=0,
        )
        kept = memory.update(doc.id, ALICE, expected_version=1, content=doc.content)
        assert kept.version == 1 and len(memory.history(doc.id, ALICE)) == 1

    def test_update_without_version_retries_once_on_a_race(self, memory: Memory) -> None:
        fact = memory.add_fact("Alice likes tea", ALICE)
        real_update = memory.store.update_fact
        raced = threading.Event()

        def racing_update(
            scope: Scope, f: Fact, *, expected_version: int, op: str = "update"
        ) -> Fact:
            if not raced.is_set():  # another writer gets in between read and write, once
                raced.set()
                stored = memory.store.get_fact(scope, f.id)
                real_update(scope, stored.evolve(importance=0.1), expected_version=expected_version)
            return real_update(scope, f, expected_version=expected_version, op=op)

        memory.store.update_fact = racing_update  # type: ignore[method-assign]
        updated = memory.update(fact.id, ALICE, text="Alice likes oolong")
        assert isinstance(updated, Fact)
        assert updated.version == 3 and updated.text == "Alice likes oolong"

    def test_supersession_stays_queryable(self, memory: Memory, clock: FixedClock) -> None:
        old = memory.add_fact("Alice lives in Beijing", ALICE, category="personal")
        clock.advance(days=30)
        new = memory.add_fact("Alice lives in Hangzhou", ALICE, category="personal")
        memory.update(old.id, ALICE, valid_to=clock.now(), superseded_by=new.id)
        current = memory.list(ALICE, "fact", fact_filter=FactFilter(current_only=True))
        assert [f.id for f in current] == [new.id]
        then = memory.list(
            ALICE, "fact", fact_filter=FactFilter(valid_at=datetime(2026, 1, 2, tzinfo=UTC))
        )
        assert [f.id for f in then] == [old.id]
        assert memory.history(old.id, ALICE)[-1].op == HistoryOp.SUPERSEDE


class TestDelete:
    def test_deleting_an_episode_cascades_to_facts_citing_only_it(self, memory: Memory) -> None:
        a, b = memory.remember(["I like tea", "I like green tea"], ALICE)
        only_a = memory.add_fact("likes tea", ALICE, sources=[a.id])
        both = memory.add_fact("likes green tea", ALICE, sources=[a.id, b.id])
        report = memory.delete(a.id, ALICE)
        assert report.deleted == (a.id,) and report.cascaded == (only_a.id,)
        with pytest.raises(NotFoundError):
            memory.get(only_a.id, ALICE)
        kept = memory.get(both.id, ALICE)
        assert isinstance(kept, Fact) and kept.sources == (b.id,)
        assert memory.history(only_a.id, ALICE)[-1].reason == "source-deleted"

    def test_delete_reasons_and_missing_items(self, memory: Memory) -> None:
        fact = memory.add_fact("x", ALICE)
        with pytest.raises(InvalidInputError, match="unknown delete reason"):
            memory.delete(fact.id, ALICE, reason="because")
        memory.delete(fact.id, ALICE, reason="stale")
        with pytest.raises(NotFoundError):
            memory.delete(fact.id, ALICE)
        with pytest.raises(NotFoundError):
            memory.delete(new_id("ep"), ALICE)
        with pytest.raises(InvalidInputError, match="not a memstrata id"):
            memory.get("fa_nope", ALICE)


def test_episode_history_is_its_one_version(memory: Memory) -> None:
    ep = memory.remember("hi", ALICE)[0]
    [entry] = memory.history(ep.id, ALICE)
    assert entry.op == HistoryOp.CREATE and entry.data["text"] == "hi"


def test_identity_and_profile(memory: Memory) -> None:
    assert memory.identity(ALICE).text == ""
    ident = memory.set_identity("I serve Alice. 我为 Alice 服务。", ALICE)
    assert ident.version == 1 and memory.identity(ALICE).text.startswith("I serve")
    with pytest.raises(ConflictError):
        memory.set_identity("stale", ALICE, expected_version=0)
    ep = memory.remember("My name is Alice", ALICE)[0]
    profile = memory.put_profile(Profile(fields={"name": Slot("Alice", (ep.id,))}), ALICE)
    assert profile.version == 1 and memory.profile(ALICE).fields["name"].value == "Alice"
    with pytest.raises(InvalidInputError, match="cites no episode"):
        memory.put_profile(Profile(fields={"name": Slot("Al")}, version=1), ALICE)
    with pytest.raises(InvalidInputError, match="not in scope"):
        memory.put_profile(Profile(fields={"name": Slot("Al", (new_id("ep"),))}, version=1), ALICE)
    doc = memory.list(ALICE, "document")[0]
    assert isinstance(doc, Document)
    updated = memory.update(doc.id, ALICE, content={"text": "edited"})
    assert isinstance(updated, Document) and updated.version == 2


def test_stats_and_export(memory: Memory) -> None:
    eps = memory.remember(["one", "two"], ALICE, session_id="s1")
    memory.add_fact("a fact", ALICE, sources=[eps[0].id])
    memory.set_identity("me", ALICE)
    stats = memory.stats(ALICE)
    assert (stats.episodes, stats.sessions, stats.facts_current) == (2, 1, 1)
    kinds = [r["kind"] for r in memory.export(ALICE)]
    assert kinds == ["episode", "episode", "fact", "document"]
    assert list(memory.export("nobody")) == []


def test_ingest_is_all_or_nothing(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "turns.jsonl"
    path.write_text('{"text": "a", "thread": "x"}\n{"text": "b", "thread": "y"}\n')
    report = memory.ingest(path, "alice", fmt="jsonl")
    assert report.turns == 2 and [s.thread for s in report.scopes] == ["x", "y"]
    assert memory.stats("alice").episodes == 2
    path.write_text('{"text": "c"}\n{"text": ""}\n')
    with pytest.raises(InvalidInputError):
        memory.ingest(path, "alice", fmt="jsonl")
    assert memory.stats("alice").episodes == 2
    with pytest.raises(InvalidInputError, match="name the import format"):
        memory.ingest(path, "alice")


def test_sample_memory_is_bilingual_and_cited(memory: Memory) -> None:
    assert memory.is_empty()
    report = memory.load_sample("demo")
    assert report.turns >= 10 and not memory.is_empty()
    texts = [e.text for e in memory.list("demo", limit=100) if isinstance(e, Episode)]
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts)
    assert any(t.isascii() for t in texts)
    assert memory.identity("demo").text
    essentials, version = memory.doc("essentials", "demo")
    assert version == 1 and any(s.heading == "Preferences" for s in essentials.sections)
    facts = [f for f in memory.list("demo", "fact", limit=100) if isinstance(f, Fact)]
    assert len(facts) >= 5
    for fact in facts:  # every sample fact cites the turn it rests on, in the same thread
        for source in fact.sources:
            episode = memory.get(source, fact.scope)
            assert isinstance(episode, Episode) and episode.scope == fact.scope


def test_open_uses_settings(tmp_path: Path, clock: FixedClock) -> None:
    settings = load_settings(data_dir=tmp_path / "d", trace=False)
    with Memory.open(settings=settings, clock=clock) as mem:
        mem.remember("x", "alice")
        assert mem.trace is None
    assert (tmp_path / "d" / "memstrata.db").exists()
    assert not (tmp_path / "d" / "trace").exists()


def test_import_batch_can_be_passed_directly(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"text": "hello"}) + "\n")
    report = memory.ingest(importers.load(path, "jsonl"), "carol")
    assert report.format == "jsonl" and memory.stats("carol").episodes == 1


def test_missing_episodes_is_one_scoped_check(memory: Memory) -> None:
    from memstrata.citations import missing_episodes

    mine = memory.remember("mine", ALICE)[0]
    theirs = memory.remember("theirs", "bob")[0]
    ghost = new_id("ep")
    assert missing_episodes(memory.store, ALICE, [mine.id, theirs.id, ghost, mine.id]) == sorted(
        [theirs.id, ghost]
    )
    assert missing_episodes(memory.store, ALICE, []) == []


def test_a_page_is_1_to_10000_records(memory: Memory) -> None:
    memory.remember(["one", "two"], "alice")
    memory.set_identity("I help Alice.", "alice")
    memory.add_fact("Alice likes tea", "alice", category="preference")
    for kind in ("episode", "fact", "document"):
        for limit in (0, -1, 10_001, 2.5, True):
            with pytest.raises(InvalidInputError, match="limit must be between 1 and 10000"):
                memory.list("alice", kind, limit=limit)  # type: ignore[arg-type]
        assert len(memory.list("alice", kind, limit=1)) == 1
