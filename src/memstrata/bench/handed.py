"""``memstrata bench handed``: what every session is handed, measured on realistic conversations.

Each conversation file (:mod:`memstrata.bench.handed_files`) holds sessions of turns over months
and what a careful annotator expects of the memory at the file's ``now``. Each conversation is
stored in a fresh data directory with the offline defaults (no chat model, whatever the
environment or a config file says) and measured through the public API only, as a user would
run it: ``remember`` each session (a turn's time is its session's date plus one minute per
turn), ``extract`` then ``consolidate`` with the memory's clock at ``now``, then ``wake_up``
within a budget (and within :data:`SMALL_BUDGET`) and ``context`` for each question. The
served texts are read line by line (:mod:`memstrata.bench.handed_lines`): current facts and
stale values served, safety facts (early, at a small budget), trivia, dated events, whole slot
values, values cut short; per question, the answer and stale values in the context.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING, Any, Final

from memstrata.bench.handed_files import HandedConversation, Item, Question, SlotItem
from memstrata.bench.handed_lines import (
    CHANGE_WORDS,
    PAST_MARKERS,
    Alternatives,
    cut_value,
    date_form,
    found_in,
    holds,
    marks_past,
    served_lines,
    states_change,
    states_date,
)
from memstrata.model import JsonValue, Scope
from memstrata.settings import Settings

if TYPE_CHECKING:
    from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

    from memstrata.api import Memory
    from memstrata.api.browse import Validity
    from memstrata.ports import Embedder

SMALL_BUDGET: Final = 160
EARLY_SHARE: Final = 0.25
BENCH_USER: Final = "handed"

NOTES: Final = (
    "matching: an item is found when one served line holds every term of one alternative "
    "(substrings, case-insensitive, after HTML-unescaping)",
    "stale served as current: a stale item in a served line with none of the past markers; "
    "the line rule cannot read a negation ('not lactose intolerant' counts as served)",
    "cut values: a line ending in a word that cannot end a phrase; a line cut mid-word, or "
    "cut after a word that can end a phrase, cannot be detected, and a clause ending in a "
    "stranded preposition ('a couch to sleep on') or a sentence in 的 counts though whole",
    "dated: a year-less month and day ('October 2', '10月2日') is not counted as a date; "
    "'the last week of May' is (the 'week of' form)",
    "context: a turn quoted from before a change serves its stale value as current when "
    "nothing in its line marks it as past",
)


def _lines_of(lines: Sequence[str], indexes: Sequence[int]) -> list[JsonValue]:
    return [lines[i] for i in indexes]


def _item_result(item: Item | SlotItem, lines: Sequence[str], indexes: list[int]) -> dict[str, Any]:
    return {
        "id": item.id,
        "note": item.note,
        "found": bool(indexes),
        "lines": _lines_of(lines, indexes),
    }


def _stale_result(item: Item, lines: Sequence[str]) -> dict[str, Any]:
    hits = found_in(item.any, lines)
    current = [i for i in hits if not marks_past(lines[i])]
    unstated = [i for i in current if not states_change(lines[i])]
    return {
        **_item_result(item, lines, hits),
        "as_current": bool(current),
        "as_current_no_change_stated": bool(unstated),
        "current_lines": _lines_of(lines, current),
    }


def _early(count: int) -> int:
    """How many of ``count`` served lines are the first :data:`EARLY_SHARE` of them."""
    return max(1, math.ceil(count * EARLY_SHARE)) if count else 0


def score_wake_up(conv: HandedConversation, text: str, small_text: str) -> dict[str, Any]:
    """The wake_up figures of one conversation, every item with found or not found."""
    lines = served_lines(text)
    small = served_lines(small_text)
    ex = conv.expect
    current = [_item_result(i, lines, found_in(i.any, lines)) for i in ex.current]
    stale = [_stale_result(i, lines) for i in ex.stale]
    safety = []
    for item in ex.safety:
        hits = found_in(item.any, lines)
        safety.append(
            {
                **_item_result(item, lines, hits),
                "early": bool(hits) and hits[0] < _early(len(lines)),
                "at_small_budget": bool(found_in(item.any, small)),
            }
        )
    trivia = [_item_result(i, lines, found_in(i.any, lines)) for i in ex.trivia]
    events = []
    for item in ex.events:
        hits = found_in(item.any, lines)
        expected = item.date
        events.append(
            {
                **_item_result(item, lines, hits),
                "date": item.date,
                "dated": any(date_form(lines[i]) for i in hits),
                "date_right": expected is not None
                and any(states_date(lines[i], expected) for i in hits),
            }
        )
    slots = []
    for slot in ex.slots:
        labelled = found_in(slot.label, lines)
        whole = [i for i in labelled if holds(slot.value, lines[i])]
        slots.append(
            {
                "id": slot.id,
                "note": slot.note,
                "label_served": bool(labelled),
                "complete": bool(whole),
                "lines": _lines_of(lines, labelled),
            }
        )
    dated = [line for line in lines if date_form(line)]
    cut = [line for line in lines if cut_value(line)]
    return {
        "lines": len(lines),
        "counts": {
            "current": _count(current, "found"),
            "current_total": len(current),
            "stale_as_current": _count(stale, "as_current"),
            "stale_as_current_no_change_stated": _count(stale, "as_current_no_change_stated"),
            "stale_total": len(stale),
            "safety": _count(safety, "found"),
            "safety_early": _count(safety, "early"),
            "safety_at_small_budget": _count(safety, "at_small_budget"),
            "safety_total": len(safety),
            "trivia": _count(trivia, "found"),
            "trivia_total": len(trivia),
            "events_served": _count(events, "found"),
            "events_dated": _count(events, "dated"),
            "events_date_right": _count(events, "date_right"),
            "events_total": len(events),
            "lines_dated": len(dated),
            "slots_label_served": _count(slots, "label_served"),
            "slots_complete": _count(slots, "complete"),
            "slots_total": len(slots),
            "cut_lines": len(cut),
        },
        "current": current,
        "stale": stale,
        "safety": safety,
        "trivia": trivia,
        "events": events,
        "slots": slots,
        "cut_lines": cut,
        "dated_lines": dated,
    }


def _count(results: Sequence[Mapping[str, Any]], key: str) -> int:
    return sum(1 for r in results if r[key])


def score_context(conv: HandedConversation, question: Question, text: str) -> dict[str, Any]:
    """One question's context: the answer found, stale served as current, and for a safety
    question which of the conversation's safety items it holds."""
    lines = served_lines(text)
    answer = found_in(question.answer, lines)
    stale = found_in(question.stale, lines) if question.stale else []
    current = [i for i in stale if not marks_past(lines[i])]
    out: dict[str, Any] = {
        "q": question.q,
        "kind": question.kind,
        "answer_found": bool(answer),
        "answer_lines": _lines_of(lines, answer),
        "has_stale": bool(question.stale),
        "stale_as_current": bool(current),
        "stale_lines": _lines_of(lines, current),
    }
    if question.kind == "safety":
        out["safety_items_in"] = [i.id for i in conv.expect.safety if found_in(i.any, lines)]
    return out


# ---------------------------------------------------------------------------------------------
# running


class _FixedClock:
    """The memory's clock, at the conversation's ``now``."""

    def __init__(self, at: datetime) -> None:
        self._at = at

    def now(self) -> datetime:
        return self._at


class _Defaults(Settings):
    """The settings' defaults alone: no environment, no config file, so no chat model."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def offline_settings(data_dir: Path) -> Settings:
    """The offline defaults in ``data_dir``, the trace and the sample memory off."""
    values: dict[str, Any] = {"data_dir": data_dir, "trace": False, "load_sample": False}
    return _Defaults(**values)


@dataclass(frozen=True, slots=True)
class Served:
    """What the memory served for one conversation."""

    wake_up: str
    wake_up_tokens: int
    small: str
    contexts: tuple[str, ...]
    facts: int
    seconds: float
    #: every fact of the scope that holds at ``now`` and every one that no longer does, as
    #: lines (its text, and its slot with its value): where a miss of wake_up stands
    current_facts: tuple[str, ...] = ()
    ended_facts: tuple[str, ...] = ()


def default_embedder(cache: Path | None = None) -> Callable[[], Embedder]:
    """Makes the default embedder (the settings' default models), its vectors cached in
    ``cache`` (default: the benchmarks' cache), one for each memory, which closes it."""
    from memstrata.bench.runner import default_embedding_cache
    from memstrata.embed import create_embedder
    from memstrata.embed.cache import with_cache

    path = cache or default_embedding_cache()

    def make() -> Embedder:
        return with_cache(create_embedder(offline_settings(path.parent).embedder), path)

    return make


def hashing_embedder() -> Embedder:
    """The feature-hashing embedder: no model; context then ranks by words alone."""
    from memstrata.embed.fake import HashingEmbedder

    return HashingEmbedder()


def serve_conversation(
    conv: HandedConversation, *, budget: int, context_budget: int, embedder: Embedder
) -> Served:
    """Store, curate and serve one conversation in a fresh temporary data directory."""
    from memstrata.api import Memory

    started = perf_counter()
    with tempfile.TemporaryDirectory(prefix="memstrata-handed-") as tmp:
        memory = Memory.open(
            settings=offline_settings(Path(tmp)), clock=_FixedClock(conv.now), embedder=embedder
        )
        try:
            scope = Scope(BENCH_USER)
            turns = conv.turns()
            for number in range(1, len(conv.sessions) + 1):
                session = f"s{number}"
                batch = [t for t in turns if t.session_id == session]
                memory.remember(batch, scope, session_id=session)
            report = memory.extract(scope)
            memory.consolidate(scope, use_llm=False)
            woken = memory.wake_up(scope, budget=budget)
            small = memory.wake_up(scope, budget=SMALL_BUDGET)
            contexts = tuple(
                memory.context(q.q, scope, budget=context_budget).text for q in conv.questions
            )
            current_facts = _fact_lines(memory, scope, "current")
            ended_facts = _fact_lines(memory, scope, "superseded")
        finally:
            memory.close()
    return Served(
        woken.text,
        woken.tokens,
        small.text,
        contexts,
        len(report.stored),
        round(perf_counter() - started, 2),
        current_facts,
        ended_facts,
    )


def _fact_lines(memory: Memory, scope: Scope, valid: Validity) -> tuple[str, ...]:
    """Every fact of ``scope`` of that validity as lines: its text, and ``slot: value``."""
    lines: list[str] = []
    after = None
    while True:
        page = memory.facts(scope, valid=valid, after=after, limit=500)
        for view in page:
            fact = view.fact
            lines.append(fact.text)
            if fact.slot is not None and fact.value is not None:
                lines.append(f"{fact.slot}: {fact.value}")
        if len(page) < 500:
            return tuple(lines)
        after = page[-1].fact.id


#: Where a current or safety item missing from wake_up stands, and where a stale value
#: served as current does: in a fact that holds (a choice of serving, or a supersession
#: missed), only in a fact that ended, only in the user's own turns (said, never filed), or
#: nowhere in their words (said otherwise than the annotation's words, or by the assistant).
MISS_PLACES: Final = ("fact", "ended", "said", "unsaid")


def _place(alternatives: Alternatives, served: Served, said: Sequence[str]) -> str:
    if found_in(alternatives, served.current_facts):
        return "fact"
    if found_in(alternatives, served.ended_facts):
        return "ended"
    return "said" if found_in(alternatives, said) else "unsaid"


def misses(conv: HandedConversation, wake: Mapping[str, Any], served: Served) -> dict[str, Any]:
    """Where each current and safety item missing from wake_up stands, and each stale value
    served as current (:data:`MISS_PLACES`), by item and counted: which part of the memory
    to mend, told by totals alone."""
    said = [text for session in conv.sessions for role, text in session.turns if role == "user"]
    ex = conv.expect
    out: dict[str, Any] = {}
    for kind, items, results, key in (
        ("current", ex.current, wake["current"], "found"),
        ("safety", ex.safety, wake["safety"], "found"),
        ("stale_as_current", ex.stale, wake["stale"], "as_current"),
    ):
        wanted = key == "as_current"
        places = {
            item.id: _place(item.any, served, said)
            for item, result in zip(items, results, strict=True)
            if bool(result[key]) is wanted
        }
        counts = dict.fromkeys(MISS_PLACES, 0)
        for place in places.values():
            counts[place] += 1
        out[kind] = {"counts": counts, "items": places}
    return out


def score_conversation(conv: HandedConversation, served: Served) -> dict[str, Any]:
    """One conversation's result: what was served, scored, every item with what was found."""
    wake = score_wake_up(conv, served.wake_up, served.small)
    wake["misses"] = misses(conv, wake, served)
    contexts = [
        {**score_context(conv, q, text), "text": text}
        for q, text in zip(conv.questions, served.contexts, strict=True)
    ]
    return {
        "id": conv.id,
        "set": conv.set,
        "language": conv.language,
        "sessions": len(conv.sessions),
        "turns": sum(len(s.turns) for s in conv.sessions),
        "facts_extracted": served.facts,
        "seconds": served.seconds,
        "wake_up": {
            "tokens": served.wake_up_tokens,
            **wake,
            "text": served.wake_up,
            "small_text": served.small,
        },
        "context": {**_context_counts(contexts), "items": contexts},
    }


def handed_result(
    results: Sequence[Mapping[str, Any]],
    *,
    sets: Sequence[str],
    budget: int,
    context_budget: int,
    embedder: str,
) -> dict[str, Any]:
    """The whole result: how it was run, the lists it read lines by, totals, conversations."""
    return {
        "benchmark": "handed",
        "sets": sorted(set(sets)),
        "conversations_count": len(results),
        "embedder": embedder,
        "llm": None,
        "curation": "offline rules: extract, then consolidate (no chat model)",
        "budget": budget,
        "small_budget": SMALL_BUDGET,
        "context_budget": context_budget,
        "past_markers": list(PAST_MARKERS),
        "change_words": list(CHANGE_WORDS),
        "notes": list(NOTES),
        "totals": _totals(results),
        "conversations": list(results),
    }


def run_handed(
    conversations: Sequence[HandedConversation],
    *,
    budget: int = 800,
    context_budget: int = 1000,
    make_embedder: Callable[[], Embedder] = hashing_embedder,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every conversation served (each memory with an embedder of its own from
    ``make_embedder``) and scored, with totals."""
    results = []
    embedder_name = ""
    for conv in conversations:
        embedder = make_embedder()
        embedder_name = embedder.name
        served = serve_conversation(
            conv, budget=budget, context_budget=context_budget, embedder=embedder
        )
        results.append(score_conversation(conv, served))
        if progress is not None:
            progress(f"{conv.id}: {served.seconds} s")
    return handed_result(
        results,
        sets=[c.set for c in conversations if c.set],
        budget=budget,
        context_budget=context_budget,
        embedder=embedder_name,
    )


def _totals(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    missed: dict[str, dict[str, int]] = {}
    for r in results:
        for key, value in r["wake_up"]["counts"].items():
            counts[key] = counts.get(key, 0) + value
        for kind, part in r["wake_up"].get("misses", {}).items():
            into = missed.setdefault(kind, dict.fromkeys(MISS_PLACES, 0))
            for place, n in part["counts"].items():
                into[place] += n
    lines = sum(r["wake_up"]["lines"] for r in results)
    return {
        "wake_up": {
            **counts,
            "lines": lines,
            "lines_dated_share": round(counts.get("lines_dated", 0) / lines, 4) if lines else 0.0,
            "misses": missed,
        },
        "context": _context_counts([q for r in results for q in r["context"]["items"]]),
    }


def _context_counts(questions: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    safety = [q for q in questions if q["kind"] == "safety"]
    return {
        "questions": len(questions),
        "answers_found": _count(questions, "answer_found"),
        "stale_questions": _count(questions, "has_stale"),
        "stale_as_current": _count(questions, "stale_as_current"),
        "safety_questions": len(safety),
        "safety_answers_found": _count(safety, "answer_found"),
    }


def locomo_figures(path: Path, *, budget: int = 800) -> dict[str, Any]:
    """LoCoMo's own figures, by the existing measures: flawed bullets of wake_up
    (``fact_quality.wake_up_quality``) and the profile slots per main speaker
    (``profile_slots.run_profile_slots``: slots other than ``name``)."""
    from memstrata.bench.fact_quality import wake_up_quality
    from memstrata.bench.profile_slots import run_profile_slots
    from memstrata.bench.runner import bench_memory
    from memstrata.curate.extract_rules import RuleExtractor
    from memstrata.embed.fake import HashingEmbedder
    from memstrata.importers.locomo import load_locomo

    defaults = offline_settings(Path(tempfile.gettempdir()))
    with bench_memory(settings=defaults, embedder=HashingEmbedder()) as memory:
        quality = wake_up_quality(
            memory, RuleExtractor(), load_locomo(path).conversations, budget=budget
        )
    with bench_memory(settings=defaults, embedder=HashingEmbedder()) as memory:
        profile = run_profile_slots(memory, path)
    per_speaker: list[dict[str, Any]] = []
    conversations: Any = profile["conversations"]
    for conv in conversations:
        for speaker, slots in conv["slots"].items():
            per_speaker.append(
                {"conversation": conv["conversation"], "speaker": speaker, "slots": len(slots)}
            )
    counts = [int(p["slots"]) for p in per_speaker]
    return {
        "data": str(path),
        "wake_up_quality": quality,
        "profile_slots": {
            "per_speaker": per_speaker,
            "min": min(counts) if counts else 0,
            "mean": round(sum(counts) / len(counts), 2) if counts else 0.0,
        },
    }


# ---------------------------------------------------------------------------------------------
# printing

_Cell = Callable[[Mapping[str, Any]], str]
_WAKE_COLUMNS: Final[tuple[tuple[str, int, _Cell], ...]] = (
    # header, width, cell from the counts
    ("current", 8, lambda c: f"{c['current']}/{c['current_total']}"),
    ("stale", 6, lambda c: f"{c['stale_as_current']}/{c['stale_total']}"),
    ("unstated", 8, lambda c: str(c["stale_as_current_no_change_stated"])),
    ("safety", 7, lambda c: f"{c['safety']}/{c['safety_total']}"),
    ("early", 6, lambda c: str(c["safety_early"])),
    ("@160", 5, lambda c: f"{c['safety_at_small_budget']}/{c['safety_total']}"),
    ("trivia", 7, lambda c: f"{c['trivia']}/{c['trivia_total']}"),
    ("events", 7, lambda c: f"{c['events_served']}/{c['events_total']}"),
    ("dated", 6, lambda c: f"{c['events_dated']}/{c['events_served']}"),
    ("right", 6, lambda c: str(c["events_date_right"])),
    ("lines", 6, lambda c: str(c["lines"])),
    ("dated%", 7, lambda c: f"{c['lines_dated'] / c['lines']:.0%}" if c["lines"] else "-"),
    ("slots", 6, lambda c: f"{c['slots_complete']}/{c['slots_label_served']}"),
    ("cut", 4, lambda c: str(c["cut_lines"])),
)

_CONTEXT_COLUMNS: Final[tuple[tuple[str, int, _Cell], ...]] = (
    ("answers", 8, lambda c: f"{c['answers_found']}/{c['questions']}"),
    ("stale", 6, lambda c: f"{c['stale_as_current']}/{c['stale_questions']}"),
    ("safety", 7, lambda c: f"{c['safety_answers_found']}/{c['safety_questions']}"),
)

_LEGEND: Final = (
    "current: current facts served / expected; stale: stale values served as current (in a "
    "line without a past marker) / expected; unstated: of those, in a line that states no "
    "change either; safety: safety facts served; early: of them, in the first 25% of the "
    "lines; @160: served by wake_up at 160 tokens; trivia: passing moments served (0 is "
    "right); events: events served / expected; dated: of those served, in a line with a "
    "date; right: with the expected date; lines: served lines; dated%: share of served lines "
    "with a date; slots: slot values served whole / slots whose label is served; cut: lines "
    "ending in a word that cannot end a phrase"
)


def handed_table(result: Mapping[str, Any]) -> str:
    """The result as a reader scans it: wake_up figures per conversation and in total, then
    context() per conversation, then LoCoMo's own figures (or why they were skipped)."""
    sets = ", ".join(result["sets"]) or "files given"
    lines = [
        f"bench handed: {result['conversations_count']} conversations ({sets}); wake_up at "
        f"{result['budget']} tokens (and {result['small_budget']}), context() at "
        f"{result['context_budget']} tokens",
        f"embedder: {result['embedder']}; curation: {result['curation']}",
        "",
        "wake_up",
        f"{'conversation':<18}" + "".join(f" {h:>{w}}" for h, w, _ in _WAKE_COLUMNS),
    ]
    rows = [
        (conv["id"], {**conv["wake_up"]["counts"], "lines": conv["wake_up"]["lines"]})
        for conv in result["conversations"]
    ]
    rows.append(("total", result["totals"]["wake_up"]))
    for name, counts in rows:
        lines.append(
            f"{name:<18}" + "".join(f" {cell(counts):>{w}}" for _, w, cell in _WAKE_COLUMNS)
        )
    lines += ["", _wrap(_LEGEND), ""]
    lines += _miss_lines(result["totals"]["wake_up"].get("misses", {}))
    lines += [
        "context()",
        f"{'conversation':<18}" + "".join(f" {h:>{w}}" for h, w, _ in _CONTEXT_COLUMNS),
    ]
    rows = [(conv["id"], conv["context"]) for conv in result["conversations"]]
    rows.append(("total", result["totals"]["context"]))
    for name, counts in rows:
        lines.append(
            f"{name:<18}" + "".join(f" {cell(counts):>{w}}" for _, w, cell in _CONTEXT_COLUMNS)
        )
    lines += [
        "",
        _wrap(
            "answers: questions whose answer is in the context; stale: questions whose context "
            "serves a stale value as current / questions with stale values; safety: safety "
            "questions answered"
        ),
        "",
    ]
    lines += _locomo_lines(result.get("locomo"))
    return "\n".join(lines)


def _miss_lines(missed: Mapping[str, Mapping[str, int]]) -> list[str]:
    if not missed:
        return []
    lines = [
        "where wake_up's misses stand",
        f"{'':<18}" + "".join(f" {place:>7}" for place in MISS_PLACES),
    ]
    for kind, counts in missed.items():
        lines.append(f"{kind:<18}" + "".join(f" {counts[p]:>7}" for p in MISS_PLACES))
    lines += [
        "",
        _wrap(
            "current and safety: items missing from wake_up; stale_as_current: stale values "
            "served as current. fact: in a fact that holds now; ended: only in a fact that "
            "no longer holds; said: only in the user's own turns; unsaid: in none of these "
            "(said in other words, or only by the assistant)"
        ),
        "",
    ]
    return lines


def _locomo_lines(locomo: Mapping[str, Any] | None) -> list[str]:
    if locomo is None or "skipped" in locomo:
        reason = locomo["skipped"] if locomo else "not asked"
        return [f"LoCoMo figures skipped: {reason}"]
    quality, slots = locomo["wake_up_quality"], locomo["profile_slots"]
    shares = quality["shares"]
    return [
        f"LoCoMo ({locomo['data']})",
        f"wake_up at {quality['budget']} tokens: {quality['count']} bullets; dangling referent "
        f"{shares['dangling']:.1%}, listener addressed {shares['listener']:.1%}, question "
        f"{shares['question']:.1%}, broken verb {shares['broken_verb']:.1%}, any "
        f"{shares['any']:.1%}",
        f"profile slots per main speaker (name left out): min {slots['min']}, mean "
        f"{slots['mean']} over {len(slots['per_speaker'])} speakers",
    ]


def _wrap(text: str, width: int = 96) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width))


def handed_show(result: Mapping[str, Any]) -> str:
    """Each conversation's wake_up text (at the budget and at the small budget) and each
    question's context text, for judging by hand."""
    out: list[str] = []
    for conv in result["conversations"]:
        wake = conv["wake_up"]
        out += [
            f"=== {conv['id']}: wake_up, {wake['tokens']} tokens (budget {result['budget']})",
            wake["text"],
            f"--- {conv['id']}: wake_up at {result['small_budget']} tokens",
            wake["small_text"],
        ]
        for q in conv["context"]["items"]:
            found = "answer found" if q["answer_found"] else "answer NOT found"
            out += [f"--- {conv['id']}: context for {q['q']!r} ({found})", q["text"]]
        out.append("")
    return "\n".join(out)
