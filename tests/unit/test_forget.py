"""Deletion on request: forget and delete erase every stored copy, atomically or resumably,
scoped to the user, and no stale record left by an older version blocks a later write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.document.format import Citation
from memstrata.document.ops import Operation, OpKind
from memstrata.errors import ConflictError, NotFoundError, StoreError
from memstrata.ids import new_id
from memstrata.model import Category, DeleteReason, HistoryOp, Scope
from memstrata.settings import load_settings
from tests.conftest import FixedClock

ALICE = Scope("alice")
BOB = Scope("bob")
SECRET = "I was treated for depression last year"


def _everything(mem: Memory, scope: Scope) -> str:
    """Every stored record and every history row of the scope, as one text."""
    parts = [json.dumps(r, ensure_ascii=False) for r in mem.export(scope)]
    rows = mem.store._read(  # type: ignore[attr-defined]
        "SELECT data FROM item_history WHERE user = ?", [scope.user]
    )
    parts.extend(r["data"] for r in rows)
    return "\n".join(parts)


def _trace(data_dir: Path) -> str:
    return "".join(p.read_text("utf-8") for p in (data_dir / "trace").glob("*/*.jsonl"))


def _seed(mem: Memory, scope: Scope = ALICE) -> tuple[str, str, str]:
    secret, other = mem.remember([SECRET, "I love green tea"], scope)
    fact = mem.add_fact(
        "Alice was treated for depression",
        scope,
        category=Category.PERSONAL,
        sources=[secret.id],
        topic="health",
        importance=0.9,  # also a bullet of essentials
    )
    mem.add_fact(
        "Alice loves green tea",
        scope,
        category=Category.PREFERENCE,
        sources=[other.id],
        topic="drinks",
    )
    mem.consolidate(scope)
    return secret.id, other.id, fact.id


def _refuse(ids: object, reason: str, texts: object = ()) -> int:
    raise OSError("disk is read-only")


def test_forget_erases_the_text_from_every_version_of_every_document(memory: Memory) -> None:
    secret, _, _ = _seed(memory)
    more = memory.remember(["I am learning Rust"], ALICE)[0]
    memory.add_fact("Alice is learning Rust", ALICE, category=Category.EXPERTISE, sources=[more.id])
    memory.consolidate(ALICE)  # essentials gets a later version that still holds the secret
    docs = {d.key: d.id for d in memory.list(ALICE, "document")}
    assert "depression" in str([h.data for h in memory.history(docs["essentials"], ALICE)])
    memory.forget(secret, ALICE)
    for key in ("essentials", "health"):
        history = memory.history(docs[key], ALICE)
        assert len(history) >= 2 and "depression" not in str([h.data for h in history])
    essentials = memory.history(docs["essentials"], ALICE)
    assert "green tea" in str(essentials[-1].data)  # the rest of every version stays
    assert "depression" not in _everything(memory, ALICE)
    assert "Rust" in _everything(memory, ALICE)


def test_forget_over_http_history(memory: Memory) -> None:

    from tests.keyed import keyed_client

    secret, _, _ = _seed(memory)
    client = keyed_client(memory)
    doc_id = next(d.id for d in memory.list(ALICE, "document") if d.key == "essentials")
    assert "depression" in client.get(f"/v1/items/{doc_id}/history?user=alice").text
    assert memory.forget(secret, ALICE).deleted == (secret,)
    assert "depression" not in client.get(f"/v1/items/{doc_id}/history?user=alice").text


def test_a_forget_whose_trace_fails_is_finished_by_a_retry(
    memory: Memory, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret, _, fact = _seed(memory)
    assert memory.trace is not None
    monkeypatch.setattr(memory.trace, "redact", _refuse)
    with pytest.raises(StoreError, match="raw trace line could not be erased"):
        memory.forget(secret, ALICE)
    # the store changes were made together: nothing half-done
    assert "depression" not in _everything(memory, ALICE)
    assert SECRET in _trace(data_dir)
    monkeypatch.undo()
    report = memory.forget(secret, ALICE)  # the retry finishes the pending erasure
    assert report.deleted == (secret,) and fact in report.cascaded
    assert SECRET not in _trace(data_dir)
    with pytest.raises(NotFoundError, match="already forgotten"):
        memory.forget(secret, ALICE)


def test_the_next_open_finishes_a_pending_forget(
    data_dir: Path, clock: FixedClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = load_settings(data_dir=data_dir)
    with Memory.open(settings=settings, clock=clock) as mem:
        secret, _, _ = _seed(mem)
        assert mem.trace is not None
        monkeypatch.setattr(mem.trace, "redact", _refuse)
        with pytest.raises(StoreError):
            mem.delete(secret, ALICE)
    assert SECRET in _trace(data_dir)
    with Memory.open(settings=settings, clock=clock) as mem:
        assert SECRET not in _trace(data_dir)
        assert mem.store.pending_erasures() == []


def test_delete_removes_the_citation_from_bullets(memory: Memory) -> None:
    one, two = memory.remember(["I moved to Kyoto", "I live in Kyoto now"], ALICE)
    ops = [
        Operation(
            OpKind.ADD,
            section="Home",
            text="Lives in Kyoto",
            citations=(Citation("chat", one.id), Citation("chat", two.id)),
        ),
        Operation(
            OpKind.ADD, section="Home", text="Moved recently", citations=(Citation("chat", one.id),)
        ),
    ]
    doc, _ = memory.apply_doc("home", ALICE, ops, expected_version=0)
    kept, gone = doc.sections[0].bullets
    report = memory.delete(one.id, ALICE, reason=DeleteReason.STALE)
    assert gone.id in report.cascaded
    (bullet,) = memory.doc("home", ALICE)[0].sections[0].bullets
    assert bullet.id == kept.id and bullet.citations == (Citation("chat", two.id),)
    assert memory.history(gone.id, ALICE)[-1].op == HistoryOp.DELETE
    # unrelated writes keep working
    memory.apply_doc(
        "home",
        ALICE,
        [
            Operation(
                OpKind.ADD, section="Home", text="Has a cat", citations=(Citation("chat", two.id),)
            )
        ],
        expected_version=memory.doc("home", ALICE)[1],
    )


def test_a_store_damaged_by_an_older_delete_keeps_working(memory: Memory) -> None:
    secret, other, _ = _seed(memory)
    stale = memory.remember(["I play chess on Sundays"], ALICE)[0]
    memory.add_fact("Alice plays chess", ALICE, category=Category.EVENT, sources=[stale.id])
    memory.consolidate(ALICE)
    memory.store.delete_episodes(ALICE, [stale.id])  # what delete used to do: bullets still cite it
    key = "events"
    before, version = memory.doc(key, ALICE)
    (chess,) = before.sections[0].bullets
    assert chess.citations == (Citation("chat", stale.id),)  # the citation left dangling
    doc, written = memory.apply_doc(
        key,
        ALICE,
        [
            Operation(
                OpKind.ADD,
                section="Events",
                text="Went to Nara",
                citations=(Citation("chat", other),),
            )
        ],
        expected_version=version,
    )
    assert written == version + 1
    assert [b.text for b in doc.sections[0].bullets] == ["Alice plays chess", "Went to Nara"]
    new = memory.remember(["I started pottery"], ALICE)[0]
    memory.add_fact("Alice does pottery", ALICE, category=Category.EVENT, sources=[new.id])
    assert memory.consolidate(ALICE).added == 1
    assert memory.consolidate(ALICE, mode="dedup").merged == 0
    audit = memory.consolidate(ALICE, mode="audit", remove=True)
    assert (chess.id, "missing-evidence") in {(f.bullet_id, f.problem) for f in audit.findings}
    (bullet,) = memory.doc(key, ALICE)[0].sections[0].bullets
    assert bullet.text == "Alice does pottery" and bullet.citations == (Citation("chat", new.id),)
    assert memory.forget(secret, ALICE).deleted == (secret,)
    assert memory.forget(other, ALICE).deleted == (other,)
    left = _everything(memory, ALICE)
    assert SECRET not in left and "green tea" not in left and "Alice does pottery" in left


def test_forgetting_a_bullet_id_shared_with_another_user_keeps_their_history(
    memory: Memory,
) -> None:
    shared = new_id("m")
    for scope in (ALICE, BOB):
        ep = memory.remember([f"{scope.user} likes tea"], scope)[0]
        memory.apply_doc(
            "drinks",
            scope,
            [
                Operation(
                    OpKind.ADD,
                    shared,
                    section="Drinks",
                    text=f"{scope.user} likes tea",
                    citations=(Citation("chat", ep.id),),
                )
            ],
            expected_version=0,
        )
    memory.apply_doc(
        "drinks",
        ALICE,
        [Operation(OpKind.DELETE, shared, reason=DeleteReason.USER_REQUEST)],
        expected_version=1,
    )
    bob = memory.history(shared, BOB)
    assert [h.version for h in bob] == [1] and "bob likes tea" in str(bob[0].data)
    alice = memory.history(shared, ALICE)
    assert [h.op for h in alice] == [HistoryOp.CREATE, HistoryOp.DELETE]
    assert "likes tea" not in str([h.data for h in alice])


T1 = Scope("alice", "t1")
T2 = Scope("alice", "t2")


def _two_threads(mem: Memory) -> dict[str, str]:
    """Alice talks in two threads (a fact and documents in each, and at user level); Bob
    says the same things."""
    ids = {}
    for user in ("alice", "bob"):
        t1, t2 = Scope(user, "t1"), Scope(user, "t2")
        one = mem.remember([f"{user} thread one: I was treated for depression"], t1)[0]
        two = mem.remember([f"{user} thread two: I love green tea"], t2)[0]
        mem.add_fact(f"{user} was treated for depression", t1, sources=[one.id], importance=0.9)
        mem.add_fact(f"{user} loves green tea", t2, sources=[two.id], importance=0.9)
        mem.add_fact(f"{user} is unwell and drinks tea", Scope(user), sources=[one.id, two.id])
        mem.consolidate(t1)
        mem.consolidate(t2)
        mem.consolidate(Scope(user))  # user-level essentials citing both threads
        mem.set_identity(f"assistant of {user} in thread one", t1)
        ids[f"{user}/t1"], ids[f"{user}/t2"] = one.id, two.id
    return ids


def test_forget_a_thread_leaves_other_threads_and_users(memory: Memory, data_dir: Path) -> None:
    ids = _two_threads(memory)
    report = memory.forget_scope(T1)
    counts = report.counts
    assert counts["episodes"] == 1 and counts["facts"] == 2 and counts["trace_lines"] == 1
    assert counts["documents"] >= 3  # identity, topic, essentials, state of thread one
    assert "depression" not in _everything(memory, ALICE)
    assert "alice thread one" not in _trace(data_dir)
    assert memory.stats(T1).episodes == 0 and memory.list(T1, "document") == []
    assert [e.id for e in memory.list(T2)] == [ids["alice/t2"]]
    assert "green tea" in str(memory.doc("essentials", T2)[0])
    essentials = memory.doc("essentials", ALICE)[0]
    assert "green tea" in str(essentials) and "depression" not in str(essentials)
    facts = [f.text for f in memory.list(ALICE, "fact")]
    assert facts == ["alice loves green tea"]  # a user-level fact citing thread one goes too
    assert "bob" not in _everything(memory, ALICE)
    assert "bob thread one" in _everything(memory, BOB) and "bob thread one" in _trace(data_dir)


def test_forget_a_user_leaves_nothing_of_them(memory: Memory, data_dir: Path) -> None:
    _two_threads(memory)
    report = memory.forget_scope(ALICE)
    assert report.counts["episodes"] == 2 and report.counts["trace_lines"] == 2
    assert report.counts["facts"] == 3 and report.counts["history"] > 0
    assert _everything(memory, ALICE) == ""
    db = memory.store._conn  # type: ignore[attr-defined]
    dump = "\n".join(db.iterdump())
    assert "alice thread" not in dump and "alice was treated" not in dump
    assert "alice loves" not in dump and "assistant of alice" not in dump
    assert "alice" not in _trace(data_dir).lower().replace('"alice"', "")
    assert memory.store.users() == ["bob"]
    assert memory.store.generation("alice") > 0  # the change feed tells the indexes
    assert "bob thread one" in _everything(memory, BOB)
    with pytest.raises(NotFoundError, match="already forgotten"):
        memory.forget_scope(ALICE)


def test_forget_scope_from_the_cli_and_over_http(
    memory: Memory, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    from memstrata.cli import main
    from tests.keyed import keyed_client

    _two_threads(memory)
    client = keyed_client(memory)
    r = client.delete("/v1/scopes", params={"user": "bob", "thread": "t2"})
    assert r.status_code == 200 and r.json()["counts"]["episodes"] == 1
    assert memory.stats(Scope("bob", "t2")).episodes == 0
    r = client.post(f"/v1/items/{memory.list(BOB)[0].id}/forget", params={"user": "bob"})
    assert r.status_code == 200 and memory.stats(BOB).episodes == 0
    memory.close()
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))  # the prompt is answered no
    assert main(["forget", "--user", "alice", "--data-dir", str(data_dir)]) == 130
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        assert mem.stats(ALICE).episodes == 2
    code = main(
        ["forget", "--user", "alice", "--thread", "t1", "--yes", "--data-dir", str(data_dir)]
    )
    assert code == 0
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        assert mem.stats(ALICE).episodes == 1 and mem.stats(T1).episodes == 0


def test_forgetting_a_fact_added_by_hand_erases_the_turn_made_of_it(
    memory: Memory, data_dir: Path
) -> None:
    fact = memory.add_fact("Alice's locker code is 4417", ALICE, importance=0.9)
    memory.consolidate(ALICE)
    assert "4417" in str(memory.doc("essentials", ALICE)[0])
    report = memory.forget(fact.id, ALICE)
    assert report.deleted[0] == fact.id and report.counts["episodes"] == 1
    assert "4417" not in _everything(memory, ALICE) and "4417" not in _trace(data_dir)


def test_a_malformed_document_from_an_older_update_blocks_nothing(memory: Memory) -> None:
    from memstrata.errors import InvalidInputError
    from memstrata.model import DocumentKind

    secret, other, _ = _seed(memory)
    memory.store.put_document(  # what update(content=...) used to store unchecked
        ALICE, DocumentKind.TOPIC, "broken", {"note": SECRET, "cites": [secret]}, expected_version=0
    )
    memory.store.put_document(
        ALICE, DocumentKind.TOPIC, "odd", {"sections": "none"}, expected_version=0
    )
    with pytest.raises(InvalidInputError, match="malformed"):
        memory.doc("broken", ALICE)
    assert memory.search("depression", ALICE)  # search skips what it cannot read
    memory.delete(other, ALICE)
    memory.forget(secret, ALICE)
    assert "depression" not in _everything(memory, ALICE)
    assert [d.key for d in memory.list(ALICE, "document") if d.key in ("broken", "odd")] == ["odd"]
    odd = next(d for d in memory.list(ALICE, "document") if d.key == "odd")
    fixed = memory.update(odd.id, ALICE, content={"title": "Odd", "sections": []})
    assert memory.doc("odd", ALICE)[1] == fixed.version  # a malformed document can be replaced


@pytest.mark.parametrize("how", ["forget", "delete"])
def test_a_fact_forgotten_or_deleted_is_not_extracted_again(memory: Memory, how: str) -> None:
    from memstrata.curate.extract_rules import RuleExtractor

    memory.remember(["I adopted a puppy named Max last week.", "我最喜欢的水果是芒果。"], ALICE)
    first = memory.extract(ALICE, extractor=RuleExtractor())
    puppy = next(f for f in first.stored if "puppy" in f.text)
    getattr(memory, how)(puppy.id, ALICE)
    memory.remember(["I adopted a kitten named Luna."], ALICE)
    again = memory.extract(ALICE, extractor=RuleExtractor())
    assert [f.text for f in again.stored] == ["The user adopted a kitten named Luna."]
    assert all("puppy" not in f.text for f in memory.list(ALICE, "fact"))


_CRASH = """
import os, sys
from memstrata.api import Memory
from memstrata.settings import load_settings
mem = Memory.open(settings=load_settings(data_dir=sys.argv[1]))
ep = mem.remember(["the door code is 4417"], "alice")[0]
mem.trace.redact = lambda ids, reason, texts=(): os._exit(9)  # killed right after the commit
mem.forget(ep.id, "alice")
"""


def test_a_process_killed_after_the_commit_leaves_an_erasure_the_next_open_finishes(
    data_dir: Path, clock: FixedClock
) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _CRASH, str(data_dir)], check=False, timeout=60)
    assert done.returncode == 9
    assert "4417" in _trace(data_dir)
    with Memory.open(settings=load_settings(data_dir=data_dir), clock=clock) as mem:
        assert "4417" not in _trace(data_dir) and mem.store.pending_erasures() == []
        assert mem.stats(ALICE).episodes == 0


def test_forgetting_an_empty_scope_over_http_is_not_found(memory: Memory) -> None:

    from tests.keyed import keyed_client

    r = keyed_client(memory).delete("/v1/scopes", params={"user": "nobody"})
    assert r.status_code == 404 and "holds nothing" in r.json()["message"]


def test_serving_reads_past_a_malformed_document_from_an_older_update(memory: Memory) -> None:
    from memstrata.model import DocumentKind

    _seed(memory)
    for kind, key in ((DocumentKind.ESSENTIALS, "essentials"), (DocumentKind.TOPIC, "health")):
        stored = memory.store.get_document(ALICE, kind, key)
        assert stored is not None
        memory.store.put_document(  # what update(content=...) used to store unchecked
            ALICE, kind, key, {"note": "free text"}, expected_version=stored.version
        )
    assert "green tea" in memory.wake_up(ALICE).text
    assert memory.recall("health", ALICE).documents == []


@pytest.mark.parametrize(
    "content",
    [
        {"sections": "free text"},
        {"sections": [{"heading": "Facts", "bullets": [{"text": "no id, no citations"}]}]},
        {"sections": [{"heading": "Facts", "bullets": ["a bare string"]}]},
    ],
)
def test_context_reads_past_a_malformed_document_from_an_older_update(
    memory: Memory, content: dict[str, object]
) -> None:
    from memstrata.model import DocumentKind

    _seed(memory)
    for kind, key in ((DocumentKind.ESSENTIALS, "essentials"), (DocumentKind.TOPIC, "health")):
        stored = memory.store.get_document(ALICE, kind, key)
        assert stored is not None
        memory.store.put_document(ALICE, kind, key, content, expected_version=stored.version)
    about_me = memory.context("what do you know about me?", ALICE)
    assert about_me.route == "profile" and "no id" not in about_me.text
    named = memory.context("anything about my health?", ALICE)
    assert named.topic == "health" and "a bare string" not in named.text


def test_forget_plans_again_while_documents_keep_changing_under_it(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plan made stale by another writer is made again, with backoff, until the erasure
    lands: losing more races than a fixed count of attempts would allow still finishes."""
    secret_id, _, _ = _seed(memory)
    erase = memory.store.erase
    lost: list[int] = []

    def racing(scope: Scope, erasure: object) -> object:
        if len(lost) < 8:  # another writer got in first, eight times over
            lost.append(1)
            raise ConflictError("doc_essentials", len(lost), len(lost) + 1)
        return erase(scope, erasure)  # type: ignore[arg-type]

    monkeypatch.setattr(memory.store, "erase", racing)
    memory.forget(secret_id, ALICE)
    assert len(lost) == 8
    assert SECRET not in _everything(memory, ALICE)
