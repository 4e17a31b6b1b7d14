"""Record stores side by side: the same turns ingested, searched and written through each.

Every store gets the same conversation file, in a fresh data directory with the hashing
embedder (the store is what is measured, not the model) and no raw trace. Per store:

* ingest: the whole file in one ingest, turns per second;
* search: hybrid searches for the file's questions (its turns when it has none), after a
  first search that builds the index, p50 and p95 in milliseconds;
* writes: single-turn ``remember`` calls, one transaction each, per second;
* a write then a search that must see it, p50 in milliseconds.

A server store is given by URL; the bench writes under a user of its own and forgets that user
at the end and retires its data directory (see ``memstrata sites``), so a shared test database
is left as it was found (but for the erasure journal).
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Sequence
from pathlib import Path
from time import perf_counter

from memstrata import importers
from memstrata.api import Memory
from memstrata.errors import InvalidInputError
from memstrata.ids import new_id
from memstrata.model import JsonValue, Scope
from memstrata.settings import load_settings


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered)) - 1))]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def run_stores_bench(
    path: Path,
    fmt: str,
    stores: Sequence[tuple[str, str | None]],
    *,
    queries: int = 50,
    writes: int = 100,
) -> dict[str, JsonValue]:
    """Measure each ``(name, url)`` store (``url`` None: SQLite in a temporary directory)."""
    if not stores:
        raise InvalidInputError("name at least one store")
    if queries < 1 or writes < 1:
        raise InvalidInputError("queries and writes must be at least 1")
    batch = importers.load(path, fmt)
    asked = [q.question for c in batch.conversations for q in c.questions]
    if not asked:
        asked = [t.text for c in batch.conversations for t in c.turns]
    asked = asked[:queries]
    rows: list[JsonValue] = []
    for name, url in stores:
        rows.append({"store": name, **_measure(batch, url, asked, writes)})
    return {
        "source": str(path),
        "format": fmt,
        "turns": batch.turn_count,
        "queries": len(asked),
        "writes": writes,
        "stores": rows,
    }


def _measure(
    batch: importers.ImportBatch, url: str | None, asked: Sequence[str], writes: int
) -> dict[str, JsonValue]:
    user = f"bench-{new_id('ep')[3:].lower()}"
    with tempfile.TemporaryDirectory(prefix="memstrata-bench-") as tmp:
        settings = load_settings(
            data_dir=Path(tmp), trace=False, load_sample=False, embedder={"provider": "fake"}
        )
        with Memory.open(settings=settings, store_url=url) as memory:
            try:
                started = perf_counter()
                memory.ingest(batch, user)
                ingest_s = perf_counter() - started
                scope = Scope(user)
                memory.search(asked[0], scope, k=10, wait=True)  # builds the index
                searches = []
                for query in asked:
                    started = perf_counter()
                    memory.search(query, scope, k=10, wait=True)
                    searches.append(perf_counter() - started)
                started = perf_counter()
                for i in range(writes):
                    memory.remember(f"bench write {i}: pottery class on Tuesday", scope)
                writes_s = perf_counter() - started
                after_write = []
                for i in range(min(writes, 20)):
                    memory.remember(f"a new turn {i} about a kiln", scope)
                    started = perf_counter()
                    memory.search("kiln", scope, k=10, wait=True)
                    after_write.append(perf_counter() - started)
            finally:
                try:
                    memory.forget_scope(Scope(user))
                finally:  # its data directory goes with this call: no forget waits for it
                    memory.retire_site()
    return {
        "ingest_turns_per_s": round(batch.turn_count / ingest_s, 1),
        "search_p50_ms": _ms(statistics.median(searches)),
        "search_p95_ms": _ms(_percentile(searches, 0.95)),
        "writes_per_s": round(writes / writes_s, 1),
        "write_then_search_p50_ms": _ms(statistics.median(after_write)),
    }
