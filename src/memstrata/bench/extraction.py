"""``memstrata bench extraction``: extracted facts against LoCoMo's gold observations.

LoCoMo's ``observation`` field lists, per session and speaker, gold facts with the turns they
rest on. Facts are the extractor's candidates that pass the confidence guard.

* Lenient recall: the share of observations whose evidence turn yields at least one fact about
  the same speaker, whatever it says.
* Strict: a fact is correct when an observation about the same speaker, resting on the fact's
  turn or the turn just before or after it in the same session, has a token F1 of at least 0.4
  with it. Tokens are the search tokens (``index.tokenize``: English stems without stopwords,
  Chinese characters without the bigrams), the speaker's own name left out of both sides, since
  every fact and observation about a speaker shares it. Precision: the share of facts correct;
  recall: the share of observations some fact matches; F1 of the two.
* Quality: the share of facts with a dangling referent, the listener addressed, a question or a
  broken verb (``curate.quality``), with examples; the same for the bullets ``wake_up`` serves
  after extract + consolidate of each conversation in its own scope (when a memory is given).

A seeded sample of the facts is printed with their source turns for judging by hand.
"""

from __future__ import annotations

import random
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any, Final

from memstrata.bench.fact_quality import quality_shares, wake_up_quality
from memstrata.bench.metrics import parse_locomo_evidence
from memstrata.curate.guards import GuardConfig, passes_confidence
from memstrata.errors import ImportFormatError
from memstrata.ids import new_id
from memstrata.importers.base import read_json
from memstrata.importers.locomo import load_locomo
from memstrata.index.tokenize import tokenize
from memstrata.model import Candidate, Category, Episode, JsonValue, Scope
from memstrata.ports import Extractor
from memstrata.util.scripts import is_han

if TYPE_CHECKING:
    from memstrata.api import Memory

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
STRICT_F1: Final = 0.4
_DIA = re.compile(r"^D(\d+):(\d+)$")


@dataclass(frozen=True, slots=True)
class Observation:
    speaker: str
    text: str
    turns: tuple[str, ...]


def match_tokens(text: str, speaker: str = "") -> Counter[str]:
    """The tokens a fact and an observation are compared on."""
    own = set(tokenize(speaker))
    return Counter(t for t in tokenize(text) if not (len(t) > 1 and is_han(t[0])) and t not in own)


def token_f1(a: Counter[str], b: Counter[str]) -> float:
    common = sum((a & b).values())
    if not common:
        return 0.0
    return _f1(common / sum(a.values()), common / sum(b.values()))


def _f1(precision: float, recall: float) -> float:
    """F1 of a precision and a recall (0 when both are)."""
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def near_turns(dia_id: str) -> set[str]:
    """The turn and the turns just before and after it in its session."""
    match = _DIA.match(dia_id)
    if match is None:
        return {dia_id}
    session, turn = match.group(1), int(match.group(2))
    return {f"D{session}:{n}" for n in (turn - 1, turn, turn + 1) if n >= 0}


def _observations(sample: dict[str, Any], path: Path) -> list[Observation]:
    observations = sample.get("observation")
    if not isinstance(observations, dict):
        raise ImportFormatError("sample has no observation field", source=str(path))
    out = []
    for per_speaker in observations.values():
        for speaker, items in per_speaker.items():
            for item in items:
                evidence = item[1] if isinstance(item[1], list) else [item[1]]
                turns = parse_locomo_evidence(evidence).turns
                if turns:
                    out.append(Observation(speaker, str(item[0]), tuple(turns)))
    return out


@dataclass(slots=True)
class _Tally:
    gold: int = 0
    lenient_found: int = 0
    strict_found: int = 0
    facts: int = 0
    correct: int = 0


def _score(
    kept: list[Candidate], dia_of: dict[str, str], gold: list[Observation], tally: _Tally
) -> None:
    covered: dict[str, set[str]] = defaultdict(set)  # dia_id -> subjects with a fact
    near: dict[tuple[str, str], list[int]] = defaultdict(list)  # (speaker, dia) -> gold index
    for index, obs in enumerate(gold):
        for turn in obs.turns:
            for dia in near_turns(turn):
                near[(obs.speaker, dia)].append(index)
    gold_tokens = [match_tokens(o.text, o.speaker) for o in gold]
    matched: set[int] = set()
    for c in kept:
        subject = c.subject or ""
        dias = {dia_of[s] for s in c.sources}
        for dia in dias:
            covered[dia].add(subject)
        tokens = match_tokens(c.text, subject)
        candidates = {i for dia in dias for i in near.get((subject, dia), [])}
        hits = {i for i in candidates if token_f1(tokens, gold_tokens[i]) >= STRICT_F1}
        tally.correct += bool(hits)
        matched |= hits
    tally.facts += len(kept)
    tally.gold += len(gold)
    tally.strict_found += len(matched)
    tally.lenient_found += sum(
        any(o.speaker in covered.get(t, set()) for t in o.turns) for o in gold
    )


def _oracle_facts(
    episodes: Sequence[Episode], dia_of: dict[str, str], gold: list[Observation]
) -> list[Candidate]:
    """The facts of an extractor that knew the gold: for each turn an observation rests on, the
    turn's whole text, about the observation's speaker when that speaker said it. Scored like
    any extractor, it bounds what choosing turns well can reach on this gold."""
    episode_of = {dia: e for e in episodes if (dia := dia_of[e.id])}
    evidence = sorted(
        {(obs.speaker, turn) for obs in gold for turn in obs.turns if turn in episode_of}
    )
    return [
        Candidate(episode_of[turn].text, Category.OTHER, 1.0, 0.5, (episode_of[turn].id,), speaker)
        for speaker, turn in evidence
        if episode_of[turn].speaker == speaker
    ]


def _ratio(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def run_extraction(
    extractor: Extractor,
    path: Path,
    *,
    sample: int = 40,
    seed: int = 7,
    memory: Memory | None = None,
    budget: int = 800,
) -> dict[str, JsonValue]:
    started = perf_counter()
    batch = load_locomo(path)
    raw = read_json(path)
    guards = GuardConfig()
    tally = _Tally()
    oracle = _Tally()
    per_category: Counter[str] = Counter()
    samples: list[dict[str, Any]] = []
    judged: list[tuple[str, str | None]] = []
    for conv, sample_raw in zip(batch.conversations, raw, strict=True):
        gold = _observations(sample_raw, path)
        episodes = [
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
            for turn in conv.turns
        ]
        dia_of = {e.id: str(e.metadata.get("dia_id")) for e in episodes}
        text_of = {e.id: e.text for e in episodes}
        result = extractor.extract(episodes)
        kept = [c for c in result.candidates if passes_confidence(c, guards)]
        per_category.update(c.category.value for c in kept)
        judged.extend((c.text, c.subject) for c in kept)
        _score(kept, dia_of, gold, tally)
        _score(_oracle_facts(episodes, dia_of, gold), dia_of, gold, oracle)
        samples.extend(
            {
                "fact": c.text,
                "category": c.category.value,
                "rule": c.rule,
                "turn": text_of[c.sources[0]],
            }
            for c in kept
        )
    precision = _ratio(tally.correct, tally.facts)
    recall = _ratio(tally.strict_found, tally.gold)
    f1 = round(_f1(precision, recall), 4)
    out: dict[str, JsonValue] = {
        "benchmark": "extraction",
        "extractor": extractor.name,
        "conversations": len(batch.conversations),
        "observations": tally.gold,
        "observation_recall": _ratio(tally.lenient_found, tally.gold),
        "strict_precision": precision,
        "strict_recall": recall,
        "strict_f1": f1,
        "facts": tally.facts,
        # what an extractor that knew which turns the gold rests on, and took each whole
        # turn as one fact, scores: how far choosing turns well can go on this gold
        "oracle_whole_turns": {
            "facts": oracle.facts,
            "strict_precision": (o_p := _ratio(oracle.correct, oracle.facts)),
            "strict_recall": (o_r := _ratio(oracle.strict_found, oracle.gold)),
            "strict_f1": round(_f1(o_p, o_r), 4),
        },
        "facts_by_category": dict(sorted(per_category.items())),
        "fact_quality": quality_shares(judged, seed=seed),
    }
    if memory is not None:
        out["wake_up_quality"] = wake_up_quality(
            memory, extractor, batch.conversations, budget=budget
        )
    out["sample"] = random.Random(seed).sample(samples, min(sample, len(samples)))
    out["elapsed_s"] = round(perf_counter() - started, 2)
    return out
