"""Episodes: verbatim turns, archived or deleted, never edited."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from memstrata.codec import format_time, parse_time
from memstrata.errors import InvalidInputError, NotFoundError
from memstrata.model import ChangeOp, Episode, EpisodeFilter, Role, Scope
from memstrata.store.sql.base import SqlBase
from memstrata.store.sql.common import (
    EPISODE_COLUMNS,
    PAGE,
    Row,
    check_limit,
    chunks,
    placeholders,
    row_scope,
    scope_row,
    scope_where,
)


class EpisodeTables(SqlBase):
    """Episodes: add, read, list, archive, delete."""

    @staticmethod
    def _episode(row: Row) -> Episode:
        return Episode(
            id=row["id"],
            scope=row_scope(row),
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
                    *scope_row(ep.scope),
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
                    f"INSERT INTO episodes ({EPISODE_COLUMNS}) VALUES ({placeholders(12)})", rows
                )
                self._log(tx, scope.user, [r[0] for r in rows], ChangeOp.UPSERT)
        except self.dialect.unique_errors as exc:
            raise InvalidInputError(f"an episode id is already stored: {exc}") from exc

    def get_episode(self, scope: Scope, episode_id: str) -> Episode:
        found = self.get_episodes(scope, [episode_id])
        if not found:
            raise NotFoundError(f"no episode {episode_id} in scope {scope}")
        return found[0]

    def get_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> list[Episode]:
        where, params = scope_where(scope)
        out: list[Episode] = []
        ids = list(dict.fromkeys(episode_ids))
        for chunk in chunks(ids):
            rows = self._read(
                f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {where} "
                f"AND id IN ({placeholders(len(chunk))}) ORDER BY id",
                [*params, *chunk],
            )
            out.extend(self._episode(r) for r in rows)
        out.sort(key=lambda e: e.id)
        return out

    def existing_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> set[str]:
        where, params = scope_where(scope)
        found: set[str] = set()
        for chunk in chunks(list(dict.fromkeys(episode_ids))):
            rows = self._read(
                f"SELECT id FROM episodes WHERE {where} AND id IN ({placeholders(len(chunk))})",
                [*params, *chunk],
            )
            found.update(r["id"] for r in rows)
        return found

    def list_episodes(
        self,
        scope: Scope,
        filters: EpisodeFilter | None = None,
        *,
        after: str | None = None,
        limit: int = 100,
    ) -> list[Episode]:
        where, params = scope_where(scope)
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
            f"SELECT {EPISODE_COLUMNS} FROM episodes WHERE {' AND '.join(conds)} "
            "ORDER BY id LIMIT ?",
            [*params, check_limit(limit)],
        )
        return [self._episode(r) for r in rows]

    def iter_episodes(
        self, scope: Scope, filters: EpisodeFilter | None = None
    ) -> Iterator[Episode]:
        after: str | None = None
        while True:
            page = self.list_episodes(scope, filters, after=after, limit=PAGE)
            yield from page
            if len(page) < PAGE:
                return
            after = page[-1].id

    def archive_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> int:
        return self._update_episodes(scope, episode_ids, "UPDATE episodes SET archived = 1")

    def delete_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> int:
        found = [e.id for e in self.get_episodes(scope, episode_ids)]
        if not found:
            return 0
        with self._write() as tx:
            for chunk in chunks(found):
                marks = placeholders(len(chunk))
                tx.execute(f"DELETE FROM fact_sources WHERE episode_id IN ({marks})", chunk)
                tx.execute(f"DELETE FROM episodes WHERE id IN ({marks})", chunk)
            self._log(tx, scope.user, found, ChangeOp.DELETE)
        return len(found)

    def _update_episodes(self, scope: Scope, episode_ids: Sequence[str], update: str) -> int:
        where, params = scope_where(scope)
        ids = list(dict.fromkeys(episode_ids))
        changed = 0
        with self._write() as tx:
            for chunk in chunks(ids):
                cur = tx.execute(
                    f"{update} WHERE {where} AND id IN ({placeholders(len(chunk))})",
                    [*params, *chunk],
                )
                changed += cur.rowcount
            if changed:
                self._log(tx, scope.user, ids, ChangeOp.UPSERT)
        return changed
