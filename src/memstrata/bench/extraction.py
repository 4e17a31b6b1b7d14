"""``memstrata bench extraction``: how much of LoCoMo's gold observations the extractor covers.

LoCoMo's ``observation`` field lists, per session and speaker, gold facts with the turn each
rests on. Recall is the share of gold observations whose evidence turn yields at least one
extracted fact about the same speaker (after the confidence guard). A seeded sample of the
extracted facts is printed with their source turns for judging precision by hand.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata.bench.metrics import parse_locomo_evidence
from memstrata.curate.guards import GuardConfig, passes_confidence
from memstrata.errors import ImportFormatError
from memstrata.ids import new_id
from memstrata.importers.base import read_json
from memstrata.importers.locomo import load_locomo
from memstrata.model import Episode, JsonValue, Scope
from memstrata.ports import Extractor

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def run_extraction(
    extractor: Extractor, path: Path, *, sample: int = 40, seed: int = 7
) -> dict[str, JsonValue]:
    batch = load_locomo(path)
    raw = read_json(path)
    guards = GuardConfig()
    gold_total = gold_found = 0
    per_category: Counter[str] = Counter()
    produced = 0
    samples: list[dict[str, Any]] = []
    for conv, sample_raw in zip(batch.conversations, raw, strict=True):
        episodes = []
        for turn in conv.turns:
            episodes.append(
                Episode(
                    new_id("ep"),
                    Scope("bench"),
                    "import",
                    turn.session_id or "",
                    turn.speaker,
                    turn.role,
                    turn.text,
                    turn.time or _EPOCH,
                    dict(turn.metadata),
                )
            )
        dia_of = {e.id: str(e.metadata.get("dia_id")) for e in episodes}
        text_of = {e.id: e.text for e in episodes}
        result = extractor.extract(episodes)
        kept = [c for c in result.candidates if passes_confidence(c, guards)]
        produced += len(kept)
        per_category.update(c.category.value for c in kept)
        covered: dict[str, set[str]] = defaultdict(set)  # dia_id -> subjects with a fact
        for c in kept:
            for source in c.sources:
                covered[dia_of[source]].add(c.subject or "")
        samples.extend(
            {
                "fact": c.text,
                "category": c.category.value,
                "rule": c.rule,
                "turn": text_of[c.sources[0]],
            }
            for c in kept
        )
        observations = sample_raw.get("observation")
        if not isinstance(observations, dict):
            raise ImportFormatError("sample has no observation field", source=str(path))
        for per_speaker in observations.values():
            for speaker, items in per_speaker.items():
                for item in items:
                    evidence = item[1] if isinstance(item[1], list) else [item[1]]
                    turns = parse_locomo_evidence(evidence).turns
                    if not turns:
                        continue
                    gold_total += 1
                    gold_found += any(speaker in covered.get(t, set()) for t in turns)
    picked = random.Random(seed).sample(samples, min(sample, len(samples)))
    return {
        "benchmark": "extraction",
        "extractor": extractor.name,
        "observations": gold_total,
        "observation_recall": round(gold_found / gold_total, 4) if gold_total else 0.0,
        "facts": produced,
        "facts_by_category": dict(sorted(per_category.items())),
        "sample": picked,
    }
