"""LongMemEval (Wu et al., ICLR 2025): its haystack schema.

Each instance is its own haystack and becomes a :class:`Conversation` keyed by
``question_id``: every ``haystack_sessions[i]`` turn becomes a :class:`Turn` with session id
``haystack_session_ids[i]`` and the time ``haystack_dates[i]``. ``has_answer`` is kept in the
metadata. The instance's question has ``answer_session_ids`` as its evidence.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata.errors import ImportFormatError
from memstrata.importers.base import Conversation, ImportBatch, Question, read_json, require
from memstrata.model import JsonValue, Role, Turn

_ROLES = {"user": Role.USER, "assistant": Role.ASSISTANT, "system": Role.SYSTEM}


def parse_lme_date(value: str) -> datetime | None:
    """Parse ``'2023/05/20 (Sat) 02:21'`` (the weekday is optional); None otherwise."""
    parts = value.split()
    text = " ".join(p for p in parts if not (p.startswith("(") and p.endswith(")")))
    for fmt in ("%Y/%m/%d %H:%M", "%Y/%m/%d"):
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _instance(raw: Any, index: int, source: str) -> Conversation:
    where = f"instance {index}"
    qid = require(raw, "question_id", str, source=source, where=where)
    where = f"instance {qid}"
    session_ids = require(raw, "haystack_session_ids", list, source=source, where=where)
    dates = require(raw, "haystack_dates", list, source=source, where=where)
    sessions = require(raw, "haystack_sessions", list, source=source, where=where)
    if not len(session_ids) == len(dates) == len(sessions):
        raise ImportFormatError(
            f"haystack_session_ids ({len(session_ids)}), haystack_dates ({len(dates)}) and "
            f"haystack_sessions ({len(sessions)}) differ in length",
            source=source,
            where=where,
        )
    turns: list[Turn] = []
    for sid, date, session in zip(session_ids, dates, sessions, strict=True):
        swhere = f"{where} session {sid}"
        when = parse_lme_date(date) if isinstance(date, str) else None
        if when is None:
            raise ImportFormatError(
                f"date {date!r} is not like '2023/05/20 (Sat) 02:21'", source=source, where=swhere
            )
        if not isinstance(session, list):
            raise ImportFormatError(
                "a haystack session should be a list of turns", source=source, where=swhere
            )
        for t, turn in enumerate(session):
            twhere = f"{swhere} turn {t}"
            role = require(turn, "role", str, source=source, where=twhere)
            content = require(turn, "content", str, source=source, where=twhere)
            if role not in _ROLES:
                raise ImportFormatError(f"unknown role {role!r}", source=source, where=twhere)
            if not content.strip():
                continue  # the published haystacks contain a few empty turns; nothing to keep
            metadata: dict[str, JsonValue] = {"turn_index": t}
            if turn.get("has_answer"):
                metadata["has_answer"] = True
            turns.append(
                Turn(
                    text=content,
                    speaker=role,
                    role=_ROLES[role],
                    time=when,
                    session_id=str(sid),
                    metadata=metadata,
                )
            )
    question = Question(
        question=require(raw, "question", str, source=source, where=where),
        answer=str(raw.get("answer", "")),
        evidence=tuple(str(s) for s in raw.get("answer_session_ids", [])),
        category=str(raw.get("question_type", "")),
        metadata={
            "question_id": qid,
            "question_date": raw.get("question_date"),
            "abstention": qid.endswith("_abs"),
        },
    )
    return Conversation(key=qid, turns=tuple(turns), questions=(question,))


def load_longmemeval(path: Path) -> ImportBatch:
    source = str(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise ImportFormatError("expected a list of LongMemEval instances", source=source)
    conversations = tuple(_instance(r, i, source) for i, r in enumerate(data))
    return ImportBatch(source=source, format="longmemeval", conversations=conversations)
