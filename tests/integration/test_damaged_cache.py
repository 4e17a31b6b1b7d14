"""A damaged embedding cache (derived data) is deleted and rebuilt; search keeps working."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from memstrata.api import Memory
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.cache import CachedEmbedder, with_cache
from memstrata.embed.fake import HashingEmbedder
from memstrata.settings import load_settings
from tests.integration.test_damaged_store import PAGE

TEXTS = [f"turn {i}: the puppy learned trick number {i}" for i in range(300)]


def _rows(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0])


@contextmanager
def _opened(path: Path, caplog: pytest.LogCaptureFixture) -> Iterator[CachedEmbedder]:
    """A small cache opened at ``path``, what it warned of on open in ``caplog``; closed after."""
    with caplog.at_level(logging.WARNING, logger="memstrata.embed.cache"):
        cache = CachedEmbedder(HashingEmbedder(dim=16), path)
    try:
        yield cache
    finally:
        cache.close()


def test_a_cache_file_that_is_not_a_database_is_rebuilt_on_open(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "embeddings.db"
    path.write_bytes(b"not a database at all" * 400)
    with _opened(path, caplog) as cache:
        assert "damaged" in caplog.text
        vectors = cache.embed_documents(["tea", "coffee"])
        assert np.allclose(vectors, HashingEmbedder(dim=16).embed_documents(["tea", "coffee"]))
        assert _rows(path) == 2


def test_a_damaged_page_is_found_on_first_use_and_the_cache_rebuilt(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "embeddings.db"
    inner = HashingEmbedder(dim=256)
    cached = with_cache(BlendEmbedder([inner, HashingEmbedder(dim=32)], {}), path)
    expected = cached.embed_documents(TEXTS)
    cached.close()  # type: ignore[attr-defined]
    data = bytearray(path.read_bytes())
    for page in range(2 * PAGE, len(data) - PAGE, 4 * PAGE):  # leaves of the vectors table
        data[page : page + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))
    reopened = with_cache(
        BlendEmbedder([HashingEmbedder(dim=256), HashingEmbedder(dim=32)], {}), path
    )
    try:
        with caplog.at_level(logging.WARNING, logger="memstrata.embed.cache"):
            got = reopened.embed_documents(TEXTS)
        assert np.allclose(got, expected)
        assert "damaged" in caplog.text
        assert _rows(path) == 2 * len(TEXTS)  # both models' vectors, in one new file
        assert np.allclose(reopened.embed_documents(TEXTS[:3]), expected[:3])
    finally:
        reopened.close()  # type: ignore[attr-defined]


def test_search_works_over_a_damaged_cache(data_dir: Path) -> None:
    def open_memory() -> Memory:
        embedder = with_cache(HashingEmbedder(dim=64), data_dir / "embeddings.db")
        return Memory.open(settings=load_settings(data_dir=data_dir), embedder=embedder)

    with open_memory() as mem:
        mem.remember(["I adopted a puppy named Max", "The revenue report is due"], "alice")
        assert mem.search("puppy Max", "alice", k=1)
    (data_dir / "embeddings.db").write_bytes(b"\x00garbage" * 1000)
    with open_memory() as mem:
        [hit] = mem.search("puppy Max", "alice", k=1)
        assert "puppy" in hit.text


def test_a_cache_that_cannot_be_written_still_embeds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    cache = CachedEmbedder(HashingEmbedder(dim=512), tmp_path / "embeddings.db")
    try:
        assert cache._conn is not None
        pages = cache._conn.execute("PRAGMA page_count").fetchone()[0]
        cache._conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full
        with caplog.at_level(logging.WARNING, logger="memstrata.embed.cache"):
            got = cache.embed_documents(TEXTS[:50])
        assert np.allclose(got, HashingEmbedder(dim=512).embed_documents(TEXTS[:50]))
        assert "not cached" in caplog.text
    finally:
        cache.close()


def test_a_cache_that_cannot_be_opened_keeps_vectors_in_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "embeddings.db"
    path.mkdir()  # a folder where the file should be
    with _opened(path, caplog) as cache:
        assert "in memory" in caplog.text
        first = cache.embed_documents(["tea"])
        assert np.allclose(cache.embed_documents(["tea"]), first)
        assert (cache.hits, cache.misses) == (1, 1)
