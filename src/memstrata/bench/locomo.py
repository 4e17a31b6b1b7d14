"""``memstrata bench locomo``: evidence recall on LoCoMo at turn and session granularity.

Each conversation is stored in a scope of its own and every question searched in it. Recall is
reported as MemPalace defines it (``R@k``: the share of a question's evidence found in the top
k, all categories, averaged) and strictly (``all@k``: every evidence item found). Evidence ids
that are malformed (``D:11:26``) or name no turn of the conversation are skipped and counted; a
question left with no evidence is not scored.

``context`` gives, per budget, the share of a question's evidence turns that ``context()``
puts in its block (``recall``; ``all``: every one), and the share in it as the turn or cited by
an item in it, a fact, bullet or profile slot (``recall_cited``). The bench stores turns only;
with ``curate`` each conversation is first curated offline (rule extraction, then consolidation
by rules), so the profile, the essentials, topic documents and facts compete with the turns.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from memstrata import importers
from memstrata.api import Memory
from memstrata.api.common import document_passages
from memstrata.bench.metrics import all_at, mean, parse_locomo_evidence, recall_at, session_of
from memstrata.bench.runner import Timings, load_conversations, timed_search
from memstrata.importers import Conversation
from memstrata.model import DocumentKind, JsonValue, Scope
from memstrata.tokens import HeuristicTokenCounter

KS: Final = (5, 10)


def _block(rows: list[tuple[list[str], list[str]]]) -> dict[str, float]:
    out: dict[str, float] = {}
    for k in KS:
        out[f"R@{k}"] = round(mean(recall_at(found, gold, k) for found, gold in rows), 4)
    for k in KS:
        out[f"all@{k}"] = round(mean(all_at(found, gold, k) for found, gold in rows), 4)
    return out


CONTEXT_BUDGETS: Final = (500, 1000, 2000)


def _context_block(
    memory: Memory,
    conversations: Sequence[Conversation],
    scopes: dict[str, Scope],
    dia_of: dict[str, dict[str, str]],
    gold_of: dict[tuple[str, int], list[str]],
) -> dict[str, JsonValue]:
    """For each budget: the share of evidence inside the assembled context, and its size."""
    counter = HeuristicTokenCounter()
    out: dict[str, JsonValue] = {}
    for budget in CONTEXT_BUDGETS:
        fractions: list[float] = []
        complete: list[float] = []
        with_cited: list[float] = []
        tokens: list[float] = []
        for conv in conversations:
            for index, question in enumerate(conv.questions):
                gold = gold_of.get((conv.key, index))
                if not gold:
                    continue
                ctx = memory.context(question.question, scopes[conv.key], budget=budget)
                inside = {dia_of[conv.key].get(i.id) for i in ctx.included}
                cited = inside | {dia_of[conv.key].get(s) for i in ctx.included for s in i.sources}
                found = sum(1 for g in gold if g in inside)
                fractions.append(found / len(gold))
                complete.append(1.0 if found == len(gold) else 0.0)
                with_cited.append(sum(1 for g in gold if g in cited) / len(gold))
                tokens.append(float(ctx.tokens))
        out[str(budget)] = {
            "recall": round(mean(fractions), 4),
            "all": round(mean(complete), 4),
            "recall_cited": round(mean(with_cited), 4),
            "mean_tokens": round(mean(tokens), 1),
        }
    full = [sum(counter.count(t.text) for t in conv.turns) for conv in conversations]
    out["full_conversation_tokens_mean"] = round(mean(float(x) for x in full), 1)
    out["token_counter"] = counter.name
    return out


def _curate(memory: Memory, scopes: Sequence[Scope]) -> dict[str, JsonValue]:
    """Curate each scope offline (rule extraction, then consolidation by rules); what it
    made, in all."""
    from memstrata.curate.extract_rules import RuleExtractor

    facts = bullets = slots = 0
    for scope in scopes:
        facts += len(memory.extract(scope, extractor=RuleExtractor()).stored)
        memory.consolidate(scope, use_llm=False)
        for doc in memory.store.list_documents(scope):
            if doc.kind in (DocumentKind.ESSENTIALS, DocumentKind.TOPIC):
                bullets += len(document_passages(doc))
        profile = memory.profile(scope)
        slots += len(profile.fields) + len(profile.preferences)
    return {"facts": facts, "bullets": bullets, "profile_slots": slots}


def run_locomo(
    memory: Memory,
    path: Path,
    *,
    limit: int | None = None,
    context: bool = True,
    curate: bool = False,
) -> dict[str, JsonValue]:
    batch = importers.load(path, "locomo")
    conversations = batch.conversations[:limit] if limit else batch.conversations
    scopes = {c.key: Scope(f"locomo-{c.key}") for c in conversations}
    loaded = load_conversations(memory, conversations, scopes)
    curated = _curate(memory, list(scopes.values())) if curate else None

    timings = Timings()
    turn_rows: list[tuple[list[str], list[str]]] = []
    session_rows: list[tuple[list[str], list[str]]] = []
    by_category: dict[str, list[tuple[list[str], list[str]]]] = defaultdict(list)
    skipped_questions = malformed = dangling = 0
    total = 0
    dia_by_conv: dict[str, dict[str, str]] = {}
    gold_of: dict[tuple[str, int], list[str]] = {}
    for conv in conversations:
        scope = scopes[conv.key]
        dia_of = {e.id: str(e.metadata.get("dia_id")) for e in loaded.episodes[conv.key]}
        dia_by_conv[conv.key] = dia_of
        known = set(dia_of.values())
        for index, question in enumerate(conv.questions):
            total += 1
            evidence = parse_locomo_evidence(question.evidence)
            malformed += len(evidence.malformed)
            gold = [t for t in evidence.turns if t in known]
            dangling += len(evidence.turns) - len(gold)
            if not gold:
                skipped_questions += 1
                continue
            gold_of[(conv.key, index)] = gold
            found = timed_search(memory, question.question, scope, 10, "turn", timings)
            turn_rows.append(([dia_of[i] for i in found], gold))
            by_category[question.category].append(turn_rows[-1])
            sessions = memory.search(question.question, scope, k=10, granularity="session")
            ranked = [h.session_id.removeprefix("session_") for h in sessions if h.session_id]
            session_rows.append((ranked, sorted({session_of(t) for t in gold}, key=int)))
    result: dict[str, JsonValue] = {
        "benchmark": "locomo",
        "source": str(path),
        "conversations": len(conversations),
        "questions": len(turn_rows),
        "questions_total": total,
        "questions_skipped": skipped_questions,
        "evidence_malformed": malformed,
        "evidence_dangling": dangling,
        "turn": _block(turn_rows),
        "session": _block(session_rows),
        "turn_by_category": {
            c: {"questions": len(rows), **_block(rows)} for c, rows in sorted(by_category.items())
        },
        **loaded.stats(memory),
        **timings.summary(),
    }
    if curated is not None:
        result["curated"] = curated
    if context:
        result["context"] = _context_block(memory, conversations, scopes, dia_by_conv, gold_of)
    return result
