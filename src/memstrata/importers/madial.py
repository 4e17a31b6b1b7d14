"""MADial-Bench, in the shape of the project's benchmark data (``../shared/data/madial``).

Each sample's sessions are a user's memory archive (dated one-line items); each becomes a
:class:`Turn` keeping ``turn_id`` in its metadata. Each ``qa`` entry is an ongoing dialogue
whose evidence is the archive items (``turn_id`` values) it should bring up.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memstrata.errors import ImportFormatError
from memstrata.importers.base import Conversation, ImportBatch, Question, read_json, require
from memstrata.model import Role, Turn


def _date(value: Any, *, source: str, where: str) -> datetime:
    try:
        return datetime.strptime(str(value), "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise ImportFormatError(
            f"date {value!r} is not YYYY-MM-DD", source=source, where=where
        ) from None


def _sample(raw: Any, index: int, source: str) -> Conversation:
    where = f"sample {index}"
    key = require(raw, "sample_id", str, source=source, where=where)
    where = f"sample {key}"
    turns: list[Turn] = []
    for s, session in enumerate(require(raw, "sessions", list, source=source, where=where)):
        swhere = f"{where} session {s}"
        session_id = require(session, "session_id", str, source=source, where=swhere)
        when = _date(session.get("date", ""), source=source, where=swhere)
        for t, turn in enumerate(require(session, "turns", list, source=source, where=swhere)):
            twhere = f"{swhere} turn {t}"
            text = require(turn, "text", str, source=source, where=twhere)
            turn_id = require(turn, "turn_id", str, source=source, where=twhere)
            if not text.strip():
                raise ImportFormatError("empty archive item", source=source, where=twhere)
            turns.append(
                Turn(
                    text=text,
                    speaker=str(turn.get("speaker", "memory")),
                    role=Role.OTHER,
                    time=when,
                    session_id=session_id,
                    metadata={"turn_id": turn_id},
                )
            )
    questions = []
    for q, item in enumerate(raw.get("qa", [])):
        qwhere = f"{where} qa {q}"
        evidence = require(item, "evidence", list, source=source, where=qwhere)
        questions.append(
            Question(
                question=require(item, "question", str, source=source, where=qwhere),
                answer=str(item.get("answer", "")),
                evidence=tuple(str(e) for e in evidence),
                category=str(item.get("category", "")),
            )
        )
    return Conversation(key=key, turns=tuple(turns), questions=tuple(questions))


def load_madial(path: Path) -> ImportBatch:
    source = str(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise ImportFormatError("expected a list of MADial samples", source=source)
    return ImportBatch(
        source=source,
        format="madial",
        conversations=tuple(_sample(s, i, source) for i, s in enumerate(data)),
    )
