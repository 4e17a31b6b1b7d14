"""Facts: versioned, with their sources and history."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from memstrata import telemetry
from memstrata.codec import fact_to_json, format_time, parse_time
from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.model import (
    Category,
    ChangeOp,
    Fact,
    FactFilter,
    HistoryOp,
    JsonValue,
    Scope,
    When,
)
from memstrata.store.sql.common import (
    FACT_COLUMNS,
    FACT_WIDTH,
    PAGE,
    Row,
    Tx,
    check_limit,
    chunks,
    placeholders,
    row_scope,
    scope_row,
    scope_where,
)
from memstrata.store.sql.episodes import EpisodeTables


def _when(row: Row) -> When | None:
    if row["when_start"] is None:
        return None
    return When(row["when_text"], parse_time(row["when_start"]), parse_time(row["when_end"]))


class FactTables(EpisodeTables):
    """Facts: add, read, update by compare-and-swap, list, delete; and item history rows."""

    def _fact(self, row: Row, sources: tuple[str, ...]) -> Fact:
        return Fact(
            id=row["id"],
            scope=row_scope(row),
            text=row["text"],
            category=Category(row["category"]),
            confidence=row["confidence"],
            importance=row["importance"],
            topic=row["topic"],
            sources=sources,
            valid_from=parse_time(row["valid_from"]),
            valid_to=None if row["valid_to"] is None else parse_time(row["valid_to"]),
            superseded_by=row["superseded_by"],
            created_at=parse_time(row["created_at"]),
            updated_at=parse_time(row["updated_at"]),
            access_count=row["access_count"],
            version=row["version"],
            when=_when(row),
            slot=row["slot"],
            value=row["slot_value"],
        )

    def _facts(self, rows: list[Row]) -> list[Fact]:
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        sources: dict[str, list[str]] = {i: [] for i in ids}
        for chunk in chunks(ids):
            for s in self._read(
                f"SELECT fact_id, episode_id FROM fact_sources WHERE fact_id IN "
                f"({placeholders(len(chunk))}) ORDER BY fact_id, ord",
                chunk,
            ):
                sources[s["fact_id"]].append(s["episode_id"])
        return [self._fact(r, tuple(sources[r["id"]])) for r in rows]

    @staticmethod
    def _fact_values(fact: Fact) -> tuple[Any, ...]:
        """The fact's columns after its id and scope, in :data:`FACT_COLUMNS` order."""
        when = fact.when
        return (
            fact.text,
            fact.category.value,
            fact.confidence,
            fact.importance,
            fact.topic,
            format_time(fact.valid_from),
            None if fact.valid_to is None else format_time(fact.valid_to),
            fact.superseded_by,
            format_time(fact.created_at),
            format_time(fact.updated_at),
            fact.access_count,
            fact.version,
            None if when is None else when.text,
            None if when is None else format_time(when.start),
            None if when is None else format_time(when.end),
            fact.slot,
            fact.value,
        )

    @staticmethod
    def _fact_row(fact: Fact) -> tuple[Any, ...]:
        """The fact's row in :data:`FACT_COLUMNS` order."""
        return (fact.id, *scope_row(fact.scope), *FactTables._fact_values(fact))

    def _check_sources(self, tx: Tx, scope: Scope, fact: Fact) -> None:
        if not fact.sources:
            raise InvalidInputError(f"fact {fact.id} cites no episode")
        where, params = scope_where(fact.scope)
        ids = list(dict.fromkeys(fact.sources))
        rows = tx.execute(
            f"SELECT id FROM episodes WHERE {where} AND id IN ({placeholders(len(ids))})",
            [*params, *ids],
        ).fetchall()
        missing = sorted(set(ids) - {r["id"] for r in rows})
        if missing:
            raise InvalidInputError(
                f"fact {fact.id} cites episodes that do not exist in scope {fact.scope}: "
                + ", ".join(missing)
            )

    def _write_sources(self, tx: Tx, fact: Fact) -> None:
        tx.execute("DELETE FROM fact_sources WHERE fact_id = ?", (fact.id,))
        tx.executemany(
            "INSERT INTO fact_sources (fact_id, episode_id, ord) VALUES (?, ?, ?)",
            [(fact.id, ep, i) for i, ep in enumerate(dict.fromkeys(fact.sources))],
        )

    def _add_history(
        self,
        tx: Tx,
        scope: Scope,
        item_id: str,
        version: int,
        op: HistoryOp,
        reason: str | None,
        data: Mapping[str, JsonValue],
    ) -> None:
        tx.execute(
            'INSERT INTO item_history (item_id, "user", thread, agent, version, op, reason, at, '
            "data) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                item_id,
                *scope_row(scope),
                version,
                op.value,
                reason,
                format_time(self._clock.now()),
                json.dumps(dict(data), ensure_ascii=False),
            ),
        )

    def add_fact(self, scope: Scope, fact: Fact) -> Fact:
        if not scope.contains(fact.scope):
            raise InvalidInputError(f"fact {fact.id} ({fact.scope}) is outside scope {scope}")
        fact = fact.evolve(version=1)
        try:
            with self._write() as tx:
                self._check_sources(tx, scope, fact)
                tx.execute(
                    f"INSERT INTO facts ({FACT_COLUMNS}) VALUES ({placeholders(FACT_WIDTH)})",
                    self._fact_row(fact),
                )
                self._write_sources(tx, fact)
                self._add_history(
                    tx, fact.scope, fact.id, 1, HistoryOp.CREATE, None, fact_to_json(fact)
                )
                self._log(tx, scope.user, [fact.id], ChangeOp.UPSERT)
        except self.dialect.unique_errors as exc:
            raise InvalidInputError(f"fact id {fact.id} is already stored") from exc
        return fact

    def get_fact(self, scope: Scope, fact_id: str) -> Fact:
        where, params = scope_where(scope)
        rows = self._read(
            f"SELECT {FACT_COLUMNS} FROM facts WHERE {where} AND id = ?", [*params, fact_id]
        )
        if not rows:
            raise NotFoundError(f"no fact {fact_id} in scope {scope}")
        return self._facts(rows)[0]

    def get_facts(self, scope: Scope, fact_ids: Sequence[str]) -> list[Fact]:
        where, params = scope_where(scope)
        ids = list(dict.fromkeys(fact_ids))
        rows: list[Row] = []
        for chunk in chunks(ids):
            rows.extend(
                self._read(
                    f"SELECT {FACT_COLUMNS} FROM facts WHERE {where} "
                    f"AND id IN ({placeholders(len(chunk))})",
                    [*params, *chunk],
                )
            )
        rows.sort(key=lambda r: r["id"])
        return self._facts(rows)

    def _stored_version(self, tx: Tx, table: str, scope: Scope, item_id: str) -> int | None:
        where, params = scope_where(scope)
        row = tx.execute(
            f"SELECT version FROM {table} WHERE {where} AND id = ?{self.dialect.for_update}",
            [*params, item_id],
        ).fetchone()
        return None if row is None else int(row["version"])

    def update_fact(
        self, scope: Scope, fact: Fact, *, expected_version: int, op: str = "update"
    ) -> Fact:
        history_op = HistoryOp(op)
        with self._write() as tx:
            stored = self._stored_version(tx, "facts", scope, fact.id)
            if stored is None:
                raise NotFoundError(f"no fact {fact.id} in scope {scope}")
            if stored != expected_version:
                telemetry.record(telemetry.CONFLICT)
                raise ConflictError(fact.id, expected_version, stored)
            stored_fact = self._facts(
                tx.execute(f"SELECT {FACT_COLUMNS} FROM facts WHERE id = ?", (fact.id,)).fetchall()
            )[0]
            # The scope and the creation time of a fact never change.
            fact = fact.evolve(
                scope=stored_fact.scope,
                created_at=stored_fact.created_at,
                version=expected_version + 1,
            )
            if fact.sources != stored_fact.sources:  # a stale citation kept blocks nothing
                self._check_sources(tx, scope, fact)
            tx.execute(
                "UPDATE facts SET text = ?, category = ?, confidence = ?, importance = ?, "
                "topic = ?, valid_from = ?, valid_to = ?, superseded_by = ?, created_at = ?, "
                "updated_at = ?, access_count = ?, version = ?, when_text = ?, when_start = ?, "
                "when_end = ?, slot = ?, slot_value = ? WHERE id = ? AND version = ?",
                (*self._fact_values(fact), fact.id, expected_version),
            )
            self._write_sources(tx, fact)
            self._add_history(
                tx, fact.scope, fact.id, fact.version, history_op, None, fact_to_json(fact)
            )
            self._log(tx, scope.user, [fact.id], ChangeOp.UPSERT)
        return fact

    def list_facts(
        self,
        scope: Scope,
        filters: FactFilter | None = None,
        *,
        after: str | None = None,
        limit: int = 100,
    ) -> list[Fact]:
        where, params = scope_where(scope, "f")
        f = filters or FactFilter()
        conds = [where]
        if f.category is not None:
            conds.append("f.category = ?")
            params.append(f.category.value)
        if f.topic is not None:
            conds.append("f.topic = ?")
            params.append(f.topic)
        if f.current_only:
            conds.append("f.valid_to IS NULL")
        if f.superseded_only:
            conds.append("f.superseded_by IS NOT NULL")
        if f.valid_at is not None:
            at = format_time(f.valid_at)
            conds.append("f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)")
            params.extend([at, at])
        if f.slot is not None:
            conds.append("f.slot = ?")
            params.append(f.slot)
        if f.slot_kind is not None:
            # the kind itself, or the slots from "kind:" up to (not including) "kind;": in
            # the byte order every engine compares these columns in, exactly the slots that
            # start with "kind:". A range, not LIKE: nothing in the kind is a wildcard, the
            # match keeps case on every engine (SQLite's LIKE does not), and the index on
            # (user, slot) serves it.
            conds.append("(f.slot = ? OR (f.slot >= ? AND f.slot < ?))")
            params.extend([f.slot_kind, f"{f.slot_kind}:", f"{f.slot_kind};"])
        if f.source is not None:
            conds.append(
                "EXISTS (SELECT 1 FROM fact_sources s WHERE s.fact_id = f.id AND s.episode_id = ?)"
            )
            params.append(f.source)
        if after is not None:
            conds.append("f.id > ?")
            params.append(after)
        cols = ", ".join(f"f.{c.strip()}" for c in FACT_COLUMNS.split(","))
        rows = self._read(
            f"SELECT {cols} FROM facts f WHERE {' AND '.join(conds)} ORDER BY f.id LIMIT ?",
            [*params, check_limit(limit)],
        )
        return self._facts(rows)

    def iter_facts(
        self, scope: Scope, filters: FactFilter | None = None, *, after: str | None = None
    ) -> Iterator[Fact]:
        while True:
            page = self.list_facts(scope, filters, after=after, limit=PAGE)
            yield from page
            if len(page) < PAGE:
                return
            after = page[-1].id

    def facts_citing(self, scope: Scope, episode_ids: Sequence[str]) -> list[Fact]:
        where, params = scope_where(scope, "f")
        ids = list(dict.fromkeys(episode_ids))
        cols = ", ".join(f"f.{c.strip()}" for c in FACT_COLUMNS.split(","))
        found: dict[str, Row] = {}
        for chunk in chunks(ids):
            for row in self._read(
                f"SELECT DISTINCT {cols} FROM facts f JOIN fact_sources s ON s.fact_id = f.id "
                f"WHERE {where} AND s.episode_id IN ({placeholders(len(chunk))})",
                [*params, *chunk],
            ):
                found[row["id"]] = row
        return self._facts([found[k] for k in sorted(found)])

    def delete_fact(self, scope: Scope, fact_id: str, *, reason: str) -> None:
        with self._write() as tx:
            stored = self._stored_version(tx, "facts", scope, fact_id)
            if stored is None:
                raise NotFoundError(f"no fact {fact_id} in scope {scope}")
            row = tx.execute(
                'SELECT "user", thread, agent FROM facts WHERE id = ?', (fact_id,)
            ).fetchone()
            self._drop_fact(tx, row_scope(row), fact_id, stored, reason)
            self._log(tx, scope.user, [fact_id], ChangeOp.DELETE)

    def _drop_fact(self, tx: Tx, scope: Scope, fact_id: str, stored: int, reason: str) -> None:
        """Delete the fact (at version ``stored``) and its citations; its history is erased."""
        tx.execute("DELETE FROM fact_sources WHERE fact_id = ?", (fact_id,))
        tx.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
        self._forget_history(tx, scope, fact_id, stored + 1, reason)

    def _forget_history(
        self, tx: Tx, scope: Scope, item_id: str, version: int, reason: str
    ) -> None:
        """Erase the item's earlier entries (in its own scope only) and add a delete entry."""
        self._erase_history(tx, scope, item_id)
        self._add_history(tx, scope, item_id, version, HistoryOp.DELETE, reason, {})

    @staticmethod
    def _erase_history(tx: Tx, scope: Scope, item_id: str) -> None:
        """Empty the data of the item's history entries in its own scope."""
        tx.execute(
            "UPDATE item_history SET data = '{}' "
            'WHERE "user" = ? AND thread = ? AND agent = ? AND item_id = ?',
            (*scope_row(scope), item_id),
        )

    @staticmethod
    def _next_history_version(tx: Tx, scope: Scope, item_id: str) -> int:
        row = tx.execute(
            "SELECT MAX(version) AS v FROM item_history "
            'WHERE "user" = ? AND thread = ? AND agent = ? AND item_id = ?',
            (*scope_row(scope), item_id),
        ).fetchone()
        return int(row["v"] or 0) + 1
