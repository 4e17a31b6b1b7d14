"""``memstrata bench madial``: bringing up the right memories during a dialogue (MADial-Bench).

Each sample's archive items are stored as one scope's memories; each dialogue (every line so
far) is the query, and the gold is the archive items listed as its evidence.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from memstrata import importers
from memstrata.api import Memory
from memstrata.bench.metrics import all_at, mean, recall_at
from memstrata.bench.runner import Timings, load_conversations, timed_search
from memstrata.model import JsonValue, Scope

KS: Final = (5, 10)


def run_madial(memory: Memory, path: Path, *, rerank: bool = False) -> dict[str, JsonValue]:
    batch = importers.load(path, "madial")
    scopes = {c.key: Scope(f"madial-{c.key}") for c in batch.conversations}
    loaded = load_conversations(memory, batch.conversations, scopes)
    timings = Timings()
    rows: list[tuple[list[str], list[str]]] = []
    skipped = 0
    for conv in batch.conversations:
        item_of = {e.id: str(e.metadata.get("turn_id")) for e in loaded.episodes[conv.key]}
        known = set(item_of.values())
        for question in conv.questions:
            gold = [g for g in question.evidence if g in known]
            if not gold:
                skipped += 1
                continue
            found = timed_search(
                memory, question.question, scopes[conv.key], max(KS), "turn", timings, rerank
            )
            rows.append(([item_of[i] for i in found], gold))
    result: dict[str, JsonValue] = {
        "benchmark": "madial",
        "source": str(path),
        "samples": len(batch.conversations),
        "questions": len(rows),
        "questions_skipped": skipped,
        "rerank": memory.llm.name if rerank and memory.llm is not None else None,
    }
    for k in KS:
        result[f"R@{k}"] = round(mean(recall_at(f, g, k) for f, g in rows), 4)
    for k in KS:
        result[f"all@{k}"] = round(mean(all_at(f, g, k) for f, g in rows), 4)
    result.update(loaded.stats(memory))
    result.update(timings.summary())
    return result
