"""``memstrata bench longmemeval``: retrieval recall on LongMemEval's haystacks.

Each instance's haystack is stored in a scope of its own and its question searched in it. As in
the official retrieval evaluation, ``recall_any@k`` is 1 when any evidence item is in the top k
and ``recall_all@k`` when all are; evidence is the answer sessions (session granularity) and the
turns marked ``has_answer`` (turn granularity). Abstention questions (``_abs``) have no evidence
and are not scored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from memstrata import importers
from memstrata.api import Memory
from memstrata.bench.metrics import all_at, any_at, mean, recall_at
from memstrata.bench.runner import Timings, load_conversations, timed_search
from memstrata.model import JsonValue, Scope

KS: Final = (5, 10)


def _block(rows: list[tuple[list[str], list[str]]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        out[f"recall_any@{k}"] = round(mean(any_at(f, g, k) for f, g in rows), 4)
        out[f"recall_all@{k}"] = round(mean(all_at(f, g, k) for f, g in rows), 4)
        out[f"R@{k}"] = round(mean(recall_at(f, g, k) for f, g in rows), 4)
    return out


def run_longmemeval(memory: Memory, path: Path) -> dict[str, JsonValue]:
    batch = importers.load(path, "longmemeval")
    scopes = {c.key: Scope("longmemeval", thread=c.key) for c in batch.conversations}
    loaded = load_conversations(memory, batch.conversations, scopes)
    timings = Timings()
    session_rows: list[tuple[list[str], list[str]]] = []
    turn_rows: list[tuple[list[str], list[str]]] = []
    abstention = 0
    for conv in batch.conversations:
        [question] = conv.questions
        if question.metadata.get("abstention") or not question.evidence:
            abstention += 1
            continue
        scope = scopes[conv.key]
        found = timed_search(memory, question.question, scope, max(KS), "turn", timings)
        answers = [e.id for e in loaded.episodes[conv.key] if e.metadata.get("has_answer")]
        if answers:
            turn_rows.append((found, answers))
        sessions = memory.search(question.question, scope, k=max(KS), granularity="session")
        session_rows.append(([h.session_id or "" for h in sessions], list(question.evidence)))
    result: dict[str, JsonValue] = {
        "benchmark": "longmemeval",
        "source": str(path),
        "questions": len(session_rows),
        "questions_abstention": abstention,
        "session": _block(session_rows),
        "turn": _block(turn_rows),
        "turn_questions": len(turn_rows),
    }
    result.update(loaded.stats(memory))
    result.update(timings.summary())
    return result
