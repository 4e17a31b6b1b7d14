"""``memstrata bench qa``: answer LoCoMo questions with a chat model from ``context()``.

Each conversation is stored in a scope of its own (as ``bench locomo`` does). For each question
the memory assembles its ``<memory>`` block within the budget, the configured model answers from
it alone (``llm/prompts/qa_answer.md``), and the answer is scored two ways: token F1 against
the gold answer (SQuAD's normalisation: lowercase, punctuation and articles dropped; Chinese
by character) and an LLM judge (``qa_judge.md``: does it mean the gold answer?), whose share of
correct answers is the field's J score. Tokens in and out of both calls are reported per
question (the reply's ``usage``, else counted offline), with the context's size. Questions
without a gold answer and LoCoMo's adversarial category (5) are skipped and counted, as the
field's J evaluations do. A question the
model could not answer scores 0 and is counted as a failure; one the judge could not grade is
left out of J and counted.
"""

from __future__ import annotations

import re
import string
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from memstrata import importers
from memstrata.api import Memory
from memstrata.bench.metrics import mean
from memstrata.bench.runner import load_conversations
from memstrata.errors import LLMReplyError
from memstrata.llm.metered import MeteredLLM, ask
from memstrata.llm.prompting import data_messages, load_prompt
from memstrata.model import JsonValue, Scope
from memstrata.ports import LLM
from memstrata.util.scripts import HAN

DEFAULT_BUDGET: Final = 1000
#: LoCoMo's category of questions about what never happened (no gold answer to match)
ADVERSARIAL: Final = "5"
_ARTICLES: Final = re.compile(r"\b(a|an|the|and)\b")
_CJK: Final = re.compile(rf"([{HAN}])")
_PUNCTUATION: Final = set(string.punctuation) | set("，。！？；：、“”‘’（）《》【】")


def answer_tokens(text: str) -> list[str]:
    """An answer's tokens for F1: lowercased, punctuation and English articles dropped, a
    Chinese character a token of its own."""
    text = "".join(" " if ch in _PUNCTUATION else ch for ch in text.lower())
    text = _ARTICLES.sub(" ", _CJK.sub(r" \1 ", text))
    return text.split()


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD-style token F1 of an answer against the gold answer."""
    predicted, wanted = answer_tokens(prediction), answer_tokens(gold)
    if not predicted or not wanted:
        return float(predicted == wanted)
    common = sum((Counter(predicted) & Counter(wanted)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def _answer(reply: dict[str, JsonValue]) -> str:
    value = reply.get("answer")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise LLMReplyError("the reply has no 'answer' text")
    return value.strip()


def _verdict(reply: dict[str, JsonValue]) -> bool:
    value = reply.get("correct")
    if not isinstance(value, bool):
        raise LLMReplyError("the reply has no boolean 'correct'")
    return value


def run_qa(
    memory: Memory,
    path: Path,
    llm: LLM,
    *,
    budget: int = DEFAULT_BUDGET,
    limit: int | None = None,
) -> dict[str, JsonValue]:
    """Answer and score the questions of a LoCoMo file (the first ``limit`` with a gold
    answer)."""
    batch = importers.load(path, "locomo")
    chosen: list[tuple[str, int]] = []  # (conversation key, question index)
    skipped = 0
    for conv in batch.conversations:
        for index, question in enumerate(conv.questions):
            if limit is not None and len(chosen) >= limit:
                break  # skipped counts the questions passed over before the limit
            if not question.answer.strip() or question.category == ADVERSARIAL:
                skipped += 1
            else:
                chosen.append((conv.key, index))
    keys = {key for key, _ in chosen}
    conversations = [c for c in batch.conversations if c.key in keys]
    scopes = {c.key: Scope(f"qa-{c.key}") for c in conversations}
    load_conversations(memory, conversations, scopes)
    by_key = {c.key: c for c in conversations}

    metered = MeteredLLM(llm)
    answer_prompt, judge_prompt = load_prompt("qa_answer"), load_prompt("qa_judge")
    failures: list[str] = []
    rows: list[_Row] = []
    for key, index in chosen:
        question = by_key[key].questions[index]
        context = memory.context(question.question, scopes[key], budget=budget)
        where = f"{key} question {index + 1}"
        before = len(metered.calls)
        shown: dict[str, JsonValue] = {"memory": context.text, "question": question.question}
        with metered.step("answer"):
            answered = ask(
                metered,
                data_messages(answer_prompt, shown),
                _answer,
                failures=failures,
                where=f"{where}: answer",
            )
        verdict = None
        if answered is not None:
            graded: dict[str, JsonValue] = {
                "question": question.question,
                "gold": question.answer,
                "answer": answered,
            }
            with metered.step("judge"):
                verdict = ask(
                    metered,
                    data_messages(judge_prompt, graded),
                    _verdict,
                    failures=failures,
                    where=f"{where}: judge",
                )
        calls = metered.calls[before:]
        rows.append(
            _Row(
                key,
                question.question,
                question.category,
                question.answer,
                answered,
                token_f1(answered, question.answer) if answered is not None else 0.0,
                verdict,
                context.tokens,
                sum(c.tokens_in for c in calls),
                sum(c.tokens_out for c in calls),
            )
        )
    categories: dict[str, list[_Row]] = defaultdict(list)
    for row in rows:
        categories[row.category].append(row)
    return {
        "benchmark": "qa",
        "source": str(path),
        "model": metered.name,
        "budget": budget,
        "questions": len(rows),
        "questions_skipped": skipped,
        **_scores(rows),
        "by_category": {
            category: {"questions": len(group), **_scores(group)}
            for category, group in sorted(categories.items())
        },
        "context_tokens_mean": round(mean(float(r.context_tokens) for r in rows), 1),
        "tokens_per_question": {
            "in": round(mean(float(r.tokens_in) for r in rows), 1),
            "out": round(mean(float(r.tokens_out) for r in rows), 1),
        },
        "model_usage": metered.totals(),
        "failures": list(failures),
        "answers": [r.to_json() for r in rows],
    }


@dataclass(frozen=True, slots=True)
class _Row:
    conversation: str
    question: str
    category: str
    gold: str
    answer: str | None
    f1: float
    correct: bool | None
    context_tokens: int
    tokens_in: int
    tokens_out: int

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "conversation": self.conversation,
            "question": self.question,
            "category": self.category,
            "gold": self.gold,
            "answer": self.answer,
            "f1": round(self.f1, 4),
            "correct": self.correct,
            "context_tokens": self.context_tokens,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
        }


def _scores(rows: list[_Row]) -> dict[str, JsonValue]:
    judged = [r.correct for r in rows if r.correct is not None]
    return {
        "f1": round(mean(r.f1 for r in rows), 4),
        "J": round(mean(1.0 if v else 0.0 for v in judged), 4) if judged else None,
        "judged": len(judged),
    }
