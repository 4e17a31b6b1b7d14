"""What differs between the SQL engines the record store runs on, in one small object.

The shared SQL (see :mod:`memstrata.store.sql.common`) needs only a few things to differ:
how a row is locked for a compare-and-swap, how an insert skips a duplicate, which driver
errors mean a unique key was violated, and how the change feed is kept in commit order.
Each store gives its :class:`Dialect`; a server store's connection also rewrites ``?``
placeholders for its driver (:func:`to_format_style`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

_QMARK = re.compile(r"\?")


@dataclass(frozen=True, slots=True)
class Dialect:
    name: str
    #: appended to a ``SELECT`` whose rows a compare-and-swap is about to change: ``""`` where
    #: a write transaction already excludes every other writer (SQLite)
    for_update: str
    #: driver errors that mean a unique key (or primary key) was violated
    unique_errors: tuple[type[Exception], ...]
    #: an ``INSERT INTO ...`` statement rewritten to skip rows whose key is already stored
    ignore_duplicates: Callable[[str], str]
    #: a statement (one ``?``: the user) that locks the user's change feed until commit, so
    #: that feed entries become visible in ``seq`` order; None where writers are serialized
    lock_feed: str | None = None
    #: the length in bytes of a text column (``{}``: the column)
    byte_length: str = "OCTET_LENGTH({})"
    #: two texts joined by the unit separator (U+001F), to order rows by both at once
    joined: str = "{} || chr(31) || {}"


def sqlite_ignore(sql: str) -> str:
    return sql.replace("INSERT INTO", "INSERT OR IGNORE INTO", 1)


def postgres_ignore(sql: str) -> str:
    return f"{sql} ON CONFLICT DO NOTHING"


def mysql_ignore(sql: str) -> str:
    return sql.replace("INSERT INTO", "INSERT IGNORE INTO", 1)


@lru_cache(maxsize=2048)
def to_format_style(sql: str) -> str:
    """``sql`` with ``?`` placeholders as ``%s`` (and a literal ``%`` doubled), for drivers
    of the ``format`` parameter style (psycopg, PyMySQL). The shared SQL never holds a ``?``
    inside a string literal."""
    return _QMARK.sub("%s", sql.replace("%", "%%"))
