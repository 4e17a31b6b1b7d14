"""Deletion on request: one transaction for every record an erasure changes, and
the journal entry that says which copies outside the store are still to be erased."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from memstrata import telemetry
from memstrata.codec import fact_to_json, format_time, parse_time
from memstrata.errors import ConflictError, InvalidInputError, NotFoundError
from memstrata.ids import new_id
from memstrata.model import (
    ChangeOp,
    DeleteReason,
    DocumentWrite,
    Erasure,
    ErasureRecord,
    Fact,
    HistoryOp,
    Scope,
    Site,
)
from memstrata.ports import SITE_CLOCK_MARGIN, SITE_WAIT
from memstrata.store.sql.common import (
    DOC_COLUMNS,
    Row,
    Tx,
    chunks,
    placeholders,
    row_scope,
    scope_row,
    scope_where,
)
from memstrata.store.sql.documents import DocumentTables

_JOURNAL_START = format_time(datetime(1970, 1, 1, tzinfo=UTC))  # before every entry
_ERASURE_COLUMNS = 'id, "user", thread, agent, target, reason, at, episode_ids, texts, report, done'


class _RolledBack(Exception):  # a control signal, never seen outside this module
    """Ends a dry run's transaction (rolled back) with the record it would have journalled."""

    def __init__(self, record: ErasureRecord) -> None:
        super().__init__(record.target)
        self.record = record


class ErasureTables(DocumentTables):
    """:meth:`erase` and the erasure journal."""

    def erase(self, scope: Scope, erasure: Erasure, *, dry_run: bool = False) -> ErasureRecord:
        try:
            return self._erase(scope, erasure, dry_run=dry_run)
        except _RolledBack as rolled_back:
            return rolled_back.record

    def _erase(self, scope: Scope, erasure: Erasure, *, dry_run: bool) -> ErasureRecord:
        now = self._clock.now()
        counts: Counter[str] = Counter()
        with self._write() as tx:
            self._check_document_versions(tx, scope, erasure)
            where, params = scope_where(scope)
            episode_ids = self._existing(tx, "episodes", scope, erasure.episode_ids)
            fact_ids = self._existing(tx, "facts", scope, erasure.fact_ids)
            document_ids = self._existing(tx, "documents", scope, erasure.document_ids)
            if erasure.whole_scope:
                for table, ids in (
                    ("episodes", episode_ids),
                    ("facts", fact_ids),
                    ("documents", document_ids),
                ):
                    named = set(ids)
                    rows = tx.execute(f"SELECT id FROM {table} WHERE {where}", params)
                    ids.extend(r["id"] for r in rows if r["id"] not in named)
            texts = list(erasure.texts)
            for chunk in chunks(episode_ids):
                marks = placeholders(len(chunk))
                rows = tx.execute(f"SELECT text FROM episodes WHERE id IN ({marks})", chunk)
                texts.extend(r["text"] for r in rows)
                tx.execute(f"DELETE FROM settled_episodes WHERE episode_id IN ({marks})", chunk)
            gone = set(episode_ids)
            tx.executemany(
                self.dialect.ignore_duplicates(
                    'INSERT INTO settled_episodes ("user", episode_id) VALUES (?, ?)'
                ),
                [(scope.user, e) for e in dict.fromkeys(erasure.settled) if e not in gone],
            )
            texts.extend(self._delete_facts(tx, fact_ids, erasure.reason))
            cascaded, cascade_texts = self._erase_episodes(tx, scope, episode_ids, erasure)
            texts.extend(cascade_texts)
            for document_id in document_ids:
                row = tx.execute(
                    'SELECT "user", thread, agent, version FROM documents WHERE id = ?',
                    (document_id,),
                ).fetchone()
                tx.execute("DELETE FROM documents WHERE id = ?", (document_id,))
                self._forget_history(
                    tx, row_scope(row), document_id, row["version"] + 1, erasure.reason
                )
            for write in erasure.documents:
                cascaded.extend(self._rewrite_document(tx, scope, write))
            for rewrite in erasure.history:
                cur = tx.execute(
                    'UPDATE item_history SET data = ? WHERE "user" = ? AND thread = ? '
                    "AND agent = ? AND item_id = ? AND version = ?",
                    (
                        json.dumps(dict(rewrite.data), ensure_ascii=False),
                        *scope_row(rewrite.scope),
                        rewrite.item_id,
                        rewrite.version,
                    ),
                )
                counts["history"] += cur.rowcount
            if erasure.whole_scope:
                cur = tx.execute(f"DELETE FROM item_history WHERE {where}", params)
                counts["history"] += cur.rowcount
            counts["episodes"] = len(episode_ids)
            counts["facts"] = len(fact_ids) + sum(c.startswith("fa_") for c in cascaded)
            counts["documents"] = len(document_ids)
            counts["bullets"] = sum(c.startswith("m_") for c in cascaded)
            record = ErasureRecord(
                id=new_id("er"),
                scope=scope,
                target=erasure.target,
                reason=erasure.reason,
                at=now,
                episode_ids=tuple(episode_ids),
                texts=tuple(dict.fromkeys(t for t in texts if t)),
                deleted=(*fact_ids, *document_ids, *episode_ids),
                cascaded=tuple(cascaded),
                counts=dict(counts),
            )
            if dry_run:  # the same transaction, rolled back: what it would do, nothing done
                raise _RolledBack(record)
            self._journal(tx, record)
            self._log(tx, scope.user, [*episode_ids, *fact_ids, *document_ids], ChangeOp.DELETE)
        return record

    def _check_document_versions(self, tx: Tx, scope: Scope, erasure: Erasure) -> None:
        for write in erasure.documents:
            row = tx.execute(
                'SELECT version FROM documents WHERE "user" = ? AND id = ?'
                + self.dialect.for_update,
                (scope.user, write.document_id),
            ).fetchone()
            stored = None if row is None else int(row["version"])
            if stored != write.expected_version:
                telemetry.record(telemetry.CONFLICT)
                raise ConflictError(write.document_id, write.expected_version, stored)

    @staticmethod
    def _existing(tx: Tx, table: str, scope: Scope, ids: Sequence[str]) -> list[str]:
        """``ids`` (in order, once each), every one of which must exist in the scope."""
        wanted = list(dict.fromkeys(ids))
        where, params = scope_where(scope)
        found: set[str] = set()
        for chunk in chunks(wanted):
            rows = tx.execute(
                f"SELECT id FROM {table} WHERE {where} AND id IN ({placeholders(len(chunk))})",
                [*params, *chunk],
            )
            found.update(r["id"] for r in rows)
        missing = [i for i in wanted if i not in found]
        if missing:
            raise NotFoundError(f"no {table[:-1]} {missing[0]} in scope {scope}")
        return wanted

    def _delete_facts(self, tx: Tx, fact_ids: Sequence[str], reason: str) -> list[str]:
        texts = []
        for fact_id in fact_ids:
            row = tx.execute(
                'SELECT "user", thread, agent, text, version FROM facts WHERE id = ?', (fact_id,)
            ).fetchone()
            texts.append(row["text"])
            self._drop_fact(tx, row_scope(row), fact_id, row["version"], reason)
        return texts

    def _erase_episodes(
        self, tx: Tx, scope: Scope, episode_ids: Sequence[str], erasure: Erasure
    ) -> tuple[list[str], list[str]]:
        """Delete the episodes; every fact of the user citing one loses the citation, and a
        fact left citing nothing (or, for ``derived``, any) is deleted. Returns the deleted
        facts' ids and texts."""
        citing = self.facts_citing(Scope(scope.user), episode_ids)
        gone = set(episode_ids)
        for chunk in chunks(episode_ids):
            marks = placeholders(len(chunk))
            tx.execute(f"DELETE FROM fact_sources WHERE episode_id IN ({marks})", chunk)
            tx.execute(f"DELETE FROM episodes WHERE id IN ({marks})", chunk)
        deleted: list[str] = []
        texts: list[str] = []
        for fact in citing:
            remaining = tuple(s for s in fact.sources if s not in gone)
            if remaining and not erasure.derived:
                self._resource_fact(tx, fact, remaining)
                continue
            why = erasure.reason if remaining else DeleteReason.SOURCE_DELETED.value
            self._drop_fact(tx, fact.scope, fact.id, fact.version, why)
            deleted.append(fact.id)
            texts.append(fact.text)
        self._log(tx, scope.user, [f.id for f in citing if f.id not in deleted], ChangeOp.UPSERT)
        self._log(tx, scope.user, deleted, ChangeOp.DELETE)
        return deleted, texts

    def _resource_fact(self, tx: Tx, fact: Fact, sources: tuple[str, ...]) -> None:
        updated = fact.evolve(
            sources=sources, updated_at=self._clock.now(), version=fact.version + 1
        )
        tx.execute(
            "UPDATE facts SET updated_at = ?, version = ? WHERE id = ?",
            (format_time(updated.updated_at), updated.version, fact.id),
        )
        self._write_sources(tx, updated)
        self._add_history(
            tx,
            fact.scope,
            fact.id,
            updated.version,
            HistoryOp.UPDATE,
            DeleteReason.SOURCE_DELETED.value,
            fact_to_json(updated),
        )

    def _rewrite_document(self, tx: Tx, scope: Scope, write: DocumentWrite) -> list[str]:
        row = tx.execute(
            f"SELECT {DOC_COLUMNS} FROM documents WHERE id = ?", (write.document_id,)
        ).fetchone()
        doc = self._document(row)
        version = doc.version + 1
        tx.execute(
            "UPDATE documents SET content = ?, version = ?, updated_at = ? WHERE id = ?",
            (
                json.dumps(dict(write.content), ensure_ascii=False),
                version,
                format_time(self._clock.now()),
                doc.id,
            ),
        )
        self._add_history(
            tx,
            doc.scope,
            doc.id,
            version,
            HistoryOp.UPDATE,
            None,
            {"doc_kind": doc.kind.value, "key": doc.key, "content": dict(write.content)},
        )
        self._add_item_events(tx, doc.scope, doc.id, write.item_events)
        self._log(tx, scope.user, [doc.id], ChangeOp.UPSERT)
        return [e.item_id for e in write.item_events if e.op == HistoryOp.DELETE]

    def settled_episodes(self, scope: Scope, episode_ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for chunk in chunks(list(dict.fromkeys(episode_ids))):
            rows = self._read(
                'SELECT episode_id FROM settled_episodes WHERE "user" = ? '
                f"AND episode_id IN ({placeholders(len(chunk))})",
                [scope.user, *chunk],
            )
            found.update(r["episode_id"] for r in rows)
        return found

    def erased(self, scope: Scope, ids: Sequence[str]) -> set[str]:
        wanted = set(ids)
        if not wanted:
            return set()
        found: set[str] = set()
        rows = self._read(
            'SELECT episode_ids, report FROM erasures WHERE "user" = ? ORDER BY id', [scope.user]
        )
        for row in rows:
            report = json.loads(row["report"])
            for erased in (json.loads(row["episode_ids"]), report["deleted"], report["cascaded"]):
                found.update(wanted.intersection(erased))
        return found

    # the journal ---------------------------------------------------------------------
    @staticmethod
    def _journal(tx: Tx, record: ErasureRecord) -> None:
        report = {
            "deleted": list(record.deleted),
            "cascaded": list(record.cascaded),
            "counts": dict(record.counts),
        }
        tx.execute(
            f"INSERT INTO erasures ({_ERASURE_COLUMNS}) VALUES ({placeholders(11)})",
            (
                record.id,
                *scope_row(record.scope),
                record.target,
                record.reason,
                format_time(record.at),
                json.dumps(list(record.episode_ids)),
                json.dumps(list(record.texts), ensure_ascii=False),
                json.dumps(report),
                int(record.done),
            ),
        )

    @staticmethod
    def _erasure(row: Row) -> ErasureRecord:
        report = json.loads(row["report"])
        return ErasureRecord(
            id=row["id"],
            scope=row_scope(row),
            target=row["target"],
            reason=row["reason"],
            at=parse_time(row["at"]),
            episode_ids=tuple(json.loads(row["episode_ids"])),
            texts=tuple(json.loads(row["texts"])),
            deleted=tuple(report["deleted"]),
            cascaded=tuple(report["cascaded"]),
            counts=dict(report["counts"]),
            done=bool(row["done"]),
        )

    def _with_sites(self, rows: Sequence[Row]) -> list[ErasureRecord]:
        """The journal entries of ``rows``, each with the data directories that applied it."""
        records = [self._erasure(r) for r in rows]
        sites: dict[str, list[str]] = {}
        for chunk in chunks([r.id for r in records]):
            for row in self._read(
                f"SELECT erasure_id, site FROM erasure_sites WHERE erasure_id IN "
                f"({placeholders(len(chunk))}) ORDER BY site",
                chunk,
            ):
                sites.setdefault(row["erasure_id"], []).append(row["site"])
        return [replace(r, sites=tuple(sites.get(r.id, ()))) for r in records]

    def pending_erasures(self) -> list[ErasureRecord]:
        rows = self._read(f"SELECT {_ERASURE_COLUMNS} FROM erasures WHERE done = 0 ORDER BY id")
        return self._with_sites(rows)

    def find_erasure(self, scope: Scope, target: str) -> ErasureRecord | None:
        where, params = scope_where(scope)
        rows = self._read(
            f"SELECT {_ERASURE_COLUMNS} FROM erasures WHERE {where} AND target = ? "
            "ORDER BY id DESC LIMIT 1",
            [*params, target],
        )
        return self._with_sites(rows)[0] if rows else None

    # the data directories holding copies -----------------------------------------------
    def enrol_site(
        self, site: str, label: str, *, swept: datetime | None = None, returning: bool = False
    ) -> bool:
        if not site or len(site) > 64:
            raise InvalidInputError("a site id is 1 to 64 characters")
        now = format_time(self._clock.now())
        since = _JOURNAL_START if returning else now  # a returning site's copies may be old
        with self._write() as tx:
            row = tx.execute("SELECT swept_to FROM sites WHERE id = ?", (site,)).fetchone()
            if row is None:
                tx.execute(
                    self.dialect.ignore_duplicates(
                        "INSERT INTO sites (id, label, first_seen, last_seen, swept_to) "
                        "VALUES (?, ?, ?, ?, ?)"
                    ),
                    (site, label, now, now, since),
                )
                return True
            swept_to = row["swept_to"]
            if swept is not None:
                swept_to = max(swept_to, format_time(swept))
            tx.execute(
                "UPDATE sites SET label = ?, last_seen = ?, swept_to = ? WHERE id = ?",
                (label, now, swept_to, site),
            )
            return False

    def erasures_for_site(self, site: str) -> list[ErasureRecord]:
        rows = self._read("SELECT first_seen, swept_to FROM sites WHERE id = ?", (site,))
        if not rows:
            return []
        since = format_time(parse_time(rows[0]["swept_to"]) - SITE_CLOCK_MARGIN)
        enrolled = format_time(parse_time(rows[0]["first_seen"]) - SITE_CLOCK_MARGIN)
        not_applied = "id NOT IN (SELECT erasure_id FROM erasure_sites WHERE site = ?)"
        recent = self._read(
            f"SELECT {_ERASURE_COLUMNS} FROM erasures WHERE at >= ? AND {not_applied}",
            (since, site),
        )
        # entries not done that wait for it (see finish_erasure), whatever its clock (ahead,
        # then set back) said of its last sweep
        pending = self._read(
            f"SELECT {_ERASURE_COLUMNS} FROM erasures WHERE done = 0 AND at < ? AND at >= ? "
            f"AND {not_applied}",
            (since, enrolled, site),
        )
        return self._with_sites(sorted([*recent, *pending], key=lambda row: str(row["id"])))

    def sites(self) -> list[Site]:
        rows = self._read("SELECT id, label, first_seen, last_seen FROM sites ORDER BY id")
        out = []
        for row in rows:
            since = format_time(parse_time(row["first_seen"]) - SITE_CLOCK_MARGIN)
            waiting = self._read(
                "SELECT COUNT(*) AS n FROM erasures WHERE done = 0 AND at >= ? AND id NOT IN "
                "(SELECT erasure_id FROM erasure_sites WHERE site = ?)",
                (since, row["id"]),
            )[0]["n"]
            out.append(
                Site(
                    id=row["id"],
                    label=row["label"],
                    first_seen=parse_time(row["first_seen"]),
                    last_seen=parse_time(row["last_seen"]),
                    waiting=int(waiting),
                )
            )
        return out

    def retire_site(self, site: str) -> bool:
        with self._write() as tx:
            cur = tx.execute("DELETE FROM sites WHERE id = ?", (site,))
            return cur.rowcount > 0

    def finish_erasure(
        self, erasure_id: str, site: str | None = None, *, wait: timedelta = SITE_WAIT
    ) -> int:
        now = self._clock.now()
        with self._write() as tx:
            # the entry's row locked: data directories finishing it at once take turns, so the
            # last one counts every other's mark (read committed sees it once it waits here)
            row = tx.execute(
                f"SELECT at, done FROM erasures WHERE id = ?{self.dialect.for_update}",
                (erasure_id,),
            ).fetchone()
            if row is None:
                raise NotFoundError(f"no erasure {erasure_id} in the journal")
            if site is not None:
                tx.execute(
                    self.dialect.ignore_duplicates(
                        "INSERT INTO erasure_sites (erasure_id, site, at) VALUES (?, ?, ?)"
                    ),
                    (erasure_id, site, format_time(now)),
                )
            if row["done"]:
                return 0
            latest = format_time(parse_time(row["at"]) + SITE_CLOCK_MARGIN)
            waiting = tx.execute(
                "SELECT COUNT(*) AS n FROM sites WHERE last_seen >= ? AND first_seen <= ? "
                "AND id NOT IN (SELECT site FROM erasure_sites WHERE erasure_id = ?)",
                (format_time(now - wait), latest, erasure_id),
            ).fetchone()["n"]
            if not waiting:
                tx.execute("UPDATE erasures SET done = 1, texts = '[]' WHERE id = ?", (erasure_id,))
        return int(waiting)
