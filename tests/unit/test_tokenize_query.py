"""Tokenization and query analysis, for English, Chinese and dialogues."""

from __future__ import annotations

from memstrata.embed.fake import HashingEmbedder
from memstrata.index.config import RankingConfig
from memstrata.index.query import build_query, split_dialogue
from memstrata.index.tokenize import tokenize


def test_english_stems_and_drops_stopwords() -> None:
    assert tokenize("The puppies were running in the gardens") == ["puppi", "run", "garden"]


def test_hyphenated_words_give_parts_and_joined_form() -> None:
    assert tokenize("de-stress") == ["destress", "de", "stress"]


def test_chinese_gives_characters_and_bigrams() -> None:
    tokens = tokenize("我喜欢喝茶")
    assert "喜" in tokens and "喜欢" in tokens and "喝茶" in tokens
    assert "我" not in tokens  # a function character alone is dropped, but bigrams keep it
    assert "我喜" in tokens


def test_mixed_and_full_width_text() -> None:
    tokens = tokenize("Deploy到ＰＲＯＤＵＣＴＩＯＮ之前")
    assert "deploy" in tokens and "product" in tokens and "之前" in tokens


def test_dialogue_queries_are_split_into_weighted_lines() -> None:
    config = RankingConfig()
    lines = split_dialogue(
        "Bart: 元旦晚会我要表演魔术！\nAssistant: 真是太棒了！\nBart: 我有点紧张", config
    )
    assert [(line.speaker, line.weight) for line in lines] == [
        ("Bart", 1.0),
        ("Assistant", 0.5),
        ("Bart", 1.0),
    ]
    assert split_dialogue("When did Caroline go to the support group?", config) == ()


def test_term_weights_add_up_over_lines() -> None:
    config = RankingConfig()
    query = build_query(
        "Bart: magic show\nAssistant: a magic trick\nBart: I am nervous",
        HashingEmbedder(dim=16),
        config,
    )
    weights = query.term_weights()
    assert weights["magic"] == 1.5 and weights["trick"] == 0.5 and weights["nervous"] == 1.0
    assert len(query.line_vectors) == 3 and query.is_dialogue
    plain = build_query("magic magic show", HashingEmbedder(dim=16), config)
    assert plain.term_weights() == {"magic": 1.0, "show": 1.0} and not plain.is_dialogue
