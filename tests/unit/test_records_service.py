"""The records service built on its own: a store, a runtime of a fixed clock and no trace, and
the capture service over them; the signal to the indexer counted. Nothing else of the facade
is built."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.api.capture import CaptureService
from memstrata.api.records import MAX_PAGE, RecordsService
from memstrata.api.runtime import Runtime
from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.model import Category, Fact, Scope
from memstrata.store.sqlite import SqliteStore
from tests.conftest import FixedClock

U = Scope("u")


@pytest.fixture
def records(tmp_path: Path) -> Iterator[tuple[RecordsService, list[str]]]:
    written: list[str] = []
    with SqliteStore(tmp_path / "m.db") as store:
        runtime = Runtime(store, None, FixedClock(), None, written=lambda s: written.append(s.user))
        yield RecordsService(runtime, CaptureService(runtime)), written


def test_a_fact_filed_without_sources_cites_a_turn_captured_for_it(
    records: tuple[RecordsService, list[str]],
) -> None:
    service, written = records
    fact = service.add_fact(
        "对青霉素过敏", U, category=Category.PERSONAL, slot="allergy:penicillin"
    )
    [source] = fact.sources
    turn = service.get(source, U)
    assert turn.text == "对青霉素过敏" and turn.surface == "manual"  # type: ignore[union-attr]
    assert service.get(fact.id, U) == fact
    assert "u" in written


def test_an_update_is_compare_and_swap_and_another_users_id_is_not_found(
    records: tuple[RecordsService, list[str]],
) -> None:
    service, _ = records
    fact = service.add_fact("works at CATL in 宁德", U, category=Category.PERSONAL)
    with pytest.raises(ConflictError):
        service.update(fact.id, U, expected_version=fact.version + 1, text="works at BYD")
    changed = service.update(fact.id, U, expected_version=fact.version, text="works at BYD")
    assert isinstance(changed, Fact) and changed.text == "works at BYD"
    assert [v.version for v in service.history(fact.id, U)] == [1, 2]
    with pytest.raises(NotFoundError):
        service.get(fact.id, Scope("v"))


def test_a_list_page_is_bounded_and_kinds_are_named(
    records: tuple[RecordsService, list[str]],
) -> None:
    service, _ = records
    service.add_fact("likes green tea", U, category=Category.PREFERENCE)
    assert [f.text for f in service.list(U, "fact")] == ["likes green tea"]  # type: ignore[union-attr]
    with pytest.raises(InvalidInputError):
        service.list(U, "fact", limit=MAX_PAGE + 1)
    with pytest.raises(InvalidInputError):
        service.list(U, "nonsense")  # type: ignore[arg-type]
    stats = service.stats(U)
    assert stats.facts_current == 1 and stats.episodes == 1  # the turn the fact cites
