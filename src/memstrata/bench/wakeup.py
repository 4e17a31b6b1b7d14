"""``memstrata bench wake-up``: wake_up latency for a scope with many facts.

Synthetic bilingual facts (seeded) with spread importance, confidence and age fill one scope of a
fresh memory; wake_up is then called repeatedly with the default budget. The first call reads
the facts from the store; later calls use the fact cache (kept in step with the change feed).
"""

from __future__ import annotations

import random
import statistics
import tempfile
from datetime import timedelta
from pathlib import Path
from time import perf_counter

from memstrata.api import Memory
from memstrata.bench.metrics import percentile
from memstrata.ids import new_id
from memstrata.model import Category, Fact, JsonValue, Scope
from memstrata.settings import load_settings

_TOPICS = ("work", "family", "health", "travel", "food", "hobbies", "项目", "旅行")
_TEXTS = (
    "Alice finished the {} review before the deadline",
    "Alice 周末去了{}，觉得很开心",
    "Alice prefers {} over long meetings",
    "Alice 计划下个月学习{}",
)
_THINGS = ("quarterly", "PostGIS", "梧桐山", "piano", "dim sum", "Rust", "马拉松", "Kyoto")


def run_wakeup(facts: int = 10_000, *, calls: int = 20, budget: int = 800) -> dict[str, JsonValue]:
    rng = random.Random(11)
    with tempfile.TemporaryDirectory(prefix="memstrata-bench-") as tmp:
        settings = load_settings(data_dir=Path(tmp), trace=False, load_sample=False)
        with Memory.open(settings=settings) as memory:
            scope = Scope("bench")
            source = memory.remember("seed turn for the synthetic facts", scope)[0]
            now = memory.clock.now()
            for i in range(facts):
                text = rng.choice(_TEXTS).format(rng.choice(_THINGS)) + f" ({i})"
                memory.store.add_fact(
                    scope,
                    Fact(
                        new_id("fa"),
                        scope,
                        text,
                        rng.choice(list(Category)),
                        round(rng.uniform(0.5, 1.0), 2),
                        round(rng.random(), 2),
                        rng.choice(_TOPICS),
                        (source.id,),
                        now - timedelta(days=rng.randint(0, 720)),
                        None,
                        None,
                        now,
                        now,
                    ),
                )
            times = []
            for _ in range(calls):
                started = perf_counter()
                result = memory.wake_up(scope, budget=budget)
                times.append((perf_counter() - started) * 1000)
    warm = times[1:] or times
    return {
        "benchmark": "wake-up",
        "facts": facts,
        "budget": budget,
        "calls": calls,
        "first_call_ms": round(times[0], 2),
        "wake_up_ms_p50": round(statistics.median(warm), 3),
        "wake_up_ms_p95": round(percentile(warm, 95), 3),
        "tokens": result.tokens,
        "facts_shown": len(result.facts_included),
    }
