"""The import service built on its own: a store, a runtime of a fixed clock and no trace, the
capture and documents services over them, the two signals counted. Nothing else of the facade
is built."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memstrata.api.capture import CaptureService
from memstrata.api.documents import DocumentsService
from memstrata.api.imports import ImportService
from memstrata.api.runtime import Runtime
from memstrata.errors import InvalidInputError
from memstrata.model import Scope
from memstrata.store.sqlite import SqliteStore
from tests.conftest import FixedClock

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "chatgpt_conversations.json"
)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[tuple[ImportService, list[str]]]:
    signals: list[str] = []

    def erase_texts(scope: Scope, target: str, texts: Sequence[str]) -> None:
        raise AssertionError("an import erases nothing")

    with SqliteStore(tmp_path / "m.db") as store:
        runtime = Runtime(
            store,
            None,
            FixedClock(),
            None,
            written=lambda s: signals.append(f"written {s}"),
            touched=lambda s: signals.append(f"touched {s}"),
        )
        capture = CaptureService(runtime)
        yield (
            ImportService(runtime, capture, DocumentsService(runtime, capture, erase_texts)),
            signals,
        )


def test_a_dry_run_is_the_plan_of_the_import_and_a_second_import_adds_nothing(
    service: tuple[ImportService, list[str]],
) -> None:
    imports, signals = service
    plan = imports.ingest(FIXTURE, "ana", fmt="chatgpt", dry_run=True)
    assert plan.dry_run and plan.turns > 0
    assert list(imports.store.iter_episodes(Scope("ana"))) == [] and signals == []
    done = imports.ingest(FIXTURE, "ana", fmt="chatgpt")
    assert (done.turns, done.scopes) == (plan.turns, plan.scopes)
    stored = list(imports.store.iter_episodes(Scope("ana")))
    assert len(stored) >= plan.turns and signals  # the indexer and the queue were told
    again = imports.ingest(FIXTURE, "ana", fmt="chatgpt")
    assert again.turns == 0 and again.present > 0
    assert len(list(imports.store.iter_episodes(Scope("ana")))) == len(stored)


def test_a_format_must_be_named_and_a_dry_run_is_only_for_keyed_formats(
    service: tuple[ImportService, list[str]], tmp_path: Path
) -> None:
    imports, _ = service
    with pytest.raises(InvalidInputError, match="name the import format"):
        imports.ingest(FIXTURE, "ana")
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"text": "我喜欢绿茶", "thread": "t"}\n', encoding="utf-8")
    with pytest.raises(InvalidInputError, match="dry run"):
        imports.ingest(chat, "ana", fmt="jsonl", dry_run=True)
