"""memstrata: layered, auditable long-term memory for LLM agents.

The public names are loaded on first use, so ``import memstrata`` stays cheap.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Memory": "memstrata.api",
    "AgentMemory": "memstrata.agent",
    "RemoteMemory": "memstrata.client",
    "connect": "memstrata.client",
    "IngestReport": "memstrata.api",
    "DeleteReport": "memstrata.api",
    "Settings": "memstrata.settings",
    "load_settings": "memstrata.settings",
    "Scope": "memstrata.model",
    "Turn": "memstrata.model",
    "Episode": "memstrata.model",
    "Fact": "memstrata.model",
    "When": "memstrata.model",
    "Document": "memstrata.model",
    "DocumentKind": "memstrata.model",
    "Identity": "memstrata.model",
    "Profile": "memstrata.model",
    "Slot": "memstrata.model",
    "TopicDocument": "memstrata.model",
    "ItemVersion": "memstrata.model",
    "Category": "memstrata.model",
    "Role": "memstrata.model",
    "DeleteReason": "memstrata.model",
    "EpisodeFilter": "memstrata.model",
    "FactFilter": "memstrata.model",
    "Stats": "memstrata.model",
    "SearchFilter": "memstrata.model",
    "SearchHit": "memstrata.model",
    "Granularity": "memstrata.model",
    "EmbeddingError": "memstrata.errors",
    "MemstrataError": "memstrata.errors",
    "ConfigError": "memstrata.errors",
    "InvalidInputError": "memstrata.errors",
    "ImportFormatError": "memstrata.errors",
    "NotFoundError": "memstrata.errors",
    "TooLargeError": "memstrata.errors",
    "ConflictError": "memstrata.errors",
    "BusyError": "memstrata.errors",
    "StoreError": "memstrata.errors",
    "MigrationError": "memstrata.errors",
    "DamagedStoreError": "memstrata.errors",
    "UnauthenticatedError": "memstrata.errors",
    "ForbiddenError": "memstrata.errors",
    "RemoteError": "memstrata.errors",
}

__all__ = [
    "AgentMemory",
    "BusyError",
    "Category",
    "ConfigError",
    "ConflictError",
    "DamagedStoreError",
    "DeleteReason",
    "DeleteReport",
    "Document",
    "DocumentKind",
    "EmbeddingError",
    "Episode",
    "EpisodeFilter",
    "Fact",
    "FactFilter",
    "ForbiddenError",
    "Granularity",
    "Identity",
    "ImportFormatError",
    "IngestReport",
    "InvalidInputError",
    "ItemVersion",
    "Memory",
    "MemstrataError",
    "MigrationError",
    "NotFoundError",
    "Profile",
    "RemoteError",
    "RemoteMemory",
    "Role",
    "Scope",
    "SearchFilter",
    "SearchHit",
    "Settings",
    "Slot",
    "Stats",
    "StoreError",
    "TooLargeError",
    "TopicDocument",
    "Turn",
    "UnauthenticatedError",
    "When",
    "__version__",
    "connect",
    "load_settings",
]

if TYPE_CHECKING:
    from memstrata.agent import AgentMemory
    from memstrata.api import DeleteReport, IngestReport, Memory
    from memstrata.client import RemoteMemory, connect
    from memstrata.errors import (
        BusyError,
        ConfigError,
        ConflictError,
        DamagedStoreError,
        EmbeddingError,
        ForbiddenError,
        ImportFormatError,
        InvalidInputError,
        MemstrataError,
        MigrationError,
        NotFoundError,
        RemoteError,
        StoreError,
        TooLargeError,
        UnauthenticatedError,
    )
    from memstrata.model import (
        Category,
        DeleteReason,
        Document,
        DocumentKind,
        Episode,
        EpisodeFilter,
        Fact,
        FactFilter,
        Granularity,
        Identity,
        ItemVersion,
        Profile,
        Role,
        Scope,
        SearchFilter,
        SearchHit,
        Slot,
        Stats,
        TopicDocument,
        Turn,
        When,
    )
    from memstrata.settings import Settings, load_settings


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'memstrata' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
