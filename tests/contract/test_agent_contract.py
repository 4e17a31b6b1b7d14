"""The agent verbs (memstrata.agent.AgentMemory): one suite, both implementations.

``embedded`` is a :class:`Memory` in process; ``remote`` is :func:`memstrata.connect` to a live
server over a loopback socket, with an API key, serving a memory of the same kind. Each case
runs on both and asserts the same outcome; on ``remote`` the answers are also checked to be
what the memory behind the server serves in process, type for type. What the protocol does
not do (curation, the identity) is done on the memory itself, as a server's runs would.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

import memstrata
from memstrata.agent import VERBS, AgentMemory
from memstrata.api import Memory
from memstrata.client import RemoteMemory
from memstrata.context import Context
from memstrata.document.format import Document as CuratedDocument
from memstrata.document.ops import Operation, OpKind
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import ConflictError, InvalidInputError, NotFoundError, TooLargeError
from memstrata.ids import new_id
from memstrata.layers import Recall, WakeUp
from memstrata.model import Category, Episode, Fact, Granularity, Scope, SearchHits, Turn
from memstrata.settings import load_settings
from tests.conftest import FixedClock
from tests.e2e.live import live_server
from tests.keyed import keyed_app

BACKENDS = ("embedded", "remote")
ALICE = Scope("alice")


@dataclass
class Backend:
    name: str
    #: what the case talks to
    agent: AgentMemory
    #: the memory behind it (the same object, embedded): curation, and the answers compared
    memory: Memory


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path, clock: FixedClock) -> Iterator[Backend]:
    settings = load_settings(data_dir=tmp_path / "mem", auto_curate=False)
    with Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64)) as memory:
        embedded: AgentMemory = memory  # the facade is an AgentMemory (mypy)
        if request.param == "embedded":
            yield Backend("embedded", embedded, memory)
            return
        secret = memory.keys.create("writer", ["alice", "bob"], name="contract").secret
        with (
            live_server(keyed_app(memory)) as http,
            memstrata.connect(str(http.base_url), secret) as remote,
        ):
            agent: AgentMemory = remote  # and so is the client
            yield Backend("remote", agent, memory)


def _turns(*texts: str) -> list[dict[str, str]]:
    return [{"text": t, "speaker": "alice", "session_id": "s1"} for t in texts]


# the protocol ---------------------------------------------------------------------------


@pytest.mark.parametrize("verb", [*VERBS, "close", "__enter__", "__exit__"])
def test_both_take_every_parameter_of_each_verb(verb: str) -> None:
    wanted = inspect.signature(getattr(AgentMemory, verb)).parameters
    for cls in (Memory, RemoteMemory):
        given = inspect.signature(getattr(cls, verb)).parameters
        for name, param in wanted.items():
            assert name in given, (cls.__name__, verb, name)
            assert given[name].kind == param.kind, (cls.__name__, verb, name)
            assert given[name].default == param.default, (cls.__name__, verb, name)
        extra = [p for n, p in given.items() if n not in wanted]
        assert all(p.default is not inspect.Parameter.empty for p in extra), (cls, verb)


def test_connect_is_exported_lazily() -> None:
    assert memstrata.connect.__module__ == "memstrata.client"
    assert memstrata.RemoteMemory is RemoteMemory and memstrata.AgentMemory is AgentMemory


# capture and search ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("I adopted a corgi named Mochi last spring", "corgi Mochi"),
        ("我在杭州的阿里巴巴工作，每天骑车上班", "阿里巴巴 工作"),
        ("下周我要去 Kyoto 参加 PyCon", "Kyoto PyCon"),
    ],
    ids=["english", "chinese", "mixed"],
)
def test_remember_then_search_finds_it(backend: Backend, text: str, query: str) -> None:
    mem = backend.agent
    mem.remember(_turns("The weather was grey all week", "我们周末去爬山了"), "alice")
    [episode] = mem.remember({"text": text, "speaker": "alice", "session_id": "s2"}, "alice")
    assert isinstance(episode, Episode)
    assert (episode.text, episode.scope, episode.session_id) == (text, ALICE, "s2")
    assert mem.search(query, "alice")[0].id == episode.id  # by its words, or wholly
    hits = mem.search(query, "alice", k=3, wait=True)  # every record embedded first
    assert isinstance(hits, SearchHits) and hits[0].id == episode.id and not hits.partial
    assert text in hits[0].text and hits[0].granularity == Granularity.TURN
    assert hits[0].components["fused"] == hits[0].score
    assert mem.get(episode.id, "alice") == episode
    assert hits == backend.memory.search(query, "alice", k=3, wait=True)
    facts = mem.search(query, "alice", granularity="fact")
    assert list(facts) == []  # no fact holds it yet


def test_remember_takes_turns_in_every_form(backend: Backend) -> None:
    said = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
    turns: list[str | Turn | dict[str, object]] = [
        "plain text",
        Turn(text="a Turn", speaker="bot", time=said, metadata={"n": 1, "标签": ["茶"]}),
        {"text": "a mapping", "role": "assistant", "session_id": "s9"},
    ]
    stored = backend.agent.remember(turns, Scope("alice", "t1"), surface="notes")
    assert [e.text for e in stored] == ["plain text", "a Turn", "a mapping"]
    assert {e.surface for e in stored} == {"notes"} and {e.scope for e in stored} == {
        Scope("alice", "t1")
    }
    assert (stored[1].speaker, stored[1].time, dict(stored[1].metadata)) == (
        "bot",
        said,
        {"n": 1, "标签": ["茶"]},
    )
    assert (stored[2].role.value, stored[2].session_id) == ("assistant", "s9")
    assert backend.agent.list(Scope("alice", "t1")) == stored


# serving --------------------------------------------------------------------------------


def test_context_holds_the_remembered_turn(backend: Backend) -> None:
    mem = backend.agent
    mem.remember(_turns("I love hiking in the hills"), "alice")
    [allergy] = mem.remember(_turns("I'm allergic to peanuts, 我对花生过敏"), "alice")
    ctx = mem.context("am I allergic to peanuts?", "alice", budget=300)
    assert isinstance(ctx, Context)
    assert "peanuts" in ctx.text and ctx.text.startswith("<memory")
    assert ctx.tokens <= ctx.budget == 300
    assert allergy.id in {i.id for i in ctx.included}
    assert any(e["id"] == allergy.id and e["included"] for e in ctx.explain())
    assert ctx == backend.memory.context("am I allergic to peanuts?", "alice", budget=300)


def test_wake_up_serves_the_essentials_after_consolidation(backend: Backend) -> None:
    backend.memory.set_identity("I am Alice's assistant. 我是爱丽丝的助手。", "alice")
    backend.agent.remember(_turns("I'm allergic to peanuts.", "I work at CATL in Ningde."), "alice")
    backend.memory.curate("alice", use_llm=False)  # extraction and consolidation, by rules
    woke = backend.agent.wake_up("alice", budget=600)
    assert isinstance(woke, WakeUp)
    assert "I am Alice's assistant." in woke.text and "peanut" in woke.text.lower()
    assert woke.scope == ALICE and woke.tokens <= woke.budget == 600
    assert woke == backend.memory.wake_up("alice", budget=600)
    other = backend.agent.wake_up("bob")
    assert "peanut" not in other.text.lower() and other.scope == Scope("bob")


def test_recall_serves_a_topic_document(backend: Backend) -> None:
    mem = backend.agent
    [ep] = mem.remember(_turns("I drink Longjing tea every morning, 每天早上喝龙井"), "alice")
    mem.add_fact("Alice drinks Longjing tea every morning", "alice", topic="tea", sources=[ep.id])
    backend.memory.curate("alice", extract=False, use_llm=False)
    recalled = mem.recall("tea", "alice")
    assert isinstance(recalled, Recall)
    assert recalled.documents == ["tea"] and "Longjing" in recalled.text
    assert recalled.tokens <= recalled.budget == 1200
    assert recalled == backend.memory.recall("tea", "alice")
    assert mem.recall("tea", "bob").documents == []


# forgetting -----------------------------------------------------------------------------


def test_forget_removes_it_everywhere(backend: Backend) -> None:
    mem = backend.agent
    [keep] = mem.remember(_turns("I like green tea"), "alice")
    [gone] = mem.remember(_turns("My old address was 12 Elm Street, Springfield"), "alice")
    fact = mem.add_fact("Alice lived on Elm Street", "alice", sources=[gone.id])
    assert mem.search("Elm Street", "alice")[0].id == gone.id
    report = mem.forget(gone.id, "alice")
    assert report.deleted == (gone.id,) and fact.id in report.cascaded
    assert report.counts["episodes"] == 1 and report.counts["facts"] == 1
    assert gone.id not in {h.id for h in mem.search("Elm Street Springfield", "alice")}
    with pytest.raises(NotFoundError):
        mem.get(gone.id, "alice")
    with pytest.raises(NotFoundError):
        mem.get(fact.id, "alice")
    with pytest.raises(NotFoundError, match="already forgotten"):
        mem.forget(gone.id, "alice")
    with pytest.raises(NotFoundError):
        mem.forget(new_id("ep"), "alice")
    assert mem.get(keep.id, "alice") == keep


# facts and records ----------------------------------------------------------------------


def test_a_fact_is_added_listed_read_and_superseded(backend: Backend) -> None:
    mem = backend.agent
    [ep] = mem.remember(_turns("I just started at Acme, 我在 Acme 上班了"), "alice")
    when = {"text": "this month", "start": "2026-01-01", "end": "2026-02-01"}
    fact = mem.add_fact(
        "Alice works at Acme",
        "alice",
        category="profile",
        importance=0.8,
        sources=[ep.id],
        when=when,
        slot="employer",
        value="Acme",
    )
    assert isinstance(fact, Fact)
    assert (fact.category, fact.importance, fact.sources) == (Category.PROFILE, 0.8, (ep.id,))
    assert (fact.slot, fact.value) == ("employer", "Acme")
    assert fact.when is not None and fact.when.text == "this month"
    assert mem.get(fact.id, "alice") == fact
    [view] = mem.facts("alice", slot_kind="employer")
    assert view.fact == fact and view.superseded_by_text is None
    assert fact in mem.list("alice", "fact")
    own = mem.add_fact("Alice prefers tea to coffee 喜欢喝茶", "alice", category="preference")
    assert len(own.sources) == 1  # its own words, stored as a turn and cited
    statement = mem.get(own.sources[0], "alice")
    assert isinstance(statement, Episode) and statement.surface == "manual"
    assert statement.text == "Alice prefers tea to coffee 喜欢喝茶"
    [moved] = mem.remember(_turns("I left Acme, now I'm at CATL"), "alice")
    newer = mem.add_fact(
        "Alice works at CATL",
        "alice",
        category="profile",
        slot="employer",
        value="CATL",
        sources=[moved.id],
    )
    [old] = mem.facts("alice", valid="superseded")
    assert old.fact.id == fact.id and old.fact.superseded_by == newer.id
    assert old.superseded_by_text == "Alice works at CATL"
    assert [v.fact.id for v in mem.facts("alice", category="profile")] == [newer.id]
    assert mem.facts("alice", valid="all") == backend.memory.facts("alice", valid="all")


def test_list_pages_through_more_than_a_page(backend: Backend) -> None:
    mem = backend.agent
    stored = mem.remember([f"turn {n} 第{n}句" for n in range(1001)], "alice")
    listed = mem.list("alice", limit=1001)
    assert listed == sorted(stored, key=lambda e: e.id)
    rest = mem.list("alice", after=listed[994].id, limit=10)
    assert rest == listed[995:]


# curated documents ----------------------------------------------------------------------


def test_a_document_is_edited_by_compare_and_swap(backend: Backend) -> None:
    mem = backend.agent
    [ep] = mem.remember(_turns("我们十月去京都 for the foliage"), "alice")
    empty, version = mem.doc("travel", "alice")
    assert (empty, version) == (CuratedDocument("travel", ()), 0)
    add = Operation(OpKind.ADD, section="Plans", text="Kyoto in October 十月去京都")
    after, version = mem.apply_doc("travel", "alice", [add], expected_version=0)
    assert version == 1 and [b.text for b in after.sections[0].bullets] == [add.text]
    [bullet] = after.sections[0].bullets
    assert bullet.id.startswith("m_") and bullet.citations  # cites its own words
    assert mem.doc("travel", "alice") == (after, 1)
    with pytest.raises(ConflictError) as stale:
        mem.apply_doc("travel", "alice", [add], expected_version=0)
    assert (stale.value.item_id, stale.value.expected, stale.value.actual) == ("travel", 0, 1)
    edit = Operation(OpKind.EDIT, id=bullet.id, text="Kyoto in late October")
    edited, version = mem.apply_doc("travel", "alice", [edit], expected_version=1)
    assert version == 2 and edited.sections[0].bullets[0].text == "Kyoto in late October"
    assert mem.doc("travel", "alice") == backend.memory.doc("travel", "alice")
    assert mem.doc("travel", "bob") == (CuratedDocument("travel", ()), 0)
    assert ep.id != bullet.citations[0].episode_id  # the bullet's own words, not the turn


# scopes and bad input -------------------------------------------------------------------


def test_another_users_records_are_not_found(backend: Backend) -> None:
    mem = backend.agent
    [secret] = mem.remember("Bob's vault code is 4711", "bob")
    bobs_fact = mem.add_fact("Bob's vault code is 4711", "bob", sources=[secret.id])
    for item in (secret.id, bobs_fact.id):
        with pytest.raises(NotFoundError):
            mem.get(item, "alice")
        with pytest.raises(NotFoundError):
            mem.forget(item, "alice")
    assert list(mem.search("vault code 4711", "alice")) == []
    assert mem.facts("alice") == [] and mem.list("alice") == []
    assert mem.get(secret.id, "bob") == secret
    with pytest.raises(NotFoundError):  # a thread's scope sees only the thread's records
        mem.get(secret.id, Scope("bob", "t1"))


@pytest.mark.parametrize(
    "call",
    [
        lambda m: m.remember("", "alice"),
        lambda m: m.remember("   ", "alice"),
        lambda m: m.remember([], "alice"),
        lambda m: m.remember({"txt": "typo"}, "alice"),
        lambda m: m.remember("hi", "alice", surface=" "),
        lambda m: m.remember("hi", "a/b"),
        lambda m: m.search("", "alice"),
        lambda m: m.search("tea", "alice", k=0),
        lambda m: m.search("tea", "alice", granularity="paragraph"),
        lambda m: m.context("", "alice"),
        lambda m: m.context("tea", "alice", budget=10),
        lambda m: m.wake_up("alice", budget=10),
        lambda m: m.add_fact("", "alice"),
        lambda m: m.add_fact("x", "alice", category="mood"),
        lambda m: m.add_fact("x", "alice", confidence=2.0),
        lambda m: m.get("not-an-id", "alice"),
        lambda m: m.forget("not-an-id", "alice"),
        lambda m: m.facts("alice", valid="maybe"),
        lambda m: m.list("alice", limit=0),
        lambda m: m.doc("identity", "alice"),
        lambda m: m.doc("no/slashes", "alice"),
        lambda m: m.apply_doc(
            "travel", "alice", [Operation(OpKind.EDIT, id="m_x", text="y")], expected_version=0
        ),
    ],
)
def test_bad_input_is_the_same_error_on_both(backend: Backend, call: object) -> None:
    assert callable(call)
    with pytest.raises(InvalidInputError):
        call(backend.agent)
    assert backend.memory.stats("alice").episodes == 0  # nothing was written


def test_text_over_the_limit_is_too_large_on_both(backend: Backend) -> None:
    text = "长" * 100_001
    with pytest.raises(TooLargeError) as refused:
        backend.agent.remember(["fine", text], "alice")
    assert (refused.value.limit, refused.value.size) == (100_000, 100_001)
    assert "turn 2 has 100001 characters" in str(refused.value)
    with pytest.raises(TooLargeError):
        backend.agent.add_fact("x" * 100_001, "alice")
    with pytest.raises(TooLargeError):
        backend.agent.search("y" * 100_001, "alice")
    assert backend.memory.stats("alice").episodes == 0
