"""Consolidation, mode update: incremental, cited, superseded bullets removed, runs held."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.api import Memory
from memstrata.consolidate import STATE_KEY, topic_key
from memstrata.errors import BusyError
from memstrata.model import Category, DocumentKind, HistoryOp, Scope, Turn

ALICE = Scope("alice")


def test_new_facts_become_cited_bullets_once(memory: Memory) -> None:
    tea, trip = memory.remember(["I love green tea", "We flew to Kyoto in April"], ALICE)
    memory.add_fact(
        "Alice loves green tea",
        ALICE,
        category=Category.PREFERENCE,
        sources=[tea.id],
        topic="drinks",
    )
    memory.add_fact(
        "Alice flew to Kyoto in April",
        ALICE,
        category=Category.EVENT,
        sources=[trip.id],
        topic="Travel Plans",
    )
    report = memory.consolidate(ALICE)
    assert report.facts_read == 2 and set(report.documents) == {
        "drinks",
        "travel-plans",
        "essentials",
    }
    drinks, _ = memory.doc_markdown("drinks", ALICE)
    assert "- Alice loves green tea [^1]" in drinks and f"[^1]: chat:{tea.id}" in drinks
    essentials, _ = memory.doc("essentials", ALICE)
    assert [s.heading for s in essentials.sections] == ["Preferences"]
    again = memory.consolidate(ALICE)
    assert again.facts_read == 0 and again.documents == {}  # incremental by id difference
    state = memory.store.get_document(ALICE, DocumentKind.STATE, STATE_KEY)
    assert state is not None and state.content["last_fact_id"] > tea.id


def test_superseded_facts_leave_the_documents(memory: Memory) -> None:
    old_ep = memory.remember(
        Turn("I live in Beijing", time=datetime(2024, 1, 1, tzinfo=UTC)), ALICE
    )[0]
    memory.add_fact(
        "Alice lives in Beijing",
        ALICE,
        category=Category.PERSONAL,
        sources=[old_ep.id],
        valid_from=old_ep.time,
    )
    memory.consolidate(ALICE)
    [old_bullet] = memory.doc("personal", ALICE)[0].sections[0].bullets
    new_ep = memory.remember(
        Turn("I moved to Hangzhou", time=datetime(2024, 6, 1, tzinfo=UTC)), ALICE
    )[0]
    memory.add_fact(
        "Alice moved to Hangzhou",
        ALICE,
        category=Category.PERSONAL,
        sources=[new_ep.id],
        valid_from=new_ep.time,
    )
    report = memory.consolidate(ALICE)
    assert report.removed == 1
    doc, _ = memory.doc("personal", ALICE)
    assert [b.text for s in doc.sections for b in s.bullets] == ["Alice moved to Hangzhou"]
    last = memory.history(old_bullet.id, ALICE)[-1]
    assert (last.op, last.reason) == (HistoryOp.DELETE, "superseded")


def test_a_busy_document_refuses_a_second_run(memory: Memory) -> None:
    ep = memory.remember("I love tea", ALICE)[0]
    memory.add_fact(
        "Alice loves tea", ALICE, category=Category.PREFERENCE, sources=[ep.id], topic="drinks"
    )
    with memory.runs.start("document", f"{ALICE}/drinks"), pytest.raises(BusyError):
        memory.consolidate(ALICE)


def test_history_of_consolidated_bullets(memory: Memory) -> None:
    ep = memory.remember("I love tea", ALICE)[0]
    memory.add_fact(
        "Alice loves tea", ALICE, category=Category.PREFERENCE, sources=[ep.id], topic="drinks"
    )
    memory.consolidate(ALICE)
    doc, _ = memory.doc("drinks", ALICE)
    bullet = doc.sections[0].bullets[0]
    assert memory.history(bullet.id, ALICE)[0].op == HistoryOp.CREATE


def test_topic_keys() -> None:
    from memstrata.ids import new_id
    from memstrata.model import Fact

    def fact(topic: str | None, category: Category) -> Fact:
        now = datetime(2024, 1, 1, tzinfo=UTC)
        return Fact(
            new_id("fa"),
            ALICE,
            "x",
            category,
            1.0,
            0.5,
            topic,
            ("ep_x",),
            now,
            None,
            None,
            now,
            now,
        )

    assert topic_key(fact("Travel Plans!", Category.EVENT)) == "travel-plans"
    assert topic_key(fact(None, Category.PLAN)) == "plans"
    assert topic_key(fact("essentials", Category.PLAN)) == "plans"  # reserved key
    assert topic_key(fact("旅行", Category.EVENT)) == "旅行"


def _bullets(memory: Memory, key: str, items: list[tuple[str, str]]) -> None:
    """Add bullets ``(text, cited episode id)`` to a new document, section "A"."""
    from memstrata.document.format import Citation
    from memstrata.document.ops import Operation, OpKind

    ops = [
        Operation(OpKind.ADD, section="A", text=text, citations=(Citation("chat", ep),))
        for text, ep in items
    ]
    memory.apply_doc(key, ALICE, ops, expected_version=0)


def test_audit_flags_and_removes_unsupported_bullets(memory: Memory) -> None:
    tea, car = memory.remember(["I love green tea from Hangzhou", "My car needs new tyres"], ALICE)
    _bullets(
        memory,
        "drinks",
        [
            ("Alice loves green tea from Hangzhou", tea.id),
            ("Alice is a marathon champion", car.id),
            ("Alice's car needs tyres", car.id),
        ],
    )
    flagged = memory.consolidate(ALICE, mode="audit")
    assert [f.problem for f in flagged.findings] == ["unsupported"]
    assert memory.doc("drinks", ALICE)[1] == 1  # flagging changes nothing
    memory.store.delete_episodes(ALICE, [car.id])  # evidence gone behind the documents' back
    removed = memory.consolidate(ALICE, mode="audit", remove=True)
    assert sorted(f.problem for f in removed.findings) == ["missing-evidence", "missing-evidence"]
    doc, _ = memory.doc("drinks", ALICE)
    assert [b.text for s in doc.sections for b in s.bullets] == [
        "Alice loves green tea from Hangzhou"
    ]
    gone = flagged.findings[0].bullet_id
    assert memory.history(gone, ALICE)[-1].reason == "stale"


def test_dedup_merges_near_duplicates_and_unites_citations(memory: Memory) -> None:
    a, b = memory.remember(["I love green tea", "Green tea is my favourite"], ALICE)
    _bullets(
        memory,
        "drinks",
        [
            ("Alice loves green tea", a.id),
            ("Alice loves green tea.", b.id),
            ("Alice drinks coffee at work", b.id),
        ],
    )
    report = memory.consolidate(ALICE, mode="dedup")
    assert report.merged == 1
    doc, _ = memory.doc("drinks", ALICE)
    bullets = [b for s in doc.sections for b in s.bullets]
    assert [x.text for x in bullets] == ["Alice loves green tea", "Alice drinks coffee at work"]
    assert [c.episode_id for c in bullets[0].citations] == [a.id, b.id]
    assert memory.consolidate(ALICE, mode="dedup").merged == 0


def test_unknown_mode(memory: Memory) -> None:
    from memstrata.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="unknown mode"):
        memory.consolidate(ALICE, mode="shuffle")


def test_forget_cascades_to_facts_and_bullets(memory: Memory) -> None:
    secret, other = memory.remember(
        ["I was treated for depression last year", "I love green tea"], ALICE
    )
    f1 = memory.add_fact(
        "Alice was treated for depression",
        ALICE,
        category=Category.PERSONAL,
        sources=[secret.id],
        topic="health",
    )
    memory.add_fact(
        "Alice loves green tea",
        ALICE,
        category=Category.PREFERENCE,
        sources=[other.id],
        topic="drinks",
    )
    memory.consolidate(ALICE)
    [bullet] = memory.doc("health", ALICE)[0].sections[0].bullets
    report = memory.forget(secret.id, ALICE)
    assert report.deleted == (secret.id,) and f1.id in report.cascaded
    assert bullet.id in report.cascaded
    assert memory.doc("health", ALICE)[0].sections == ()
    for item in (bullet.id, f1.id):  # the text is gone from history too
        assert all("depression" not in str(h.data) for h in memory.history(item, ALICE))
    assert memory.doc("drinks", ALICE)[0].sections  # the rest stays
