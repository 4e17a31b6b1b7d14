"""What a person browsing memory reads, counted in the database: a user's threads and agents,
a scope's sessions, and the bytes of its stored text (see
:class:`memstrata.ports.SummarizingStore` and :class:`memstrata.ports.SizingStore`), the same
SQL on every engine but for a byte length and a joined sort key (:class:`Dialect`)."""

from __future__ import annotations

from memstrata.codec import parse_time
from memstrata.model import Scope, ScopeSummary, SessionSummary
from memstrata.store.sql.base import SqlBase
from memstrata.store.sql.common import Row, scope_where


class SummaryTables(SqlBase):
    """:meth:`scope_summaries`, :meth:`session_summaries`, :meth:`text_bytes`."""

    def scope_summaries(self, user: str) -> list[ScopeSummary]:
        turns = {
            (r["thread"], r["agent"]): r
            for r in self._read(
                "SELECT thread, agent, COUNT(*) AS n, COUNT(DISTINCT session_id) AS sessions, "
                'MIN(time) AS first, MAX(time) AS last FROM episodes WHERE "user" = ? '
                "GROUP BY thread, agent",
                (user,),
            )
        }
        counts: dict[str, dict[tuple[str, str], int]] = {}
        for table in ("facts", "documents"):
            counts[table] = {
                (r["thread"], r["agent"]): r["n"]
                for r in self._read(
                    f'SELECT thread, agent, COUNT(*) AS n FROM {table} WHERE "user" = ? '
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
            f"MAX(time) AS last, MIN({self.dialect.joined.format('time', 'id')}) AS first_key "
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
        sessions: dict[tuple[str, str, str], list[Row]] = {}
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
                    f"SELECT COALESCE(SUM({self.dialect.byte_length.format('text')}), 0) AS n "
                    f"FROM {table} WHERE {where}",
                    params,
                )[0]["n"]
            )
            for table in ("episodes", "facts")
        }
        rows = self._read(
            f"SELECT kind, SUM({self.dialect.byte_length.format('content')}) AS n FROM documents "
            f"WHERE {where} GROUP BY kind",
            params,
        )
        return {**sizes, **{r["kind"]: int(r["n"]) for r in rows}}
