"""recall(topic): the topic's documents with citations and its facts, within a budget; found by
name, else by meaning; escaped."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from memstrata.api import Memory
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.embed.cache import with_cache
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import InvalidInputError
from memstrata.model import Category, DeleteReason, Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.inert import HOSTILE, assert_inert
from tests.models import default_blend

ALICE = Scope("alice")


@pytest.fixture
def memory(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    with Memory.open(
        settings=load_settings(data_dir=data_dir), clock=clock, embedder=HashingEmbedder(dim=1024)
    ) as mem:
        yield mem


def _seed(memory: Memory) -> None:
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
        topic="travel",
    )
    memory.consolidate(ALICE)
    memory.add_fact(
        "Alice wants to see Osaka next",
        ALICE,
        category=Category.PLAN,
        sources=[trip.id],
        topic="travel",
        importance=0.9,
    )  # not consolidated yet


def test_recall_shows_the_document_then_newer_facts(memory: Memory) -> None:
    _seed(memory)
    result = memory.recall("Travel", ALICE)
    assert result.documents == ["travel"] and len(result.facts_included) == 1
    # each bullet says when its turn was said
    assert "# travel" in result.text
    assert "Alice flew to Kyoto in April (said 2026-01-01) [^1]" in result.text
    assert "## Facts about Travel" in result.text and "Osaka" in result.text
    assert "green tea" not in result.text
    assert result.tokens <= result.budget
    assert_inert(result.text)


def test_recall_is_bounded_and_says_so(memory: Memory) -> None:
    _seed(memory)
    for i in range(40):
        memory.add_fact(
            f"Alice has travel note number {i} about trains and hotels", ALICE, topic="travel"
        )
    result = memory.recall("travel", ALICE, budget=150)
    assert result.tokens <= 150 and result.left_out > 0
    assert "not shown within 150 tokens" in result.text


def test_unknown_topics_and_bad_input(memory: Memory) -> None:
    _seed(memory)
    assert memory.recall("astronomy", ALICE).text == "(nothing is remembered about astronomy)"
    assert memory.recall("!!!", ALICE).documents == []  # not every document
    with pytest.raises(InvalidInputError):
        memory.recall("  ", ALICE)


def test_a_topic_no_name_matches_is_found_by_its_content(memory: Memory) -> None:
    _seed(memory)
    booked = memory.remember("I booked a ryokan near the Kyoto station", ALICE)[0]
    memory.add_fact(
        "Alice booked a ryokan near the Kyoto station", ALICE, sources=[booked.id], topic="japan"
    )
    memory.consolidate(ALICE)
    result = memory.recall("ryokan near the station", ALICE)
    assert result.documents == ["japan"]  # no key or title says "ryokan"
    assert "Alice booked a ryokan" in result.text
    for unrelated in ("astronomy", "quantum physics", "税务"):
        assert memory.recall(unrelated, ALICE).documents == []
    assert memory.recall("japan", ALICE).documents == ["japan"]  # names still come first


def test_stored_text_is_inert_in_the_recall_block(memory: Memory) -> None:
    _seed(memory)
    episode = memory.remember("I said odd things", ALICE, surface="chat</memory>")[0]
    _, version = memory.doc("travel", ALICE)
    memory.apply_doc(
        "travel",
        ALICE,
        [
            Operation(OpKind.ADD, section=f"</memory> {i}", text=text)
            for i, text in enumerate(HOSTILE)
        ]
        + [
            Operation(
                OpKind.ADD,
                section="Sources",
                text="cited from an odd surface",
                citations=(Citation(episode.surface, episode.id),),
            )
        ],
        expected_version=version,
    )
    memory.add_fact(f"Alice said {HOSTILE[0]}", ALICE, topic="travel", importance=0.1)
    result = memory.recall("travel", ALICE, budget=5000)
    assert "&lt;/memory&gt;" in result.text and "chat&lt;/memory&gt;:" in result.text
    assert_inert(result.text)
    assert_inert(memory.recall("travel", ALICE, budget=120).text, note_after=True)
    hostile_topic = memory.recall("</memory>" + HOSTILE[1], ALICE)
    assert "</memory>" not in hostile_topic.text.replace("\n</memory>", "")


@pytest.mark.models
def test_topics_are_found_by_meaning_across_languages(data_dir: Path, clock: FixedClock) -> None:
    """With the offline default embedder (e5 + USE from PyPI): "travel" finds 京都旅行."""
    settings = load_settings(data_dir=data_dir)
    embedder = with_cache(default_blend(), None)  # the session's models, vectors kept in memory
    with Memory.open(settings=settings, clock=clock, embedder=embedder) as mem:
        trip, guitar, sister = mem.remember(
            [
                "我下个月打算去京都旅行，已经订好了酒店。",
                "I have been learning to play the guitar since May.",
                "My sister studies medicine in Shanghai.",
            ],
            ALICE,
        )
        for text, source, topic in (
            ("Alice 下个月去京都旅行，已经订好了酒店", trip, "京都旅行"),
            ("Alice is learning to play the guitar", guitar, "guitar"),
            ("Alice's sister studies medicine in Shanghai", sister, "family"),
        ):
            mem.add_fact(text, ALICE, sources=[source.id], topic=topic)
        mem.consolidate(ALICE)
        for query, key in (("travel", "京都旅行"), ("音乐", "guitar")):
            result = mem.recall(query, ALICE)
            assert result.documents == [key], query
            assert f"# {key}" in result.text
        for unrelated in ("astronomy", "税务"):
            assert mem.recall(unrelated, ALICE).documents == [], unrelated


def test_a_persons_edit_of_a_topic_document_is_what_recall_serves(memory: Memory) -> None:
    _seed(memory)
    doc, version = memory.doc("travel", ALICE)
    kyoto = next(b for s in doc.sections for b in s.bullets if "Kyoto" in b.text)
    memory.apply_doc(
        "travel",
        ALICE,
        [Operation(OpKind.DELETE, kyoto.id, reason=DeleteReason.USER_REQUEST)],
        expected_version=version,
    )
    result = memory.recall("travel", ALICE)
    assert "Kyoto" not in result.text  # gone, not back from the fact it was made from
    assert "Osaka" in result.text  # a fact not consolidated yet still comes


class _NoModel(HashingEmbedder):
    """An embedder that must not be asked anything."""

    def embed_documents(self, texts: object) -> NoReturn:
        raise AssertionError("no model should run when no topic document exists")


def test_no_model_runs_when_no_topic_document_exists(data_dir: Path, clock: FixedClock) -> None:
    settings = load_settings(data_dir=data_dir)
    with Memory.open(settings=settings, clock=clock, embedder=_NoModel()) as mem:
        mem.add_fact("Alice likes jazz", ALICE, topic="music")
        result = mem.recall("songs", ALICE)
    assert result.documents == [] and result.text == "(nothing is remembered about songs)"


def test_a_thread_without_memory_recalls_its_users_topics(memory: Memory) -> None:
    _seed(memory)
    thread = Scope("alice", "new-thread")
    assert memory.recall("travel", thread).documents == ["travel"]
    assert memory.recall("travel", thread, fall_back_to_user=False).documents == []
    memory.remember("In this thread we only talk about chess", thread)
    assert memory.recall("travel", thread).documents == []  # the thread's own memory
