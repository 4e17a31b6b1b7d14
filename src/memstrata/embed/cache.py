"""Embeddings cached by content hash, so no text is embedded twice by the same model.

Document vectors persist in a SQLite file (``<data dir>/embeddings.db``), keyed by the model's
name and the SHA-256 of the text; the cache is derived data and can be deleted at any time.
Query vectors are kept only in memory (a small LRU), never on disk. Every model is given at
most :data:`memstrata.embed.base.MAX_EMBED_CHARS` characters of a text (all a model reads);
the cache keys the whole text.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import bounded, embed_queries
from memstrata.embed.blend import BlendEmbedder
from memstrata.errors import StoreError
from memstrata.ports import QUERY_KINDS, Embedder, QueryKind

_CHUNK = 500


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
        if path is not None:
            try:
                Path(path).parent.mkdir(parents=True, exist_ok=True)
                self._conn = sqlite3.connect(
                    str(path), check_same_thread=False, isolation_level=None, timeout=10
                )
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute(
                    "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, hash BLOB NOT NULL,"
                    " vec BLOB NOT NULL, PRIMARY KEY (model, hash)) WITHOUT ROWID"
                )
            except (OSError, sqlite3.Error) as exc:
                raise StoreError(f"cannot open the embedding cache {path}: {exc}") from exc
        self._memory: dict[bytes, NDArray[np.float32]] = {}

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
        if self._conn is None:
            return {h: self._memory[h] for h in hashes if h in self._memory}
        found: dict[bytes, NDArray[np.float32]] = {}
        for start in range(0, len(hashes), _CHUNK):
            chunk = hashes[start : start + _CHUNK]
            rows = self._conn.execute(
                f"SELECT hash, vec FROM vectors WHERE model = ? AND hash IN "
                f"({','.join('?' * len(chunk))})",
                [self.inner.name, *chunk],
            ).fetchall()
            for h, blob in rows:
                found[h] = np.frombuffer(blob, dtype=np.float32)
        return found

    def _save(self, items: list[tuple[bytes, NDArray[np.float32]]]) -> None:
        if self._conn is None:
            self._memory.update(items)
            return
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            self._conn.executemany(
                "INSERT OR REPLACE INTO vectors (model, hash, vec) VALUES (?, ?, ?)",
                [(self.inner.name, h, v.astype(np.float32).tobytes()) for h, v in items],
            )
        except sqlite3.Error:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

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
            if self._conn is not None and hashes:
                self._conn.executemany("DELETE FROM vectors WHERE hash = ?", [(h,) for h in hashes])
            for kind in QUERY_KINDS:
                for t in texts:
                    self._queries.pop((kind, t), None)


def with_cache(embedder: Embedder, path: str | Path | None) -> Embedder:
    """``embedder`` with its vectors cached in ``path``; a blend caches each of its models on
    its own, so changing a blend's weights or models re-embeds nothing already embedded."""
    if isinstance(embedder, BlendEmbedder):
        return BlendEmbedder([with_cache(p, path) for p in embedder.parts], embedder.weights)
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
