"""Every table family of the record store together, with history, counts and restore.

Every statement that touches records carries the caller's scope (:func:`scope_where`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from memstrata.codec import fact_to_json, format_time, parse_time
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.model import ChangeOp, Document, Episode, Fact, HistoryOp, ItemVersion, Scope, Stats
from memstrata.store.sql.common import (
    DOC_COLUMNS,
    EPISODE_COLUMNS,
    FACT_COLUMNS,
    FACT_WIDTH,
    placeholders,
    scope_row,
    scope_where,
)
from memstrata.store.sql.copying import CopyTables
from memstrata.store.sql.erasures import ErasureTables
from memstrata.store.sql.keys import KeyTables
from memstrata.store.sql.summaries import SummaryTables


class RecordTables(ErasureTables, KeyTables, CopyTables, SummaryTables):
    """:class:`memstrata.ports.RecordStore` over any SQL connection (see :class:`SqlBase`)."""

    def history(self, scope: Scope, item_id: str) -> list[ItemVersion]:
        where, params = scope_where(scope)
        rows = self._read(
            f"SELECT item_id, version, op, reason, at, data FROM item_history "
            f"WHERE {where} AND item_id = ? ORDER BY version, thread, agent",
            [*params, item_id],
        )
        if not rows:
            raise NotFoundError(f"no history for {item_id} in scope {scope}")
        return [
            ItemVersion(
                item_id=r["item_id"],
                version=r["version"],
                op=HistoryOp(r["op"]),
                at=parse_time(r["at"]),
                reason=r["reason"],
                data=json.loads(r["data"]),
            )
            for r in rows
        ]

    def stats(self, scope: Scope) -> Stats:
        where, params = scope_where(scope)
        ep = self._read(
            "SELECT COUNT(*) AS n, COALESCE(SUM(archived), 0) AS archived, "
            "COUNT(DISTINCT speaker) AS speakers, "
            f"MIN(time) AS first, MAX(time) AS last FROM episodes WHERE {where}",
            params,
        )[0]
        sessions = self._read(
            "SELECT COUNT(*) AS n FROM (SELECT DISTINCT thread, agent, session_id "
            f"FROM episodes WHERE {where}) s",
            params,
        )[0]["n"]
        fa = self._read(
            "SELECT COALESCE(SUM(CASE WHEN valid_to IS NULL THEN 1 ELSE 0 END), 0) AS current, "
            "COALESCE(SUM(CASE WHEN valid_to IS NULL THEN 0 ELSE 1 END), 0) AS superseded "
            f"FROM facts WHERE {where}",
            params,
        )[0]
        docs = {
            r["kind"]: int(r["n"])
            for r in self._read(
                f"SELECT kind, COUNT(*) AS n FROM documents WHERE {where} GROUP BY kind", params
            )
        }
        return Stats(
            scope=scope,
            episodes=int(ep["n"]),
            archived_episodes=int(ep["archived"]),
            sessions=int(sessions),
            speakers=int(ep["speakers"]),
            facts_current=int(fa["current"]),
            facts_superseded=int(fa["superseded"]),
            documents=docs,
            first_time=None if ep["first"] is None else parse_time(ep["first"]),
            last_time=None if ep["last"] is None else parse_time(ep["last"]),
        )

    def restore(
        self,
        scope: Scope,
        episodes: Sequence[Episode],
        facts: Sequence[Fact],
        documents: Sequence[Document],
    ) -> None:
        records: list[Fact | Document] = [*facts, *documents]
        for record in records:
            if not scope.contains(record.scope):
                raise InvalidInputError(f"{record.id} ({record.scope}) is outside scope {scope}")
        episode_rows = self._episode_rows(scope, episodes)
        try:
            with self._write() as tx:
                where, params = scope_where(scope)
                for table in ("episodes", "facts", "documents"):
                    if tx.execute(
                        f"SELECT 1 FROM {table} WHERE {where} LIMIT 1", params
                    ).fetchone():
                        raise InvalidInputError(
                            f"scope {scope} already holds {table}; restore needs an empty scope"
                        )
                tx.executemany(
                    f"INSERT INTO episodes ({EPISODE_COLUMNS}) VALUES ({placeholders(12)})",
                    episode_rows,
                )
                for fact in facts:
                    self._check_sources(tx, scope, fact)
                    tx.execute(
                        f"INSERT INTO facts ({FACT_COLUMNS}) VALUES ({placeholders(FACT_WIDTH)})",
                        self._fact_row(fact),
                    )
                    self._write_sources(tx, fact)
                    self._add_history(
                        tx,
                        fact.scope,
                        fact.id,
                        fact.version,
                        HistoryOp.CREATE,
                        "restored",
                        fact_to_json(fact),
                    )
                for doc in documents:
                    tx.execute(
                        f"INSERT INTO documents ({DOC_COLUMNS}) VALUES ({placeholders(10)})",
                        (
                            doc.id,
                            *scope_row(doc.scope),
                            doc.kind.value,
                            doc.key,
                            json.dumps(dict(doc.content), ensure_ascii=False),
                            doc.version,
                            format_time(doc.created_at),
                            format_time(doc.updated_at),
                        ),
                    )
                    self._add_history(
                        tx,
                        doc.scope,
                        doc.id,
                        doc.version,
                        HistoryOp.CREATE,
                        "restored",
                        {"doc_kind": doc.kind.value, "key": doc.key, "content": dict(doc.content)},
                    )
                ids = [r[0] for r in episode_rows] + [f.id for f in facts]
                self._log(tx, scope.user, ids + [d.id for d in documents], ChangeOp.UPSERT)
        except self.dialect.unique_errors as exc:
            raise InvalidInputError(
                "cannot restore: ids in the export are already used in this store (these "
                "records were stored here before, and their history remains); restore into "
                "another user (--user) to give every record a new id"
            ) from exc

    def record_counts(self) -> dict[str, int]:
        ep = self._read(
            "SELECT COUNT(*) AS n, COALESCE(SUM(archived), 0) AS archived FROM episodes"
        )[0]
        fa = self._read(
            "SELECT COALESCE(SUM(CASE WHEN valid_to IS NULL THEN 1 ELSE 0 END), 0) AS current, "
            "COALESCE(SUM(CASE WHEN valid_to IS NULL THEN 0 ELSE 1 END), 0) AS superseded "
            "FROM facts"
        )[0]
        docs = self._read("SELECT kind, COUNT(*) AS n FROM documents GROUP BY kind")
        return {
            "episode": int(ep["n"]) - int(ep["archived"]),
            "archived_episode": int(ep["archived"]),
            "fact": int(fa["current"]),
            "superseded_fact": int(fa["superseded"]),
            **{r["kind"]: int(r["n"]) for r in docs},
        }

    def users(self) -> list[str]:
        rows = self._read(
            'SELECT "user" FROM episodes UNION SELECT "user" FROM facts '
            'UNION SELECT "user" FROM documents ORDER BY "user"'
        )
        return [r["user"] for r in rows]
