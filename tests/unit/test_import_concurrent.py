"""Two imports of one export into one user at once (two processes, here two memories on one
data directory) take turns: the data are stored once and the second reports them present,
never "an episode id is already stored" as bad input."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from memstrata.api import Memory
from memstrata.api.common import IngestReport
from memstrata.embed.fake import HashingEmbedder
from memstrata.settings import load_settings
from tests.conftest import FixedClock

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "chatgpt_conversations.json"
)


def _open(data_dir: Path, clock: FixedClock) -> Memory:
    settings = load_settings(data_dir=data_dir)
    return Memory.open(settings=settings, clock=clock, embedder=HashingEmbedder(dim=64))


def test_two_imports_of_one_export_at_once_take_turns(data_dir: Path, clock: FixedClock) -> None:
    first, second = _open(data_dir, clock), _open(data_dir, clock)
    second_done = threading.Event()
    planned = threading.Event()
    apply = first.imports._apply

    def slow_apply(plan: Any) -> None:  # the first has planned; the second starts meanwhile
        planned.set()
        second_done.wait(2)  # without turns the second stores everything here first
        apply(plan)

    first.imports._apply = slow_apply  # type: ignore[method-assign]
    reports: dict[str, IngestReport] = {}
    errors: list[BaseException] = []

    def run(name: str, mem: Memory) -> None:
        try:
            reports[name] = mem.ingest(FIXTURE, "u", fmt="chatgpt")
        except BaseException as exc:
            errors.append(exc)
        finally:
            if name == "second":
                second_done.set()

    try:
        one = threading.Thread(target=run, args=("first", first))
        one.start()
        assert planned.wait(30)
        two = threading.Thread(target=run, args=("second", second))
        two.start()
        one.join(60)
        two.join(60)
        assert errors == []
        assert reports["first"].turns > 0 and reports["first"].present == 0
        assert reports["second"].turns == 0
        assert reports["second"].present == reports["first"].turns
        texts = [
            e.text
            for scope in reports["first"].scopes
            for e in first.list(scope, "episode", limit=100)  # type: ignore[union-attr]
        ]
        assert len(texts) == reports["first"].turns  # each turn once
    finally:
        first.close()
        second.close()
