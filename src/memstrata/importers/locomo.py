"""LoCoMo (Maharana et al., ACL 2024), the single-file format of the authors' release.

Each sample becomes a :class:`Conversation` keyed by ``sample_id``; each ``session_N`` turn a
:class:`Turn` whose session id is ``session_N``, whose time is the session's date, and whose
metadata keeps ``dia_id`` and any shared image (``img_url``, ``blip_caption``).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from memstrata.errors import ImportFormatError
from memstrata.importers.base import Conversation, ImportBatch, Question, read_json, require
from memstrata.model import JsonValue, Role, Turn

_SESSION_KEY_RE: Final = re.compile(r"^session_(\d+)$")
_DATE_FORMATS: Final = ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M%p on %d %B, %Y")


def parse_locomo_date(value: str) -> datetime | None:
    """Parse ``'1:56 pm on 8 May, 2023'``; None when the text has another shape."""
    text = " ".join(value.strip().split())
    for fmt in _DATE_FORMATS:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def _turn(raw: Any, *, session_key: str, when: datetime, source: str, where: str) -> Turn:
    speaker = require(raw, "speaker", str, source=source, where=where)
    text = require(raw, "text", str, source=source, where=where)
    dia_id = require(raw, "dia_id", str, source=source, where=where)
    metadata: dict[str, JsonValue] = {"dia_id": dia_id}
    for extra in ("img_url", "blip_caption", "query"):
        if extra in raw:
            metadata[extra] = raw[extra]
    if not text.strip():
        if "blip_caption" not in raw:
            raise ImportFormatError("turn has no text", source=source, where=where)
        text = f"[shares an image: {raw['blip_caption']}]"
    return Turn(
        text=text,
        speaker=speaker,
        role=Role.USER,
        time=when,
        session_id=session_key,
        metadata=metadata,
    )


def _conversation(sample: Any, index: int, source: str) -> Conversation:
    where = f"sample {index}"
    key = require(sample, "sample_id", str, source=source, where=where)
    where = f"sample {key}"
    conv = require(sample, "conversation", dict, source=source, where=where)
    sessions = sorted((int(m.group(1)), k) for k in conv if (m := _SESSION_KEY_RE.match(k)))
    if not sessions:
        raise ImportFormatError("conversation has no session_N lists", source=source, where=where)
    turns: list[Turn] = []
    for _, session_key in sessions:
        raw_date = conv.get(f"{session_key}_date_time")
        when = parse_locomo_date(raw_date) if isinstance(raw_date, str) else None
        if when is None:
            raise ImportFormatError(
                f"{session_key}_date_time is missing or not like '1:56 pm on 8 May, 2023': "
                f"{raw_date!r}",
                source=source,
                where=where,
            )
        raw_turns = conv[session_key]
        if not isinstance(raw_turns, list):
            raise ImportFormatError(f"{session_key} should be a list", source=source, where=where)
        for t, raw in enumerate(raw_turns):
            turns.append(
                _turn(
                    raw,
                    session_key=session_key,
                    when=when,
                    source=source,
                    where=f"{where} {session_key} turn {t}",
                )
            )
    questions = []
    for q, raw in enumerate(sample.get("qa", [])):
        qwhere = f"{where} qa {q}"
        question = require(raw, "question", str, source=source, where=qwhere)
        answer = raw.get("answer", raw.get("adversarial_answer", ""))
        evidence = raw.get("evidence", [])
        if not isinstance(evidence, list):
            raise ImportFormatError("evidence should be a list", source=source, where=qwhere)
        questions.append(
            Question(
                question=question,
                answer=str(answer),
                evidence=tuple(str(e) for e in evidence),
                category=str(raw.get("category", "")),
            )
        )
    speakers = {k: conv[k] for k in ("speaker_a", "speaker_b") if isinstance(conv.get(k), str)}
    return Conversation(key=key, turns=tuple(turns), questions=tuple(questions), metadata=speakers)


def load_locomo(path: Path) -> ImportBatch:
    source = str(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise ImportFormatError("expected a list of LoCoMo samples", source=source)
    conversations = tuple(_conversation(s, i, source) for i, s in enumerate(data))
    return ImportBatch(source=source, format="locomo", conversations=conversations)
