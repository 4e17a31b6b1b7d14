"""``memstrata migrate``: a whole store copied into an empty one and proven equal; on SQLite
always, and into PostgreSQL and MySQL/MariaDB when their test servers are set."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

from memstrata.cli import main
from memstrata.errors import InvalidInputError
from memstrata.model import ApiKey, DocumentKind, Erasure, KeyRole, Scope
from memstrata.store.copy import migrate_store
from memstrata.store.opening import open_store
from tests.conftest import FixedClock
from tests.contract.backends import fresh_url
from tests.contract.test_store_contract import ALICE, ALICE_T1, BOB, T0, episode, fact


def _fill(url: str, clock: FixedClock) -> dict[str, object]:
    """A store with every kind of row; what to find again in its copy."""
    store = open_store(url, clock=clock)
    try:
        eps = [episode(ALICE_T1, f"turn {i} 中文 🍵", minutes=i) for i in range(5)]
        store.add_episodes(ALICE_T1, eps)
        store.add_episodes(BOB, [episode(BOB, "bob")])
        f = store.add_fact(ALICE_T1, fact(ALICE_T1, (eps[0].id, eps[1].id)))
        clock.advance(minutes=1)
        f = store.update_fact(ALICE_T1, f.evolve(importance=0.75), expected_version=1)
        gone = store.add_fact(ALICE_T1, fact(ALICE_T1, (eps[2].id,), "to forget"))
        store.erase(ALICE, Erasure(target=gone.id, reason="user-request", fact_ids=(gone.id,)))
        doc = store.put_document(ALICE, DocumentKind.TOPIC, "茶", {"a": 1}, expected_version=0)
        store.archive_episodes(ALICE_T1, [eps[4].id])
        key = ApiKey("key_1", "ms_abc", "ops", KeyRole.ADMIN, None, T0 + timedelta(days=1))
        store.add_key(key, "d" * 64)
        return {
            "fact": store.get_fact(ALICE_T1, f.id),
            "history": store.history(ALICE_T1, f.id),
            "erased": store.history(ALICE_T1, gone.id),
            "doc": store.get_document_by_id(ALICE, doc.id),
            "generation": store.generation("alice"),
            "changes": store.changes_since("alice", 0),
            "stats": store.stats(ALICE),
            "keys": store.list_keys(),
            "erasure": store.find_erasure(ALICE, gone.id),
        }
    finally:
        store.close()


def _read_back(url: str, want: dict[str, object]) -> None:
    store = open_store(url)
    try:
        f = want["fact"]
        assert store.get_fact(ALICE_T1, f.id) == f  # type: ignore[attr-defined]
        assert store.history(ALICE_T1, f.id) == want["history"]  # type: ignore[attr-defined]
        erased = want["erased"]
        assert store.history(ALICE_T1, erased[0].item_id) == erased  # type: ignore[index]
        assert store.get_document_by_id(ALICE, want["doc"].id) == want["doc"]  # type: ignore[attr-defined]
        assert store.generation("alice") == want["generation"]
        assert store.changes_since("alice", 0) == want["changes"]
        assert store.stats(ALICE) == want["stats"]
        assert store.list_keys() == want["keys"]
        assert store.find_erasure(ALICE, erased[0].item_id) == want["erasure"]  # type: ignore[index]
        # the change feed goes on after the copied entries
        store.add_episodes(BOB, [episode(BOB, "after the move")])
        assert store.generation("bob") > max(c.seq for c in want["changes"])  # type: ignore[attr-defined]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("source", "target"),
    [("sqlite", "sqlite"), ("sqlite", "postgresql"), ("sqlite", "mysql"), ("postgresql", "mysql")],
)
def test_a_whole_store_is_copied_and_verified(
    source: str, target: str, tmp_path: Path, clock: FixedClock
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with fresh_url(source, tmp_path / "a") as src, fresh_url(target, tmp_path / "b") as dst:
        want = _fill(src, clock)
        tables = migrate_store(src, dst).tables
        assert tables["episodes"]["rows"] == 6 and tables["api_keys"]["rows"] == 1
        assert tables["item_history"]["rows"] >= 3 and tables["erasures"]["rows"] == 1
        _read_back(dst, want)


def test_a_target_holding_rows_is_refused_and_left_alone(tmp_path: Path, clock: FixedClock) -> None:
    src, dst = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    _fill(src, clock)
    store = open_store(dst)
    store.add_episodes(BOB, [episode(BOB, "mine")])
    store.close()
    with pytest.raises(InvalidInputError, match="not empty"):
        migrate_store(src, dst)
    store = open_store(dst)
    try:
        assert [e.text for e in store.list_episodes(BOB)] == ["mine"]
        assert store.list_episodes(ALICE) == []
    finally:
        store.close()
    with pytest.raises(InvalidInputError, match="same store"):
        migrate_store(src, src)


def test_the_cli_migrates_and_prints_each_table(
    tmp_path: Path, clock: FixedClock, capsys: pytest.CaptureFixture[str]
) -> None:
    src, dst = f"sqlite:///{tmp_path / 'a.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    _fill(src, clock)
    assert main(["migrate", "--from", src, "--to", dst, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tables"]["facts"]["rows"] == 1 and len(out["tables"]["facts"]["sha256"]) == 64
    assert out["copied"] is True
    # run again (as after a commit whose outcome was unknown): the same copy is found, verified
    assert main(["migrate", "--from", src, "--to", dst]) == 0
    assert "already holds an identical copy" in capsys.readouterr().out
    assert main(["migrate", "--from", src, "--to", dst, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["copied"] is False and again["tables"] == out["tables"]
    # once the source has moved on, the target is no copy of it: refused, left alone
    store = open_store(src, clock=clock)
    store.add_episodes(BOB, [episode(BOB, "later")])
    store.close()
    assert main(["migrate", "--from", src, "--to", dst]) == 2
    assert "not empty (episodes, " in capsys.readouterr().err
    assert _count(dst, BOB) == 1


def _count(url: str, scope: Scope) -> int:
    store = open_store(url)
    try:
        return len(store.list_episodes(scope))
    finally:
        store.close()


def test_an_empty_or_mistyped_source_is_refused(tmp_path: Path) -> None:
    """A typo in the source's URL opens a new, empty store: nothing is copied, and the run
    says so instead of reporting a migration of nothing."""
    src, dst = f"sqlite:///{tmp_path / 'typo.db'}", f"sqlite:///{tmp_path / 'b.db'}"
    with pytest.raises(InvalidInputError, match="holds no records"):
        migrate_store(src, dst)
