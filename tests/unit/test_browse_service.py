"""The browsing service built on a store alone: what another user holds is never seen."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.api.browse import BrowseService
from memstrata.api.capture import CaptureService
from memstrata.api.records import RecordsService
from memstrata.api.runtime import Runtime
from memstrata.errors import NotFoundError
from memstrata.model import Category, Scope
from memstrata.store.sqlite import SqliteStore
from tests.conftest import FixedClock


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[tuple[BrowseService, CaptureService, RecordsService]]:
    with SqliteStore(tmp_path / "m.db") as store:
        runtime = Runtime(store, None, FixedClock(), None)
        capture = CaptureService(runtime)
        yield BrowseService(store), capture, RecordsService(runtime, capture)


def test_users_sessions_and_facts_as_a_person_browses_them(
    parts: tuple[BrowseService, CaptureService, RecordsService],
) -> None:
    browse, capture, records = parts
    capture.remember(["我搬到宁德了", "I work at CATL now"], Scope("u", "t"), session_id="s1")
    capture.remember("someone else's turn", "v")
    old = records.add_fact("works at Tencent", "u", category=Category.PERSONAL, slot="employer")
    new = records.add_fact("works at CATL", "u", category=Category.PERSONAL, slot="employer")
    assert [u.user for u in browse.users()] == ["u", "v"]
    assert [u.user for u in browse.users(allowed={"v"})] == ["v"]
    [summary] = list(browse.sessions(Scope("u", "t")))
    assert summary.session_id == "s1"
    assert [e.text for e in browse.session("s1", Scope("u", "t"))] == [
        "我搬到宁德了",
        "I work at CATL now",
    ]
    with pytest.raises(NotFoundError):  # another user's session is not there
        browse.session("s1", "v")
    current = browse.facts("u")
    assert [f.fact.id for f in current] == [new.id]
    superseded = browse.facts("u", valid="superseded")
    assert [(f.fact.id, f.superseded_by_text) for f in superseded] == [(old.id, "works at CATL")]
    assert browse.facts("v") == []
