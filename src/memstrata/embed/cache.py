"""Embeddings cached by content hash, so no text is embedded twice by the same model.

Document vectors persist in a SQLite file (``<data dir>/embeddings.db``), keyed by the model's
name and the SHA-256 of the text; the cache is derived data and can be deleted at any time.
Query vectors are kept only in memory (a small LRU), never on disk. Every model is given at
most :data:`memstrata.embed.base.MAX_EMBED_CHARS` characters of a text (all a model reads);
the cache keys the whole text.

A damaged cache file (found on open or on first use) is deleted and started again, with a
warning: search keeps working and re-embeds what it needs. A cache that cannot be opened or
written (a full disk, a read-only data directory, a lock held too long) is read where it can be
and keeps new vectors in memory. Only :meth:`CachedEmbedder.forget` raises: a deletion must not
be reported done while vectors are left.

Deleting a record on request purges the vectors of every text embedded from it
(:meth:`CachedEmbedder.forget` in process, :func:`purge_cache` on the file from any process):
with ``secure_delete`` on and the write-ahead log checkpointed, no old vector stays in a free
page or in the log.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import bounded, embed_queries
from memstrata.embed.blend import BlendEmbedder
from memstrata.errors import StoreError
from memstrata.ports import QUERY_KINDS, Embedder, QueryKind
from memstrata.private import private_dir, private_file
from memstrata.sqlite_errors import (
    connect_read_only,
    is_damage,
    read_only_file,
    turn_on_secure_delete,
)

log = logging.getLogger(__name__)

_CHUNK = 500
#: a purge read back with vectors of its texts left (another process's batch in hand, which
#: that process forgets once it sees the records gone) is made again, this many times in all
_PURGE_TRIES = 5
_PURGE_PAUSE_S = 0.1
#: per cache file, how many times it was started again in this process: the caches of a
#: blend's models share one file, and each reconnects when another has replaced it
_GENERATIONS: dict[Path, int] = {}
_GENERATIONS_LOCK = threading.Lock()


def text_hash(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class CachedEmbedder:
    """An :class:`memstrata.ports.Embedder` that remembers what ``inner`` computed."""

    def __init__(
        self, inner: Embedder, path: str | Path | None = None, *, query_cache_size: int = 1024
    ) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self._queries: OrderedDict[tuple[str, str], NDArray[np.float32]] = OrderedDict()
        self._query_cache_size = query_cache_size
        self.hits = 0
        self.misses = 0
        self._conn: sqlite3.Connection | None = None
        self._path = None if path is None else Path(path).absolute()
        self._generation = 0
        self._file: tuple[int, int] | None = None
        self._read_only = False
        self._memory: dict[bytes, NDArray[np.float32]] = {}
        if self._path is not None:
            self._open()

    def _open(self) -> None:
        """Connect to the cache file; a damaged one is deleted and started again."""
        assert self._path is not None
        path = self._path
        with _GENERATIONS_LOCK:
            self._generation = _GENERATIONS.get(path, 0)
        try:
            private_dir(path.parent)
            private_file(path)
            self._conn = self._connect(path)
        except sqlite3.Error as exc:
            if is_damage(exc):
                self._start_again(exc)
            else:
                self._in_memory(exc)
        except OSError as exc:
            self._in_memory(exc)

    def _in_memory(self, exc: Exception) -> None:
        """The cache file cannot be used (locked, unreadable, not a file): vectors stay in
        memory, so embedding and search keep working."""
        log.warning(
            "cannot open the embedding cache %s (%s); vectors kept in memory", self._path, exc
        )
        self._conn = None
        self._read_only = True

    def _connect(self, path: Path) -> sqlite3.Connection | None:
        self._file = _identity(path)
        self._read_only = read_only_file(path) or not os.access(path.parent, os.W_OK)
        if self._read_only:
            if not path.exists():
                return None  # nothing to read; new vectors stay in memory
            conn = connect_read_only(path, check_same_thread=False)
        else:
            conn = _open_writable(path)
        try:
            conn.execute("SELECT model, hash, vec FROM vectors LIMIT 1").fetchall()
        except sqlite3.Error:
            conn.close()
            raise
        self._file = _identity(path)
        return conn

    def _start_again(self, exc: sqlite3.Error) -> None:
        """The cache file is damaged: delete it (it is derived data) and start an empty one.

        A cache of the same file (another model of a blend, another process) that started it
        again first is not deleted again: this one only reconnects."""
        assert self._path is not None
        path = self._path
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        with _GENERATIONS_LOCK:
            replaced = _GENERATIONS.get(path, 0) != self._generation or not self._same_file()
            if not replaced and not self._read_only:
                log.warning(
                    "the embedding cache %s is damaged (%s); deleted, it is rebuilt as texts "
                    "are embedded again",
                    path,
                    exc,
                )
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
                _GENERATIONS[path] = self._generation + 1
            self._generation = _GENERATIONS.get(path, 0)
        if self._read_only and not replaced:
            log.warning("the embedding cache %s is damaged (%s) and read-only: unused", path, exc)
            return
        try:
            self._conn = self._connect(path)
        except (OSError, sqlite3.Error) as again:
            self._in_memory(again)

    def _same_file(self) -> bool:
        """Whether the cache file is still the one this cache opened."""
        assert self._path is not None
        return self._file == _identity(self._path)

    def _current(self) -> sqlite3.Connection | None:
        """The connection, reconnected if another cache of the same file started it again."""
        if self._path is not None and self._conn is not None:
            with _GENERATIONS_LOCK:
                stale = _GENERATIONS.get(self._path, 0) != self._generation
            if stale:
                self._conn.close()
                self._conn = None
                self._open()
        return self._conn

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()

    def _lookup(self, hashes: list[bytes]) -> dict[bytes, NDArray[np.float32]]:
        found = {h: self._memory[h] for h in hashes if h in self._memory}
        try:
            found.update(self._lookup_file([h for h in hashes if h not in found]))
        except sqlite3.Error as exc:
            if is_damage(exc):
                self._start_again(exc)
            else:
                log.warning("embedding cache lookup failed (%s); embedding again", exc)
        return found

    def _lookup_file(self, hashes: list[bytes]) -> dict[bytes, NDArray[np.float32]]:
        conn = self._current()
        found: dict[bytes, NDArray[np.float32]] = {}
        if conn is None:
            return found
        for chunk in _chunks(hashes):
            rows = conn.execute(
                f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN "
                f"({','.join('?' * len(chunk))})",
                [self.inner.name, *chunk],
            ).fetchall()
            for h, blob in rows:
                found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _save(self, items: list[tuple[bytes, NDArray[np.float32]]]) -> None:
        if self._path is None or self._read_only:
            self._memory.update(items)
            return
        for attempt in (1, 2):
            try:
                self._save_file(items)
                return
            except sqlite3.Error as exc:
                if is_damage(exc) and attempt == 1:
                    self._start_again(exc)
                    continue
                log.warning("embedding cache write failed (%s); vectors not cached", exc)
                return

    def _save_file(self, items: list[tuple[bytes, NDArray[np.float32]]]) -> None:
        conn = self._current()
        if conn is None:
            self._memory.update(items)
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "INSERT OR REPLACE INTO vectors (model, hash, vec) VALUES (?, ?, ?)",
                [(self.inner.name, h, v.astype(np.float32).tobytes()) for h, v in items],
            )
            conn.execute("COMMIT")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        hashes = [text_hash(t) for t in texts]
        with self._lock:
            found = self._lookup(list(dict.fromkeys(hashes)))
        todo: dict[bytes, str] = {}
        for h, t in zip(hashes, texts, strict=True):
            if h not in found:
                todo.setdefault(h, bounded(t))  # keyed by the whole text
        self.hits += len(texts) - len(todo)  # a text repeated in one batch is embedded once
        self.misses += len(todo)
        if todo:
            vectors = self.inner.embed_documents(list(todo.values()))
            fresh = list(zip(todo.keys(), vectors, strict=True))
            with self._lock:
                self._save(fresh)
            found.update(fresh)
        for i, h in enumerate(hashes):
            out[i] = found[h]
        return out

    def cached_documents(
        self, texts: Sequence[str]
    ) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
        """The cached vectors of ``texts`` (the model is not run), and which were found."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        found_rows = np.zeros(len(texts), dtype=bool)
        if not texts:
            return out, found_rows
        hashes = [text_hash(t) for t in texts]
        with self._lock:
            found = self._lookup(list(dict.fromkeys(hashes)))
        for i, h in enumerate(hashes):
            vector = found.get(h)
            if vector is not None:
                out[i] = vector
                found_rows[i] = True
        self.hits += int(found_rows.sum())
        return out, found_rows

    def embed_query(self, text: str) -> NDArray[np.float32]:
        return np.asarray(self.embed_queries([text], "question")[0], dtype=np.float32)

    def embed_queries(self, texts: Sequence[str], kind: QueryKind) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        todo: dict[str, list[int]] = {}
        with self._lock:
            for i, text in enumerate(texts):
                cached = self._queries.get((kind, text))
                if cached is None:
                    todo.setdefault(text, []).append(i)
                else:
                    self._queries.move_to_end((kind, text))
                    out[i] = cached
        if todo:
            vectors = embed_queries(self.inner, [bounded(t) for t in todo], kind)
            with self._lock:
                for (text, rows), vector in zip(todo.items(), vectors, strict=True):
                    out[rows] = vector
                    self._queries[(kind, text)] = vector
                while len(self._queries) > self._query_cache_size:
                    self._queries.popitem(last=False)
        return out

    def forget(self, texts: Sequence[str]) -> None:
        """Drop the cached vectors of ``texts`` (a deleted record's derived copies)."""
        hashes = [text_hash(t) for t in texts]
        with self._lock:
            for h in hashes:
                self._memory.pop(h, None)
            conn = self._current()
            if conn is not None and hashes and not self._read_only:
                try:
                    _purge(conn, list(dict.fromkeys(hashes)))
                except sqlite3.Error as exc:
                    if not is_damage(exc):
                        raise StoreError(
                            f"cannot forget vectors in the embedding cache {self._path}: {exc}"
                        ) from exc
                    self._start_again(exc)  # deleted whole: nothing of them is left
            for kind in QUERY_KINDS:
                for t in texts:
                    self._queries.pop((kind, t), None)


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file ``path`` names now (device and inode), None when there is none."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def purge_cache(path: str | Path, texts: Sequence[str]) -> list[str]:
    """Drop every model's cached vectors of ``texts`` from the cache file at ``path`` (if there
    is one) and checkpoint its log; what is left (none, unless another process wrote them
    again meanwhile), each entry naming the file."""
    path = Path(path)
    hashes = list(dict.fromkeys(text_hash(t) for t in texts))
    if not hashes or not path.exists():
        return []
    conn = _connect(path)
    try:
        for attempt in range(_PURGE_TRIES):
            if attempt:  # a batch another process had in hand, written after the purge:
                time.sleep(_PURGE_PAUSE_S * attempt)  # it forgets them itself; purge again
            _purge(conn, hashes)
            left = sum(
                conn.execute(
                    f"SELECT COUNT(*) FROM vectors WHERE hash IN ({','.join('?' * len(chunk))})",
                    chunk,
                ).fetchone()[0]
                for chunk in _chunks(hashes)
            )
            if not left:
                break
    except sqlite3.Error as exc:
        raise StoreError(f"cannot purge the embedding cache {path}: {exc}") from exc
    finally:
        conn.close()
    return [f"{path}: {left} cached vector(s) of the deleted text"] if left else []


def cached_count(path: str | Path, texts: Sequence[str]) -> int:
    """How many vectors of ``texts`` (every model's) the cache file at ``path`` holds (none
    when there is no file)."""
    path = Path(path)
    hashes = list(dict.fromkeys(text_hash(t) for t in texts))
    if not hashes or not path.exists():
        return 0
    conn = _connect(path)
    try:
        return sum(
            conn.execute(
                f"SELECT COUNT(*) FROM vectors WHERE hash IN ({','.join('?' * len(chunk))})",
                chunk,
            ).fetchone()[0]
            for chunk in _chunks(hashes)
        )
    except sqlite3.Error as exc:
        raise StoreError(f"cannot read the embedding cache {path}: {exc}") from exc
    finally:
        conn.close()


def clear_cache(path: str | Path) -> list[str]:
    """Drop every cached vector from the cache file at ``path`` (if there is one) and
    checkpoint its log, for an erasure whose texts are no longer known; what is left (none,
    unless another process wrote vectors again meanwhile), naming the file. Derived data:
    texts are embedded again as they are needed."""
    path = Path(path)
    if not path.exists():
        return []
    conn = _connect(path)
    try:
        _purge(conn, None)
        left = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    except sqlite3.Error as exc:
        raise StoreError(f"cannot clear the embedding cache {path}: {exc}") from exc
    finally:
        conn.close()
    log.warning("dropped the whole embedding cache %s: an erasure's texts were gone", path)
    return [f"{path}: {left} cached vector(s) written again while it was cleared"] if left else []


def _connect(path: Path) -> sqlite3.Connection:
    """:func:`_open_writable`, its driver errors as :class:`StoreError`."""
    try:
        return _open_writable(path)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open the embedding cache {path}: {exc}") from exc


def _open_writable(path: Path) -> sqlite3.Connection:
    """The cache file, created if new, in WAL mode with deleted rows overwritten
    (``secure_delete``); driver errors are raised as they are."""
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=10)
    try:
        _secure_delete(conn, path)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, hash BLOB NOT NULL,"
            " vec BLOB NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID"
        )
    except BaseException:
        conn.close()
        raise
    return conn


def _secure_delete(conn: sqlite3.Connection, path: Path) -> None:
    """Deleted rows are overwritten on this connection (checked: a build may refuse)."""
    if not turn_on_secure_delete(conn):
        raise StoreError(f"the embedding cache {path} cannot turn secure_delete on")


def _chunks(hashes: list[bytes]) -> list[list[bytes]]:
    return [hashes[i : i + _CHUNK] for i in range(0, len(hashes), _CHUNK)]


def _purge(conn: sqlite3.Connection, hashes: list[bytes] | None) -> None:
    """Delete the vectors of ``hashes`` (every model; None: every vector), then fold the log
    into the file and truncate it, so the old pages are gone from both."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if hashes is None:
            conn.execute("DELETE FROM vectors")
        for chunk in _chunks(hashes or []):
            conn.execute(f"DELETE FROM vectors WHERE hash IN ({','.join('?' * len(chunk))})", chunk)
    except sqlite3.Error:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def with_cache(embedder: Embedder, path: str | Path | None) -> Embedder:
    """``embedder`` with its vectors cached in ``path``; a blend caches each of its models on
    its own, so changing a blend's weights or models re-embeds nothing already embedded."""
    if isinstance(embedder, BlendEmbedder):
        return BlendEmbedder(
            [with_cache(p, path) for p in embedder.parts], embedder.weights, embedder.pooled
        )
    return CachedEmbedder(embedder, path)


def cache_counts(embedder: Embedder) -> dict[str, int] | None:
    """Cache hits and misses of ``embedder`` (summed over a blend's models); None: no cache."""
    if isinstance(embedder, CachedEmbedder):
        return {"hits": embedder.hits, "misses": embedder.misses}
    if isinstance(embedder, BlendEmbedder):
        counts = [c for c in map(cache_counts, embedder.parts) if c is not None]
        if counts:
            return {key: sum(c[key] for c in counts) for key in ("hits", "misses")}
    return None
