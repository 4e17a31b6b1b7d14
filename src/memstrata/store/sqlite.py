"""The embedded record store: one SQLite file in WAL mode.

One connection per store object, shared by threads under a lock; other processes can open
the same file (WAL lets readers run beside one writer; ``busy_timeout`` waits for the lock).
Every statement that touches records carries the caller's scope (:func:`_scope_where`).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

from memstrata.codec import fact_to_json, format_time, parse_time
from memstrata.errors import (
    ConflictError,
    InvalidInputError,
    MigrationError,
    NotFoundError,
    StoreError,
)
from memstrata.ids import new_id
from memstrata.model import (
    Category,
    Change,
    ChangeOp,
    Document,
    DocumentKind,
    Episode,
    EpisodeFilter,
    Fact,
    FactFilter,
    HistoryOp,
    ItemEvent,
    ItemVersion,
    JsonValue,
    Role,
    Scope,
    Stats,
)
from memstrata.ports import Clock, SystemClock
from memstrata.store.migrations import Migration, pending
from memstrata.store.sqlite_schema import MIGRATIONS

_PAGE: Final = 500
_MAX_LIMIT: Final = 10_000
_EPISODE_COLUMNS: Final = (
    "id, user, thread, agent, surface, session_id, speaker, role, text, time, metadata, archived"
)
_FACT_COLUMNS: Final = (
    "id, user, thread, agent, text, category, confidence, importance, topic, valid_from, "
    "valid_to, superseded_by, created_at, updated_at, access_count, version"
)
_DOC_COLUMNS: Final = "id, user, thread, agent, kind, key, content, version, created_at, updated_at"


def _scope_where(scope: Scope, alias: str = "") -> tuple[str, list[Any]]:
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


def _scope_row(scope: Scope) -> tuple[str, str, str]:
    return scope.user, scope.thread or "", scope.agent or ""


def _row_scope(row: sqlite3.Row) -> Scope:
    return Scope(row["user"], row["thread"] or None, row["agent"] or None)


def _check_limit(limit: int) -> int:
    if not 1 <= limit <= _MAX_LIMIT:
        raise InvalidInputError(f"limit must be between 1 and {_MAX_LIMIT}, got {limit}")
    return limit


def _placeholders(n: int) -> str:
    return ",".join("?" * n)


class SqliteStore:
    """:class:`memstrata.ports.RecordStore` on SQLite."""

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Clock | None = None,
        migrations: tuple[Migration, ...] = MIGRATIONS,
        busy_timeout_ms: int = 10_000,
    ) -> None:
        self.path = Path(path)
        self._clock = clock or SystemClock()
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=busy_timeout_ms / 1000,
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the database {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute("PRAGMA synchronous = NORMAL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            self._migrate(migrations)
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            raise StoreError(f"{self.path} is not a usable memstrata database: {exc}") from exc

    # lifecycle -------------------------------------------------------------------
    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, taken eagerly so concurrent writers queue, not deadlock."""
        with self._lock:
            try:
                self._conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise StoreError(f"cannot start a write on {self.path}: {exc}") from exc
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            try:
                self._conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._conn.execute("ROLLBACK")
                raise StoreError(f"cannot commit to {self.path}: {exc}") from exc

    @staticmethod
    def _log(tx: sqlite3.Connection, user: str, item_ids: Sequence[str], op: ChangeOp) -> None:
        """Append to the change feed, in the transaction that makes the change."""
        tx.executemany(
            "INSERT INTO changes (user, item_id, op) VALUES (?, ?, ?)",
            [(user, item_id, op.value) for item_id in item_ids],
        )

    def generation(self, user: str) -> int:
        rows = self._read("SELECT MAX(seq) AS seq FROM changes WHERE user = ?", (user,))
        return int(rows[0]["seq"] or 0)

    def changes_since(self, user: str, after: int, *, limit: int = 10_000) -> list[Change]:
        rows = self._read(
            "SELECT seq, item_id, op FROM changes WHERE user = ? AND seq > ? ORDER BY seq LIMIT ?",
            (user, after, _check_limit(limit)),
        )
        return [Change(r["seq"], r["item_id"], ChangeOp(r["op"])) for r in rows]

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            try:
                return self._conn.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"read failed on {self.path}: {exc}") from exc

    def _migrate(self, migrations: tuple[Migration, ...]) -> None:
        conn = self._conn
        conn.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations "
            "(name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        applied = {r["name"] for r in conn.execute("SELECT name FROM schema_migrations")}
        for migration in pending(migrations, applied):
            try:
                with self._write() as tx:
                    for statement in migration.statements:
                        tx.execute(statement)
                    tx.execute(
                        "INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)",
                        (migration.name, format_time(self._clock.now())),
                    )
            except (sqlite3.Error, StoreError) as exc:
                raise MigrationError(
                    f"migration {migration.name} failed on {self.path}: {exc}"
                ) from exc

    def applied_migrations(self) -> list[str]:
        return [r["name"] for r in self._read("SELECT name FROM schema_migrations ORDER BY name")]

    # episodes --------------------------------------------------------------------
    @staticmethod
    def _episode(row: sqlite3.Row) -> Episode:
        return Episode(
            id=row["id"],
            scope=_row_scope(row),
            surface=row["surface"],
            session_id=row["session_id"],
            speaker=row["speaker"],
            role=Role(row["role"]),
            text=row["text"],
            time=parse_time(row["time"]),
            metadata=json.loads(row["metadata"]),
            archived=bool(row["archived"]),
        )

    @staticmethod
    def _episode_rows(scope: Scope, episodes: Sequence[Episode]) -> list[tuple[Any, ...]]:
        rows = []
        for ep in episodes:
            if not scope.contains(ep.scope):
                raise InvalidInputError(f"episode {ep.id} ({ep.scope}) is outside scope {scope}")
            try:
                metadata = json.dumps(dict(ep.metadata), ensure_ascii=False)
            except (TypeError, ValueError) as exc:
                raise InvalidInputError(f"episode {ep.id} metadata is not JSON: {exc}") from exc
            rows.append(
                (
                    ep.id,
                    *_scope_row(ep.scope),
                    ep.surface,
                    ep.session_id,
                    ep.speaker,
                    ep.role.value,
                    ep.text,
                    format_time(ep.time),
                    metadata,
                    int(ep.archived),
                )
            )
        return rows

    def add_episodes(self, scope: Scope, episodes: Sequence[Episode]) -> None:
        rows = self._episode_rows(scope, episodes)
        try:
            with self._write() as tx:
                tx.executemany(
                    f"INSERT INTO episodes ({_EPISODE_COLUMNS}) VALUES ({_placeholders(12)})", rows
                )
                self._log(tx, scope.user, [r[0] for r in rows], ChangeOp.UPSERT)
        except sqlite3.IntegrityError as exc:
            raise InvalidInputError(f"an episode id is already stored: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"cannot store episodes: {exc}") from exc

    def get_episode(self, scope: Scope, episode_id: str) -> Episode:
        found = self.get_episodes(scope, [episode_id])
        if not found:
            raise NotFoundError(f"no episode {episode_id} in scope {scope}")
        return found[0]

    def get_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> list[Episode]:
        where, params = _scope_where(scope)
        out: list[Episode] = []
        ids = list(dict.fromkeys(episode_ids))
        for start in range(0, len(ids), _PAGE):
            chunk = ids[start : start + _PAGE]
            rows = self._read(
                f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE {where} "
                f"AND id IN ({_placeholders(len(chunk))}) ORDER BY id",
                [*params, *chunk],
            )
            out.extend(self._episode(r) for r in rows)
        out.sort(key=lambda e: e.id)
        return out

    def list_episodes(
        self,
        scope: Scope,
        filters: EpisodeFilter | None = None,
        *,
        after: str | None = None,
        limit: int = 100,
    ) -> list[Episode]:
        where, params = _scope_where(scope)
        f = filters or EpisodeFilter()
        conds = [where]
        if f.session_id is not None:
            conds.append("session_id = ?")
            params.append(f.session_id)
        if f.speaker is not None:
            conds.append("speaker = ?")
            params.append(f.speaker)
        if f.surface is not None:
            conds.append("surface = ?")
            params.append(f.surface)
        if f.since is not None:
            conds.append("time >= ?")
            params.append(format_time(f.since))
        if f.until is not None:
            conds.append("time < ?")
            params.append(format_time(f.until))
        if not f.include_archived:
            conds.append("archived = 0")
        if after is not None:
            conds.append("id > ?")
            params.append(after)
        rows = self._read(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE {' AND '.join(conds)} "
            "ORDER BY id LIMIT ?",
            [*params, _check_limit(limit)],
        )
        return [self._episode(r) for r in rows]

    def iter_episodes(
        self, scope: Scope, filters: EpisodeFilter | None = None
    ) -> Iterator[Episode]:
        after: str | None = None
        while True:
            page = self.list_episodes(scope, filters, after=after, limit=_PAGE)
            yield from page
            if len(page) < _PAGE:
                return
            after = page[-1].id

    def archive_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> int:
        return self._update_episodes(scope, episode_ids, "UPDATE episodes SET archived = 1")

    def delete_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> int:
        found = [e.id for e in self.get_episodes(scope, episode_ids)]
        if not found:
            return 0
        with self._write() as tx:
            for start in range(0, len(found), _PAGE):
                chunk = found[start : start + _PAGE]
                marks = _placeholders(len(chunk))
                tx.execute(f"DELETE FROM fact_sources WHERE episode_id IN ({marks})", chunk)
                tx.execute(f"DELETE FROM episodes WHERE id IN ({marks})", chunk)
            self._log(tx, scope.user, found, ChangeOp.DELETE)
        return len(found)

    def _update_episodes(self, scope: Scope, episode_ids: Sequence[str], update: str) -> int:
        where, params = _scope_where(scope)
        ids = list(dict.fromkeys(episode_ids))
        changed = 0
        with self._write() as tx:
            for start in range(0, len(ids), _PAGE):
                chunk = ids[start : start + _PAGE]
                cur = tx.execute(
                    f"{update} WHERE {where} AND id IN ({_placeholders(len(chunk))})",
                    [*params, *chunk],
                )
                changed += cur.rowcount
            if changed:
                self._log(tx, scope.user, ids, ChangeOp.UPSERT)
        return changed

    # facts -----------------------------------------------------------------------
    def _fact(self, row: sqlite3.Row, sources: tuple[str, ...]) -> Fact:
        return Fact(
            id=row["id"],
            scope=_row_scope(row),
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
        )

    def _facts(self, rows: list[sqlite3.Row]) -> list[Fact]:
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        sources: dict[str, list[str]] = {i: [] for i in ids}
        for start in range(0, len(ids), _PAGE):
            chunk = ids[start : start + _PAGE]
            for s in self._read(
                f"SELECT fact_id, episode_id FROM fact_sources WHERE fact_id IN "
                f"({_placeholders(len(chunk))}) ORDER BY fact_id, ord",
                chunk,
            ):
                sources[s["fact_id"]].append(s["episode_id"])
        return [self._fact(r, tuple(sources[r["id"]])) for r in rows]

    @staticmethod
    def _fact_values(fact: Fact) -> tuple[Any, ...]:
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
        )

    def _check_sources(self, tx: sqlite3.Connection, scope: Scope, fact: Fact) -> None:
        if not fact.sources:
            raise InvalidInputError(f"fact {fact.id} cites no episode")
        where, params = _scope_where(fact.scope)
        ids = list(dict.fromkeys(fact.sources))
        rows = tx.execute(
            f"SELECT id FROM episodes WHERE {where} AND id IN ({_placeholders(len(ids))})",
            [*params, *ids],
        ).fetchall()
        missing = sorted(set(ids) - {r["id"] for r in rows})
        if missing:
            raise InvalidInputError(
                f"fact {fact.id} cites episodes that do not exist in scope {fact.scope}: "
                + ", ".join(missing)
            )

    def _write_sources(self, tx: sqlite3.Connection, fact: Fact) -> None:
        tx.execute("DELETE FROM fact_sources WHERE fact_id = ?", (fact.id,))
        tx.executemany(
            "INSERT INTO fact_sources (fact_id, episode_id, ord) VALUES (?, ?, ?)",
            [(fact.id, ep, i) for i, ep in enumerate(dict.fromkeys(fact.sources))],
        )

    def _add_history(
        self,
        tx: sqlite3.Connection,
        scope: Scope,
        item_id: str,
        version: int,
        op: HistoryOp,
        reason: str | None,
        data: Mapping[str, JsonValue],
    ) -> None:
        tx.execute(
            "INSERT INTO item_history (item_id, user, thread, agent, version, op, reason, at, data)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                item_id,
                *_scope_row(scope),
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
                    f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({_placeholders(16)})",
                    (fact.id, *_scope_row(fact.scope), *self._fact_values(fact), 1),
                )
                self._write_sources(tx, fact)
                self._add_history(
                    tx, fact.scope, fact.id, 1, HistoryOp.CREATE, None, fact_to_json(fact)
                )
                self._log(tx, scope.user, [fact.id], ChangeOp.UPSERT)
        except sqlite3.IntegrityError as exc:
            raise InvalidInputError(f"fact id {fact.id} is already stored") from exc
        return fact

    def get_fact(self, scope: Scope, fact_id: str) -> Fact:
        where, params = _scope_where(scope)
        rows = self._read(
            f"SELECT {_FACT_COLUMNS} FROM facts WHERE {where} AND id = ?", [*params, fact_id]
        )
        if not rows:
            raise NotFoundError(f"no fact {fact_id} in scope {scope}")
        return self._facts(rows)[0]

    def get_facts(self, scope: Scope, fact_ids: Sequence[str]) -> list[Fact]:
        where, params = _scope_where(scope)
        ids = list(dict.fromkeys(fact_ids))
        rows: list[sqlite3.Row] = []
        for start in range(0, len(ids), _PAGE):
            chunk = ids[start : start + _PAGE]
            rows.extend(
                self._read(
                    f"SELECT {_FACT_COLUMNS} FROM facts WHERE {where} "
                    f"AND id IN ({_placeholders(len(chunk))})",
                    [*params, *chunk],
                )
            )
        rows.sort(key=lambda r: r["id"])
        return self._facts(rows)

    def _stored_version(
        self, tx: sqlite3.Connection, table: str, scope: Scope, item_id: str
    ) -> int | None:
        where, params = _scope_where(scope)
        row = tx.execute(
            f"SELECT version FROM {table} WHERE {where} AND id = ?", [*params, item_id]
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
                raise ConflictError(fact.id, expected_version, stored)
            stored_fact = self._facts(
                tx.execute(f"SELECT {_FACT_COLUMNS} FROM facts WHERE id = ?", (fact.id,)).fetchall()
            )[0]
            # The scope and the creation time of a fact never change.
            fact = fact.evolve(
                scope=stored_fact.scope,
                created_at=stored_fact.created_at,
                version=expected_version + 1,
            )
            self._check_sources(tx, scope, fact)
            tx.execute(
                "UPDATE facts SET text = ?, category = ?, confidence = ?, importance = ?, "
                "topic = ?, valid_from = ?, valid_to = ?, superseded_by = ?, created_at = ?, "
                "updated_at = ?, access_count = ?, version = ? WHERE id = ? AND version = ?",
                (*self._fact_values(fact), fact.version, fact.id, expected_version),
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
        where, params = _scope_where(scope, "f")
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
        if f.valid_at is not None:
            at = format_time(f.valid_at)
            conds.append("f.valid_from <= ? AND (f.valid_to IS NULL OR f.valid_to > ?)")
            params.extend([at, at])
        if f.source is not None:
            conds.append(
                "EXISTS (SELECT 1 FROM fact_sources s WHERE s.fact_id = f.id AND s.episode_id = ?)"
            )
            params.append(f.source)
        if after is not None:
            conds.append("f.id > ?")
            params.append(after)
        cols = ", ".join(f"f.{c.strip()}" for c in _FACT_COLUMNS.split(","))
        rows = self._read(
            f"SELECT {cols} FROM facts f WHERE {' AND '.join(conds)} ORDER BY f.id LIMIT ?",
            [*params, _check_limit(limit)],
        )
        return self._facts(rows)

    def iter_facts(
        self, scope: Scope, filters: FactFilter | None = None, *, after: str | None = None
    ) -> Iterator[Fact]:
        while True:
            page = self.list_facts(scope, filters, after=after, limit=_PAGE)
            yield from page
            if len(page) < _PAGE:
                return
            after = page[-1].id

    def facts_citing(self, scope: Scope, episode_ids: Sequence[str]) -> list[Fact]:
        where, params = _scope_where(scope, "f")
        ids = list(dict.fromkeys(episode_ids))
        cols = ", ".join(f"f.{c.strip()}" for c in _FACT_COLUMNS.split(","))
        found: dict[str, sqlite3.Row] = {}
        for start in range(0, len(ids), _PAGE):
            chunk = ids[start : start + _PAGE]
            for row in self._read(
                f"SELECT DISTINCT {cols} FROM facts f JOIN fact_sources s ON s.fact_id = f.id "
                f"WHERE {where} AND s.episode_id IN ({_placeholders(len(chunk))})",
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
                "SELECT user, thread, agent FROM facts WHERE id = ?", (fact_id,)
            ).fetchone()
            tx.execute("DELETE FROM fact_sources WHERE fact_id = ?", (fact_id,))
            tx.execute("DELETE FROM facts WHERE id = ?", (fact_id,))
            self._forget_history(tx, _row_scope(row), fact_id, stored + 1, reason)
            self._log(tx, scope.user, [fact_id], ChangeOp.DELETE)

    def _forget_history(
        self, tx: sqlite3.Connection, scope: Scope, item_id: str, version: int, reason: str
    ) -> None:
        tx.execute("UPDATE item_history SET data = '{}' WHERE item_id = ?", (item_id,))
        self._add_history(tx, scope, item_id, version, HistoryOp.DELETE, reason, {})

    # documents -------------------------------------------------------------------
    @staticmethod
    def _document(row: sqlite3.Row) -> Document:
        return Document(
            id=row["id"],
            scope=_row_scope(row),
            kind=DocumentKind(row["kind"]),
            key=row["key"],
            content=json.loads(row["content"]),
            version=row["version"],
            created_at=parse_time(row["created_at"]),
            updated_at=parse_time(row["updated_at"]),
        )

    def get_document(self, scope: Scope, kind: DocumentKind, key: str) -> Document | None:
        rows = self._read(
            f"SELECT {_DOC_COLUMNS} FROM documents WHERE user = ? AND thread = ? AND agent = ? "
            "AND kind = ? AND key = ?",
            [*_scope_row(scope), kind.value, key],
        )
        return self._document(rows[0]) if rows else None

    def get_document_by_id(self, scope: Scope, document_id: str) -> Document:
        where, params = _scope_where(scope)
        rows = self._read(
            f"SELECT {_DOC_COLUMNS} FROM documents WHERE {where} AND id = ?", [*params, document_id]
        )
        if not rows:
            raise NotFoundError(f"no document {document_id} in scope {scope}")
        return self._document(rows[0])

    def put_document(
        self,
        scope: Scope,
        kind: DocumentKind,
        key: str,
        content: Mapping[str, JsonValue],
        *,
        expected_version: int,
        item_events: Sequence[ItemEvent] = (),
    ) -> Document:
        if not key or len(key) > 200:
            raise InvalidInputError("a document key must be 1-200 characters")
        try:
            body = json.dumps(dict(content), ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"document content is not JSON: {exc}") from exc
        now = self._clock.now()
        with self._write() as tx:
            row = tx.execute(
                f"SELECT {_DOC_COLUMNS} FROM documents WHERE user = ? AND thread = ? AND agent = ? "
                "AND kind = ? AND key = ?",
                [*_scope_row(scope), kind.value, key],
            ).fetchone()
            stored = None if row is None else int(row["version"])
            if (stored or 0) != expected_version:
                name = row["id"] if row is not None else f"{kind.value}/{key}"
                raise ConflictError(name, expected_version, stored)
            if row is None:
                doc = Document(new_id("doc"), scope, kind, key, dict(content), 1, now, now)
                tx.execute(
                    f"INSERT INTO documents ({_DOC_COLUMNS}) VALUES ({_placeholders(10)})",
                    (
                        doc.id,
                        *_scope_row(scope),
                        kind.value,
                        key,
                        body,
                        1,
                        format_time(now),
                        format_time(now),
                    ),
                )
                op = HistoryOp.CREATE
            else:
                old = self._document(row)
                doc = Document(
                    old.id, scope, kind, key, dict(content), old.version + 1, old.created_at, now
                )
                tx.execute(
                    "UPDATE documents SET content = ?, version = ?, updated_at = ? "
                    "WHERE id = ? AND version = ?",
                    (body, doc.version, format_time(now), doc.id, old.version),
                )
                op = HistoryOp.UPDATE
            self._add_history(
                tx,
                scope,
                doc.id,
                doc.version,
                op,
                None,
                {"doc_kind": kind.value, "key": key, "content": dict(content)},
            )
            for event in item_events:
                if event.op == HistoryOp.DELETE and event.reason == "user-request":
                    # deletion on request erases the item's earlier text, as for facts
                    tx.execute(
                        "UPDATE item_history SET data = '{}' WHERE item_id = ?", (event.item_id,)
                    )
                row = tx.execute(
                    "SELECT MAX(version) AS v FROM item_history WHERE item_id = ?",
                    (event.item_id,),
                ).fetchone()
                version = int(row["v"] or 0) + 1
                self._add_history(
                    tx,
                    scope,
                    event.item_id,
                    version,
                    event.op,
                    event.reason,
                    {"document": doc.id, **dict(event.data)},
                )
            self._log(tx, scope.user, [doc.id], ChangeOp.UPSERT)
        return doc

    def list_documents(self, scope: Scope, kind: DocumentKind | None = None) -> list[Document]:
        where, params = _scope_where(scope)
        if kind is not None:
            where += " AND kind = ?"
            params.append(kind.value)
        rows = self._read(
            f"SELECT {_DOC_COLUMNS} FROM documents WHERE {where} ORDER BY kind, key", params
        )
        return [self._document(r) for r in rows]

    def delete_document(self, scope: Scope, document_id: str, *, reason: str) -> None:
        doc = self.get_document_by_id(scope, document_id)
        with self._write() as tx:
            tx.execute("DELETE FROM documents WHERE id = ?", (doc.id,))
            self._forget_history(tx, doc.scope, doc.id, doc.version + 1, reason)
            self._log(tx, scope.user, [doc.id], ChangeOp.DELETE)

    # history and counts ----------------------------------------------------------
    def history(self, scope: Scope, item_id: str) -> list[ItemVersion]:
        where, params = _scope_where(scope)
        rows = self._read(
            f"SELECT item_id, version, op, reason, at, data FROM item_history "
            f"WHERE {where} AND item_id = ? ORDER BY version",
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
        where, params = _scope_where(scope)
        ep = self._read(
            "SELECT COUNT(*) AS n, COALESCE(SUM(archived), 0) AS archived, "
            "COUNT(DISTINCT thread || char(31) || agent || char(31) || session_id) AS sessions, "
            "COUNT(DISTINCT speaker) AS speakers, "
            f"MIN(time) AS first, MAX(time) AS last FROM episodes WHERE {where}",
            params,
        )[0]
        fa = self._read(
            "SELECT COALESCE(SUM(valid_to IS NULL), 0) AS current, "
            f"COALESCE(SUM(valid_to IS NOT NULL), 0) AS superseded FROM facts WHERE {where}",
            params,
        )[0]
        docs = {
            r["kind"]: r["n"]
            for r in self._read(
                f"SELECT kind, COUNT(*) AS n FROM documents WHERE {where} GROUP BY kind", params
            )
        }
        return Stats(
            scope=scope,
            episodes=ep["n"],
            archived_episodes=ep["archived"],
            sessions=ep["sessions"],
            speakers=ep["speakers"],
            facts_current=fa["current"],
            facts_superseded=fa["superseded"],
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
                where, params = _scope_where(scope)
                for table in ("episodes", "facts", "documents"):
                    if tx.execute(
                        f"SELECT 1 FROM {table} WHERE {where} LIMIT 1", params
                    ).fetchone():
                        raise InvalidInputError(
                            f"scope {scope} already holds {table}; restore needs an empty scope"
                        )
                tx.executemany(
                    f"INSERT INTO episodes ({_EPISODE_COLUMNS}) VALUES ({_placeholders(12)})",
                    episode_rows,
                )
                for fact in facts:
                    self._check_sources(tx, scope, fact)
                    tx.execute(
                        f"INSERT INTO facts ({_FACT_COLUMNS}) VALUES ({_placeholders(16)})",
                        (fact.id, *_scope_row(fact.scope), *self._fact_values(fact), fact.version),
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
                        f"INSERT INTO documents ({_DOC_COLUMNS}) VALUES ({_placeholders(10)})",
                        (
                            doc.id,
                            *_scope_row(doc.scope),
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
        except sqlite3.IntegrityError as exc:
            raise InvalidInputError(f"cannot restore: an id is already stored ({exc})") from exc

    def users(self) -> list[str]:
        rows = self._read(
            "SELECT user FROM episodes UNION SELECT user FROM facts "
            "UNION SELECT user FROM documents ORDER BY user"
        )
        return [r["user"] for r in rows]
