"""The capture service on fakes of its runtime: a store that records what it is given, a trace
that records its lines, a fixed clock, and the two signals counted. Nothing else of the facade
is built."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

import pytest

from memstrata.api.capture import CaptureService
from memstrata.api.runtime import Runtime
from memstrata.errors import InvalidInputError, TooLargeError
from memstrata.importers import ImportBatch
from memstrata.model import Episode, Scope
from memstrata.ports import RecordStore
from tests.conftest import FixedClock


class _Store:
    """What capture asks of a record store: episodes added, one batch per transaction."""

    def __init__(self) -> None:
        self.batches: list[tuple[Scope, list[Episode]]] = []

    def add_episodes(self, scope: Scope, episodes: Sequence[Episode]) -> None:
        self.batches.append((scope, list(episodes)))


class _Trace:
    def __init__(self) -> None:
        self.lines: list[tuple[str, list[Mapping[str, Any]]]] = []

    def append(self, surface: str, events: Sequence[Mapping[str, Any]]) -> None:
        self.lines.append((surface, list(events)))


@pytest.fixture
def parts() -> tuple[CaptureService, _Store, _Trace, list[str]]:
    store, trace, signals = _Store(), _Trace(), []
    runtime = Runtime(
        cast(RecordStore, store),
        cast(Any, trace),
        FixedClock(),
        None,
        written=lambda scope: signals.append(f"written {scope.user}"),
        touched=lambda scope: signals.append(f"touched {scope.user}"),
    )
    return CaptureService(runtime), store, trace, signals


def test_remember_stores_the_batch_whole_traces_it_and_signals(
    parts: tuple[CaptureService, _Store, _Trace, list[str]],
) -> None:
    capture, store, trace, signals = parts
    turns = ["I moved to 宁德 in May.", {"text": "好的", "speaker": "bot"}]
    episodes = capture.remember(turns, "u")
    assert [e.text for e in episodes] == ["I moved to 宁德 in May.", "好的"]
    assert [e.speaker for e in episodes] == ["user", "bot"]
    assert {e.session_id for e in episodes} == {"2026-01-01"}  # the day, when none is given
    assert store.batches == [(Scope("u"), episodes)]
    assert [(s, [line["id"] for line in lines]) for s, lines in trace.lines] == [
        ("chat", [e.id for e in episodes])
    ]
    assert signals == ["written u", "touched u"]


def test_secrets_are_scrubbed_before_anything_is_stored(
    parts: tuple[CaptureService, _Store, _Trace, list[str]],
) -> None:
    capture, store, trace, _ = parts
    key = "sk-" + "A1b2C3d4" * 6
    [episode] = capture.remember(f"my key is {key}", "u")
    assert key not in episode.text
    assert key not in repr(store.batches) and key not in repr(trace.lines)


def test_a_bad_turn_stores_nothing_and_says_which(
    parts: tuple[CaptureService, _Store, _Trace, list[str]],
) -> None:
    capture, store, trace, signals = parts
    with pytest.raises(TooLargeError, match="turn 2"):
        capture.remember(["fine", "x" * 1_000_000], "u")
    with pytest.raises(InvalidInputError, match="no turns"):
        capture.remember([], "u")
    with pytest.raises(InvalidInputError, match="surface"):
        capture.remember("fine", "u", surface=" ")
    with pytest.raises(InvalidInputError, match="speaker has 300 characters"):
        capture.remember({"text": "fine", "speaker": "s" * 300}, "u")
    assert store.batches == [] and trace.lines == [] and signals == []


def test_an_import_is_one_transaction_over_its_threads_and_touches_no_queue(
    parts: tuple[CaptureService, _Store, _Trace, list[str]],
) -> None:
    from memstrata.importers import Conversation
    from memstrata.model import Turn

    capture, store, trace, signals = parts
    batch = ImportBatch(
        source="chat.jsonl",
        format="jsonl",
        conversations=(
            Conversation(key="a", turns=(Turn(text="hello"), Turn(text="我喜欢绿茶"))),
            Conversation(key="b", turns=(Turn(text="bye"),)),
        ),
    )
    report = capture.ingest(batch, "u")
    assert report.turns == 3 and report.scopes == (Scope("u", "a"), Scope("u", "b"))
    [(scope, episodes)] = store.batches
    assert scope == Scope("u") and [e.scope.thread for e in episodes] == ["a", "a", "b"]
    assert [s for s, _ in trace.lines] == ["import"]
    assert signals == ["written u"]
