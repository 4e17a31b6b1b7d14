"""Turn size limits: an oversized turn is refused whole, before anything is written."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.errors import InvalidInputError, TooLargeError
from memstrata.importers import load
from memstrata.settings import Settings, load_settings
from tests.conftest import FixedClock


@pytest.fixture
def small(data_dir: Path, clock: FixedClock) -> Iterator[Memory]:
    settings = load_settings(data_dir=data_dir, max_turn_chars=50)
    with Memory.open(settings=settings, clock=clock) as mem:
        yield mem


def test_the_default_limit_is_generous_but_bounded() -> None:
    limit = Settings().max_turn_chars
    assert 10_000 <= limit <= 1_000_000


def test_remember_refuses_an_oversized_turn_and_stores_nothing(small: Memory) -> None:
    with pytest.raises(TooLargeError, match=r"turn 2 .*51 characters.*max_turn_chars 50") as info:
        small.remember(["fits", "x" * 51], "alice")
    assert isinstance(info.value, InvalidInputError)
    assert (info.value.limit, info.value.size) == (50, 51)
    assert small.list("alice") == []
    assert [e.text for e in small.remember("y" * 50, "alice")] == ["y" * 50]


def test_ingest_refuses_a_file_with_one_oversized_turn_whole(small: Memory, tmp_path: Path) -> None:
    source = tmp_path / "turns.jsonl"
    source.write_text(
        '{"text": "fine", "thread": "t1"}\n'
        '{"text": "also fine", "thread": "t2"}\n'
        f'{{"text": "{"z" * 60}", "thread": "t2"}}\n',
        encoding="utf-8",
    )
    with pytest.raises(TooLargeError, match=r"turns\.jsonl.*thread t2, turn 2.*60 characters"):
        small.ingest(load(source, "jsonl"), "alice")
    assert small.list("alice") == []


def test_a_search_query_over_the_limit_is_refused(small: Memory) -> None:
    with pytest.raises(TooLargeError, match="query"):
        small.search("q" * 51, "alice")


def test_curated_text_over_the_limit_is_refused(small: Memory) -> None:
    from memstrata.document.ops import Operation, OpKind

    [ep] = small.remember("I like tea", "alice")
    with pytest.raises(TooLargeError, match="identity"):
        small.set_identity("i" * 51, "alice")
    big = Operation(OpKind.ADD, section="Notes", text="b" * 51)
    with pytest.raises(TooLargeError, match="operation 1"):
        small.apply_doc("tea", "alice", [big], expected_version=0)
    with pytest.raises(TooLargeError, match="operation 1"):
        small.preview_doc("tea", "alice", "# tea\n## Notes\n- " + "b" * 51 + "\n")
    with pytest.raises(TooLargeError, match="fact"):
        small.add_fact("f" * 51, "alice", sources=[ep.id])
    assert small.identity("alice").text == ""
    assert small.list("alice", "document") == [] and small.list("alice", "fact") == []


@pytest.mark.parametrize("after", ["garbage", "ep_nope"])
def test_list_after_something_that_is_not_an_id_is_refused(small: Memory, after: str) -> None:
    with pytest.raises(InvalidInputError, match="not a memstrata id"):
        small.list("alice", after=after)
