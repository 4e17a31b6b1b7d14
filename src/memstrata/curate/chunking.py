"""Chunks of episodes for a model's context, never splitting a sentence.

Episodes are packed in order into chunks of at most ``max_chars`` characters. An episode longer
than that is cut at sentence ends (English and Chinese punctuation, or line breaks) into parts
that keep the episode's id, so whatever a model cites in any part maps back to the episode. A
single sentence longer than the budget stays whole in a chunk of its own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from memstrata.errors import InvalidInputError
from memstrata.model import Episode

_SENTENCE_END: Final = re.compile(r"(?<=[.!?。！？；;])\s*|\n+")


def split_sentences(text: str) -> list[str]:
    """``text`` cut after each sentence end; joining the parts gives the text back."""
    parts, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end = match.end()
        if end > start:
            parts.append(text[start:end])
            start = end
    if start < len(text):
        parts.append(text[start:])
    return [p for p in parts if p]


def _parts(episode: Episode, max_chars: int) -> list[Episode]:
    if len(episode.text) <= max_chars:
        return [episode]
    pieces: list[str] = []
    current = ""
    for sentence in split_sentences(episode.text):
        if current and len(current) + len(sentence) > max_chars:
            pieces.append(current)
            current = ""
        current += sentence
    if current:
        pieces.append(current)
    return [replace(episode, text=piece) for piece in pieces]


def chunk_episodes(episodes: Sequence[Episode], max_chars: int) -> list[list[Episode]]:
    if max_chars < 1:
        raise InvalidInputError("a chunk needs room for at least one character")
    chunks: list[list[Episode]] = []
    current: list[Episode] = []
    size = 0
    for episode in episodes:
        for part in _parts(episode, max_chars):
            if current and size + len(part.text) > max_chars:
                chunks.append(current)
                current, size = [], 0
            current.append(part)
            size += len(part.text)
    if current:
        chunks.append(current)
    return chunks
