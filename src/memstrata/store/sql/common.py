"""What the SQL stores' parts share: columns, scope clauses, limits, the transaction type.

SQL here is written once, in the subset SQLite, PostgreSQL and MySQL (in ANSI mode) share:
``?`` placeholders (a server store's connection rewrites them for its driver), the column
names ``"user"`` and ``"key"`` quoted (reserved words in PostgreSQL and MySQL), no
dialect-only functions.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Final, Protocol, TypeAlias

from memstrata.errors import InvalidInputError
from memstrata.model import Scope

#: a row as every driver gives it: its columns by name (``row["id"]``)
Row: TypeAlias = Any


class Cursor(Protocol):
    """What a statement returns: rows to fetch, and how many rows it changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> Any: ...

    def __iter__(self) -> Iterator[Any]: ...


class Tx(Protocol):
    """One open transaction: :class:`sqlite3.Connection`, or a server store's connection
    (which rewrites ``?`` placeholders for its driver)."""

    def execute(self, sql: str, parameters: Any = (), /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Any, /) -> Cursor: ...


PAGE: Final = 500
MAX_LIMIT: Final = 10_000
EPISODE_COLUMNS: Final = (
    'id, "user", thread, agent, surface, session_id, speaker, role, text, time, metadata, archived'
)
FACT_COLUMNS: Final = (
    'id, "user", thread, agent, text, category, confidence, importance, topic, valid_from, '
    "valid_to, superseded_by, created_at, updated_at, access_count, version, when_text, "
    "when_start, when_end, slot, slot_value"
)
#: how many columns :data:`FACT_COLUMNS` names
FACT_WIDTH: Final = 21
DOC_COLUMNS: Final = (
    'id, "user", thread, agent, kind, "key", content, version, created_at, updated_at'
)


def scope_where(scope: Scope, alias: str = "") -> tuple[str, list[Any]]:
    """The SQL condition (and its parameters) that confines a query to ``scope``."""
    prefix = f"{alias}." if alias else ""
    sql = [f'{prefix}"user" = ?']
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


def row_scope(row: Row) -> Scope:
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
