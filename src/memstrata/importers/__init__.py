"""Importers: turn conversation files into turns (and, for benchmarks, questions).

Importers only read and parse; they store nothing. A file is parsed and checked whole before
anything is written, so a bad file loses nothing and stores nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from memstrata.errors import InvalidInputError
from memstrata.importers.base import Conversation, ImportBatch, Question
from memstrata.importers.jsonl import load_jsonl
from memstrata.importers.locomo import load_locomo
from memstrata.importers.longmemeval import load_longmemeval
from memstrata.importers.madial import load_madial

FORMATS: Final[dict[str, Callable[[Path], ImportBatch]]] = {
    "locomo": load_locomo,
    "longmemeval": load_longmemeval,
    "jsonl": load_jsonl,
    "madial": load_madial,
}


def load(path: str | Path, fmt: str) -> ImportBatch:
    """Parse ``path`` in format ``fmt`` (one of :data:`FORMATS`)."""
    try:
        loader = FORMATS[fmt]
    except KeyError:
        raise InvalidInputError(
            f"unknown import format {fmt!r}; expected one of {', '.join(FORMATS)}"
        ) from None
    return loader(Path(path))


__all__ = ["FORMATS", "Conversation", "ImportBatch", "Question", "load"]
