"""`Memory.update` without a version retries conflicts, re-reading each time, with jittered
exponential backoff up to a deadline; with `expected_version` it is one compare-and-swap."""

from __future__ import annotations

from itertools import count
from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.document.ops import Operation, OpKind
from memstrata.errors import ConflictError
from memstrata.model import Category, DocumentKind, Fact, Scope
from memstrata.settings import load_settings

ALICE = Scope("alice")


class Competitor:
    """Wraps a store write so that another writer gets in first, ``times`` times."""

    def __init__(self, memory: Memory, method: str, compete: Any, times: float) -> None:
        self.real = getattr(memory.store, method)
        self.compete = compete
        self.times = times
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.times:
            self.compete()
        return self.real(*args, **kwargs)


def _contested_fact(
    memory: Memory, monkeypatch: pytest.MonkeyPatch, *, times: float
) -> tuple[Fact, Competitor]:
    """A fact of Alice's whose next ``times`` writes another writer gets in before, changing
    its topic to ``t1``, ``t2``, … between the read and the write."""
    fact = memory.add_fact("Alice drinks tea", ALICE, importance=0.5)
    bumps = count(1)
    real = memory.store.update_fact

    def compete() -> None:
        current = memory.store.get_fact(ALICE, fact.id)
        real(ALICE, current.evolve(topic=f"t{next(bumps)}"), expected_version=current.version)

    writer = Competitor(memory, "update_fact", compete, times=times)
    monkeypatch.setattr(memory.store, "update_fact", writer)
    return fact, writer


def test_a_fact_update_outlasts_several_competing_writers(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact, writer = _contested_fact(memory, monkeypatch, times=4)
    updated = memory.update(fact.id, ALICE, importance=0.9)
    assert isinstance(updated, type(fact))
    assert writer.calls == 5  # four conflicts, then the write
    assert updated.importance == 0.9 and updated.topic == "t4"  # re-read: no change lost
    assert updated.version == fact.version + 5


def test_a_document_update_outlasts_several_competing_writers(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = memory.store.put_document(
        ALICE, DocumentKind.IDENTITY, "identity", {"text": "n0"}, expected_version=0
    )
    real = memory.store.put_document

    def compete() -> None:
        current = memory.store.get_document_by_id(ALICE, doc.id)
        real(
            ALICE,
            DocumentKind.IDENTITY,
            "identity",
            {"text": "n1"},
            expected_version=current.version,
        )

    writer = Competitor(memory, "put_document", compete, times=3)
    monkeypatch.setattr(memory.store, "put_document", writer)
    updated = memory.update(doc.id, ALICE, content={"text": "n2"})
    assert writer.calls == 4 and dict(updated.content) == {"text": "n2"}


def test_an_explicit_version_is_one_compare_and_swap(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    fact, writer = _contested_fact(memory, monkeypatch, times=1)
    with pytest.raises(ConflictError):
        memory.update(fact.id, ALICE, expected_version=fact.version, importance=0.9)
    assert writer.calls == 1


def test_conflicts_past_the_deadline_are_raised(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memstrata import retry

    clock = [0.0]  # the backoff's own time: each wait moves it on, nothing else does

    def wait(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(retry, "wait", wait)
    monkeypatch.setattr(retry, "now", lambda: clock[0])
    fact, writer = _contested_fact(memory, monkeypatch, times=float("inf"))
    with pytest.raises(ConflictError):
        memory.update(fact.id, ALICE, importance=0.9)
    # waits of at most 0.25 s until 5 s have passed: at least 20 attempts, then the conflict
    assert writer.calls >= 20 and clock[0] >= retry.UPDATE_DEADLINE_S


def test_backoff_grows_with_jitter_and_stops_at_the_deadline() -> None:
    from memstrata.retry import retry_conflicts

    now = [0.0]
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    def always_conflicts() -> None:
        raise ConflictError("fa_x", 1, 2)

    with pytest.raises(ConflictError):
        retry_conflicts(always_conflicts, deadline_s=5.0, sleep=sleep, clock=lambda: now[0])
    assert now[0] <= 5.0 and len(waits) > 5
    assert waits[5] > waits[0]  # exponential
    assert len(set(waits)) > len(waits) // 2  # jittered
    results = iter([ConflictError("fa_x", 1, 2), "done"])

    def once_then_done() -> str:
        value = next(results)
        if isinstance(value, Exception):
            raise value
        return value

    assert retry_conflicts(once_then_done, sleep=lambda s: None) == "done"


def test_an_identity_set_without_a_version_outlasts_competing_writers(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.set_identity("first", ALICE)
    bumps = iter(range(1, 100))
    real = memory.store.put_document

    def compete() -> None:  # another writer replaces the identity between read and write
        current = memory.identity(ALICE)
        real(
            ALICE,
            DocumentKind.IDENTITY,
            "identity",
            {"text": f"other {next(bumps)}"},
            expected_version=current.version,
        )

    writer = Competitor(memory, "put_document", compete, times=3)
    monkeypatch.setattr(memory.store, "put_document", writer)
    stored = memory.set_identity("mine", ALICE)
    assert writer.calls == 4  # three conflicts, then the write
    assert stored.text == "mine" and memory.identity(ALICE).text == "mine"
    with pytest.raises(ConflictError):  # an explicit version stays one compare-and-swap
        memory.set_identity("stale", ALICE, expected_version=1)


def test_consolidation_outlasts_a_person_editing_the_same_documents(
    memory: Memory, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tea,) = memory.remember(["I love green tea"], ALICE)
    memory.add_fact("Alice loves green tea", ALICE, category=Category.PREFERENCE, sources=[tea.id])
    edits = iter(range(1, 100))

    with Memory.open(settings=load_settings(data_dir=data_dir)) as person:

        def compete() -> None:  # a person edits each curated document as consolidation writes
            for doc in person.store.list_documents(ALICE):
                if doc.kind in (DocumentKind.TOPIC, DocumentKind.ESSENTIALS):
                    add = Operation(OpKind.ADD, section="Notes", text=f"edit {next(edits)}")
                    person.documents.apply(ALICE, doc.key, [add], expected_version=doc.version)

        memory.consolidate(ALICE)  # the documents exist: a person can now edit them
        (milk,) = memory.remember(["I love oat milk every morning"], ALICE)
        memory.add_fact(
            "Alice loves oat milk", ALICE, category=Category.PREFERENCE, sources=[milk.id]
        )
        writer = Competitor(memory, "put_document", compete, times=3)
        monkeypatch.setattr(memory.store, "put_document", writer)
        report = memory.consolidate(ALICE)
    assert writer.calls > 3 and report.added >= 1
    essentials, _ = memory.doc("essentials", ALICE)
    texts = [b.text for s in essentials.sections for b in s.bullets]
    assert "Alice loves oat milk" in texts  # consolidation re-read and wrote its bullet
    assert any(t.startswith("edit ") for t in texts)  # the person's edits were kept
