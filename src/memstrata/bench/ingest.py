"""Ingest throughput: parse a conversation file and store it, in fresh memories, several times.

Each run opens a new memory in a temporary directory (with the raw trace on, as a real ingest
has it), so runs do not warm each other's database. Reports medians over runs.
"""

from __future__ import annotations

import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

from memstrata import importers
from memstrata.api import Memory
from memstrata.errors import InvalidInputError
from memstrata.model import JsonValue
from memstrata.settings import load_settings


@dataclass(frozen=True, slots=True)
class IngestRun:
    parse_s: float
    store_s: float
    turns: int

    @property
    def total_s(self) -> float:
        return self.parse_s + self.store_s


def run_ingest_bench(
    path: Path, fmt: str, *, runs: int = 5, trace: bool = True
) -> dict[str, JsonValue]:
    """Time ``runs`` ingests of ``path``; returns medians and every run's figures."""
    if runs < 1:
        raise InvalidInputError("runs must be at least 1")
    results: list[IngestRun] = []
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="memstrata-bench-") as tmp:
            settings = load_settings(data_dir=Path(tmp), trace=trace, load_sample=False)
            with Memory.open(settings=settings) as memory:
                started = perf_counter()
                batch = importers.load(path, fmt)
                parsed = perf_counter()
                memory.ingest(batch, "bench")
                stored = perf_counter()
        results.append(IngestRun(parsed - started, stored - parsed, batch.turn_count))
    turns = results[0].turns
    per_s = [turns / r.total_s for r in results]
    return {
        "source": str(path),
        "format": fmt,
        "turns": turns,
        "runs": runs,
        "trace": trace,
        "ingest_turns_per_s": round(statistics.median(per_s), 1),
        "parse_ms_p50": round(statistics.median(r.parse_s for r in results) * 1000, 2),
        "store_ms_p50": round(statistics.median(r.store_s for r in results) * 1000, 2),
        "turns_per_s_each_run": [round(x, 1) for x in per_s],
    }
