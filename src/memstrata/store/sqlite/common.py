"""What the SQLite store's parts share: columns, scope clauses, limits."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from memstrata.errors import InvalidInputError
from memstrata.model import Scope

PAGE: Final = 500
MAX_LIMIT: Final = 10_000
EPISODE_COLUMNS: Final = (
    "id, user, thread, agent, surface, session_id, speaker, role, text, time, metadata, archived"
)
FACT_COLUMNS: Final = (
    "id, user, thread, agent, text, category, confidence, importance, topic, valid_from, "
    "valid_to, superseded_by, created_at, updated_at, access_count, version"
)
DOC_COLUMNS: Final = "id, user, thread, agent, kind, key, content, version, created_at, updated_at"


def scope_where(scope: Scope, alias: str = "") -> tuple[str, list[Any]]:
    """The SQL condition (and its parameters) that confines a query to ``scope``."""
    prefix = f"{alias}." if alias else ""
    sql = [f"{prefix}user = ?"]
    params: list[Any] = [scope.user]
    if scope.thread is not None:
        sql.append(f"{prefix}thread = ?")
        params.append(scope.thread)
    if scope.agent is not None:
        sql.append(f"{prefix}agent = ?")
        params.append(scope.agent)
    return " AND ".join(sql), params


def scope_row(scope: Scope) -> tuple[str, str, str]:
    return scope.user, scope.thread or "", scope.agent or ""


def row_scope(row: sqlite3.Row) -> Scope:
    return Scope(row["user"], row["thread"] or None, row["agent"] or None)


def check_limit(limit: int) -> int:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidInputError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    return limit


def placeholders(n: int) -> str:
    return ",".join("?" * n)


def chunks(ids: Sequence[str]) -> list[list[str]]:
    """``ids`` in runs of at most :data:`PAGE`, each few enough for one ``IN (...)``."""
    return [list(ids[i : i + PAGE]) for i in range(0, len(ids), PAGE)]
