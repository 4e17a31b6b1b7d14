"""Turns a user says, one minute apart in one session, and what the offline rules read of
them: the helpers the extraction tests share."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstrata.curate.extract_rules import RuleExtractor
from memstrata.model import Candidate, Episode, Role, Scope

#: when the first turn is said
SAID_AT = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)


def user_turns(*texts: str, at: datetime = SAID_AT) -> list[Episode]:
    """``texts`` as the user's turns of session s1, a minute apart from ``at``."""
    return [
        Episode(
            id=f"ep_{i}",
            scope=Scope("u"),
            surface="chat",
            session_id="s1",
            speaker="user",
            role=Role.USER,
            text=text,
            time=at + timedelta(minutes=i),
        )
        for i, text in enumerate(texts)
    ]


def candidates(*texts: str) -> tuple[Candidate, ...]:
    """What the rules extract from ``texts`` said as the user's turns."""
    return RuleExtractor().extract(user_turns(*texts)).candidates


def facts(*texts: str) -> list[tuple[str | None, str]]:
    """Each candidate of ``texts`` as its slot and its text."""
    return [(c.slot, c.text) for c in candidates(*texts)]
