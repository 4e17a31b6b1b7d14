"""The embedded record store: one SQLite file in WAL mode.

One connection per store object, shared by threads under a lock; other processes can open
the same file (WAL lets readers run beside one writer; ``busy_timeout`` waits for the lock).
"""

from __future__ import annotations

import sqlite3

from memstrata.codec import parse_time
from memstrata.model import Scope, ScopeSummary, SessionSummary
from memstrata.store.sql.common import scope_where
from memstrata.store.sql.records import RecordTables
from memstrata.store.sqlite.compaction import SqliteCompaction
from memstrata.store.sqlite.erasure import WalErasure


class SqliteStore(RecordTables, WalErasure, SqliteCompaction):
    """:class:`memstrata.ports.RecordStore` on SQLite; also a
    :class:`memstrata.ports.SizingStore`, a :class:`memstrata.ports.SummarizingStore` and a
    :class:`memstrata.store.compaction.Compactable`."""

    def scope_summaries(self, user: str) -> list[ScopeSummary]:
        turns = {
            (r["thread"], r["agent"]): r
            for r in self._read(
                "SELECT thread, agent, COUNT(*) AS n, COUNT(DISTINCT session_id) AS sessions, "
                "MIN(time) AS first, MAX(time) AS last FROM episodes WHERE user = ? "
                "GROUP BY thread, agent",
                (user,),
            )
        }
        counts: dict[str, dict[tuple[str, str], int]] = {}
        for table in ("facts", "documents"):
            counts[table] = {
                (r["thread"], r["agent"]): r["n"]
                for r in self._read(
                    f"SELECT thread, agent, COUNT(*) AS n FROM {table} WHERE user = ? "
                    "GROUP BY thread, agent",
                    (user,),
                )
            }
        out = []
        for thread, agent in {*turns, *counts["facts"], *counts["documents"]}:
            row = turns.get((thread, agent))
            out.append(
                ScopeSummary(
                    thread or None,
                    agent or None,
                    episodes=0 if row is None else row["n"],
                    sessions=0 if row is None else row["sessions"],
                    facts=counts["facts"].get((thread, agent), 0),
                    documents=counts["documents"].get((thread, agent), 0),
                    first_time=None if row is None else parse_time(row["first"]),
                    last_time=None if row is None else parse_time(row["last"]),
                )
            )
        return out

    def session_summaries(self, scope: Scope) -> list[SessionSummary]:
        where, params = scope_where(scope)
        by_surface = self._read(
            "SELECT thread, agent, session_id, surface, COUNT(*) AS n, MIN(time) AS first, "
            "MAX(time) AS last, MIN(time || char(31) || id) AS first_key "
            f"FROM episodes WHERE {where} GROUP BY thread, agent, session_id, surface",
            params,
        )
        speakers: dict[tuple[str, str, str], list[str]] = {}
        for row in self._read(
            f"SELECT DISTINCT thread, agent, session_id, speaker FROM episodes WHERE {where} "
            "AND speaker IS NOT NULL AND speaker != ''",
            params,
        ):
            key = (row["thread"], row["agent"], row["session_id"])
            speakers.setdefault(key, []).append(row["speaker"])
        sessions: dict[tuple[str, str, str], list[sqlite3.Row]] = {}
        for row in by_surface:
            sessions.setdefault((row["thread"], row["agent"], row["session_id"]), []).append(row)
        return [
            SessionSummary(
                session_id=session_id,
                thread=thread or None,
                agent=agent or None,
                first_time=parse_time(min(r["first"] for r in rows)),
                last_time=parse_time(max(r["last"] for r in rows)),
                turns=sum(r["n"] for r in rows),
                speakers=tuple(sorted(speakers.get((thread, agent, session_id), []))),
                surfaces=tuple(r["surface"] for r in sorted(rows, key=lambda r: r["first_key"])),
            )
            for (thread, agent, session_id), rows in sessions.items()
        ]

    def text_bytes(self, scope: Scope) -> dict[str, int]:
        where, params = scope_where(scope)
        sizes = {
            table[:-1]: int(
                self._read(
                    f"SELECT COALESCE(SUM(LENGTH(CAST(text AS BLOB))), 0) AS n "
                    f"FROM {table} WHERE {where}",
                    params,
                )[0]["n"]
            )
            for table in ("episodes", "facts")
        }
        rows = self._read(
            "SELECT kind, SUM(LENGTH(CAST(content AS BLOB))) AS n FROM documents "
            f"WHERE {where} GROUP BY kind",
            params,
        )
        return {**sizes, **{r["kind"]: int(r["n"]) for r in rows}}
