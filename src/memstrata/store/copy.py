"""Moving a whole store to another (``memstrata migrate --from URL --to URL``): every table
copied row by row with its ids, versions, history, change feed, keys and erasure journal, then
proven equal by a row count and a checksum per table, all in one transaction on the target."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memstrata.errors import InvalidInputError, MemstrataError, MigrationError, StoreError
from memstrata.ports import RecordStore
from memstrata.store.opening import open_store
from memstrata.store.sql.copying import TABLES, CopyTables
from memstrata.store.url import parse_store_url, redact


def _copyable(store: RecordStore, url: str) -> CopyTables:
    if not isinstance(store, CopyTables):
        raise InvalidInputError(f"{redact(url)} is not a store memstrata can copy")
    return store


def _open(url: str, role: str) -> RecordStore:
    """The store at ``url``; a schema this version cannot use says which side it is."""
    try:
        return open_store(url)
    except MigrationError as exc:
        raise MigrationError(f"the {role} {redact(url)}: {exc}; nothing was copied") from exc


@dataclass(frozen=True, slots=True)
class Migrated:
    """What :func:`migrate_store` did: per table ``rows`` and ``sha256`` (equal on both
    sides), and whether it ``copied`` them now (False: the target already held an identical
    copy, as a rerun after a commit whose outcome was not known finds)."""

    tables: dict[str, dict[str, Any]]
    copied: bool


def migrate_store(
    source_url: str,
    target_url: str,
    *,
    progress: Callable[[str, int], None] | None = None,
) -> Migrated:
    """Copy the store at ``source_url`` into the empty store at ``target_url`` (its schema is
    made on open), proven equal table by table.

    The copy is one transaction on the target, verified (row counts and checksums read back)
    before its commit: stopped at any point (killed, a lost connection, Ctrl-C, a copy that
    does not check out) it leaves the target without any copied row, so running it again
    just works. A target that already holds an identical copy of the source (every table's
    count and checksum equal) is left as it is and reported verified; a target holding any
    other row is refused before anything is written."""
    if source_url.strip() == target_url.strip():
        raise InvalidInputError("the source and the target are the same store")
    source_where = parse_store_url(source_url)
    parse_store_url(target_url)  # both URLs checked before either store is opened
    if source_where.engine == "sqlite" and not source_where.sqlite_path.is_file():
        raise InvalidInputError(  # opening it would create an empty store there
            f"the source holds no records: {source_where.sqlite_path} does not exist, and "
            "nothing was created (is its URL the store you mean?)"
        )
    source_store = _open(source_url, "source")
    try:
        source = _copyable(source_store, source_url)
        if not source.holds_rows():  # before the target is opened (and its schema made)
            raise InvalidInputError(
                "the source holds no records: nothing to migrate (is its URL the store you mean?)"
            )
        target_store = _open(target_url, "target")
        try:
            target = _copyable(target_store, target_url)
            if source.store_identity() == target.store_identity():
                raise InvalidInputError(
                    f"the source {redact(source_url)} and the target {redact(target_url)} are "
                    "the same store, named two ways: nothing was copied; point --to at another "
                    "database"
                )
            return _copy(source, target, redact(target_url), progress)
        finally:
            target_store.close()
    finally:
        source_store.close()


def _copy(
    source: CopyTables,
    target: CopyTables,
    target_shown: str,
    progress: Callable[[str, int], None] | None,
) -> Migrated:
    if target.holds_rows():  # before the transaction: done already, or a clear refusal
        expected = source.table_digests()
        if target.table_digests() == expected:
            return Migrated(expected, copied=False)
        _refuse_if_full(target, target_shown)
    try:
        with target.copy_transaction():
            _refuse_if_full(target, target_shown)  # again inside: no other copy got there first
            for table in TABLES:
                copied = 0
                for page in source.table_pages(table):
                    target.insert_rows(table, page)
                    copied += len(page)
                    if progress is not None:
                        progress(table, copied)
            target.finish_copy()
            found = target.table_digests()  # read back before the commit
            expected = source.table_digests()
            wrong = [t for t in TABLES if expected[t] != found[t]]
            if wrong:  # raised inside the transaction: nothing is kept
                raise StoreError(
                    f"the copy in {target_shown} differs from its source in {', '.join(wrong)} "
                    "(was the source written to during the copy?); nothing was kept in the "
                    "target: migrate again"
                )
    except MemstrataError:
        raise
    except Exception as exc:  # a driver's error (a lost connection, a refused statement)
        raise StoreError(
            f"the copy into {target_shown} failed: {exc}; nothing was kept in the target "
            "(the copy is one transaction): migrate again"
        ) from exc
    return Migrated(expected, copied=True)


def _refuse_if_full(target: CopyTables, target_shown: str) -> None:
    full = target.holds_rows()
    if full:
        raise InvalidInputError(
            f"the target {target_shown} is not empty ({', '.join(full)} hold rows) and is not "
            "a copy of this source: migrate only into a new, empty store. A migration "
            "interrupted with this version of memstrata leaves no row behind, so these were "
            "written by something else: point --to at another database, or remove that store "
            "yourself if you mean to replace it"
        )
