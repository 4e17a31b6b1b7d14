"""Chunking episodes for a model's context without splitting a sentence."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstrata.curate.chunking import chunk_episodes, split_sentences
from memstrata.errors import InvalidInputError
from memstrata.ids import new_id
from memstrata.model import Episode, Role, Scope


def _ep(text: str) -> Episode:
    return Episode(
        new_id("ep"),
        Scope("u"),
        "chat",
        "s",
        "a",
        Role.USER,
        text,
        datetime(2024, 1, 1, tzinfo=UTC),
    )


def test_sentences_in_both_languages() -> None:
    text = "I moved. Do you like it?我搬家了。你喜欢吗？\nnew line"
    assert split_sentences(text) == [
        "I moved. ",
        "Do you like it?",
        "我搬家了。",
        "你喜欢吗？\n",
        "new line",
    ]


def test_packing_and_long_episodes() -> None:
    short = [_ep("One. "), _ep("Two. "), _ep("Three. ")]
    assert [len(c) for c in chunk_episodes(short, 12)] == [2, 1]
    long = _ep("A sentence here. " * 10)
    chunks = chunk_episodes([long], 40)
    assert all(p.id == long.id for c in chunks for p in c)
    assert "".join(p.text for c in chunks for p in c) == long.text
    assert all(p.text.endswith(". ") for c in chunks for p in c)
    with pytest.raises(InvalidInputError):
        chunk_episodes(short, 0)


SENTENCES = st.lists(
    st.sampled_from(
        [
            "Short one. ",
            "我今天去了公园。",
            "A much longer sentence that goes on and on. ",
            "Why? ",
            "好！",
        ]
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(SENTENCES, min_size=1, max_size=6), budget=st.integers(5, 200))
def test_no_sentence_is_split_and_nothing_is_lost(texts: list[list[str]], budget: int) -> None:
    episodes = [_ep("".join(t)) for t in texts]
    chunks = chunk_episodes(episodes, budget)
    for episode, sentences in zip(episodes, texts, strict=True):
        parts = [p.text for c in chunks for p in c if p.id == episode.id]
        assert "".join(parts) == episode.text  # nothing lost, order kept
        ends = set()
        position = 0
        for sentence in sentences:
            position += len(sentence)
            ends.add(position)
        cut = 0
        for part in parts[:-1]:
            cut += len(part)
            assert cut in ends  # every cut falls on a sentence end
    for chunk in chunks:
        assert len(chunk) == 1 or sum(len(p.text) for p in chunk) <= budget
