"""One curation of a user at a time, whatever process asks: two at once never extract the
same turns twice nor fail on each other's writes."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memstrata.api import Memory
from memstrata.bench.handed import hashing_embedder, offline_settings
from memstrata.model import Fact, FactFilter, Role, Scope, Turn

U = Scope("u")


def _open(data_dir: Path) -> Memory:
    return Memory.open(settings=offline_settings(data_dir), embedder=hashing_embedder())


def test_two_memories_consolidating_one_user_at_once_take_turns(tmp_path: Path) -> None:
    first = _open(tmp_path)
    day = datetime(2026, 1, 1, tzinfo=UTC)
    first.remember(
        [
            Turn(
                text=f"I live in City{i % 7}. I work at Company{i % 5} as an engineer.",
                role=Role.USER,
                time=day + timedelta(minutes=i),
                session_id=f"s{i // 10}",
            )
            for i in range(60)
        ],
        U,
    )
    second = _open(tmp_path)  # another store object on the same files: as another process
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def run(memory: Memory) -> None:
        try:
            start.wait()
            memory.extract(U)
            memory.consolidate(U, use_llm=False)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(m,)) for m in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    try:
        assert errors == []
        facts = [f for f in first.store.iter_facts(U, FactFilter()) if isinstance(f, Fact)]
        cited = Counter((f.sources, f.slot) for f in facts)
        assert max(cited.values()) == 1  # no turn extracted twice into one slot
        current = list(first.store.iter_facts(U, FactFilter(current_only=True, slot="residence")))
        assert len(current) == 1
    finally:
        first.close()
        second.close()


def test_a_curation_inside_a_curation_of_the_same_user_does_not_wait_for_itself(
    tmp_path: Path,
) -> None:
    memory = _open(tmp_path)
    try:
        memory.remember([Turn(text="I live in Cairo.", role=Role.USER)], U)
        with memory.curation_hold("u"):  # consolidation extracts: one hold, however deep
            memory.extract(U)
            memory.consolidate(U, use_llm=False)
        assert memory.wake_up(U).text.count("Cairo") >= 1
    finally:
        memory.close()
