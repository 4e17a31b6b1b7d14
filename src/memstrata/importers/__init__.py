"""Importers: turn conversation files into turns (and, for benchmarks, questions), and other
memory systems' exports into turns, facts and document bullets.

Importers only read and parse; they store nothing. A file is parsed and checked whole before
anything is written, so a bad file loses nothing and stores nothing. The formats of other
systems (:data:`KEYED`) give everything a stable source identity, so the facade can show what
an import would add (a dry run) and import it idempotently.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Final

from memstrata.errors import InvalidInputError
from memstrata.importers.base import (
    Conversation,
    ImportBatch,
    ImportedFact,
    ImportedNote,
    MarkdownSource,
    Question,
    Skipped,
    stable_id,
)
from memstrata.importers.chatgpt import load_chatgpt
from memstrata.importers.claude import load_claude
from memstrata.importers.deeptutor import load_deeptutor
from memstrata.importers.deerflow import load_deerflow
from memstrata.importers.jsonl import load_jsonl
from memstrata.importers.locomo import load_locomo
from memstrata.importers.longmemeval import load_longmemeval
from memstrata.importers.madial import load_madial
from memstrata.importers.mem0 import load_mem0
from memstrata.importers.mempalace import load_mempalace

FORMATS: Final[dict[str, Callable[[Path], ImportBatch]]] = {
    "locomo": load_locomo,
    "longmemeval": load_longmemeval,
    "jsonl": load_jsonl,
    "madial": load_madial,
    "chatgpt": load_chatgpt,
    "claude": load_claude,
    "deerflow": load_deerflow,
    "mem0": load_mem0,
    "mempalace": load_mempalace,
    "deeptutor": load_deeptutor,
}
#: the formats of other memory and chat systems: dry run, idempotent import
KEYED: Final = ("chatgpt", "claude", "deerflow", "mem0", "mempalace", "deeptutor")
#: one line per format, for ``memstrata ingest --help`` and the docs
DESCRIPTIONS: Final[dict[str, str]] = {
    "locomo": "LoCoMo benchmark file",
    "longmemeval": "LongMemEval haystack file",
    "madial": "MADial-Bench file",
    "jsonl": "one turn per line",
    "chatgpt": "ChatGPT data export conversations.json (branch last seen)",
    "claude": "claude.ai export conversations.json",
    "deerflow": "DeerFlow memory.json (context, history, facts)",
    "mem0": "mem0 export of memories",
    "mempalace": "MemPalace drawers (collection JSON or markdown room file)",
    "deeptutor": "DeepTutor-style markdown memory document",
}


def load(path: str | Path, fmt: str, *, all_branches: bool = False) -> ImportBatch:
    """Parse ``path`` in format ``fmt`` (one of :data:`FORMATS`). ``all_branches`` (ChatGPT
    only) imports every branch of a conversation, not only the one the user last saw."""
    try:
        loader = FORMATS[fmt]
    except KeyError:
        raise InvalidInputError(
            f"unknown import format {fmt!r}; expected one of {', '.join(FORMATS)}"
        ) from None
    if fmt == "chatgpt":
        return load_chatgpt(Path(path), all_branches=all_branches)
    if all_branches:
        raise InvalidInputError("all branches applies to the chatgpt format only")
    return loader(Path(path))


__all__ = [
    "DESCRIPTIONS",
    "FORMATS",
    "KEYED",
    "Conversation",
    "ImportBatch",
    "ImportedFact",
    "ImportedNote",
    "MarkdownSource",
    "Question",
    "Skipped",
    "load",
    "stable_id",
]
