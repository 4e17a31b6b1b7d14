"""Whether a document is about a short query (a topic name), in any language the model knows.

Raw cosines do not answer it: for a one-word query e5 puts related and unrelated documents
alike between 0.8 and 0.9, and some documents sit near every word. So each document is
measured against itself: its best cosine to the query is compared with its best cosines to
:data:`REFERENCE_WORDS`, everyday topic names in English and Chinese, and scored as a z-score
(a blend: the mean of its models' z-scores). A document is about the query when the score
reaches :data:`NEAR`.

Calibration (one- and two-word names in both languages against topic documents in either
language, and 43 unrelated words such as astronomy, 税务, opera; measured with the default
e5 + USE blend): at 1.25, 88% of related pairs on a set of nine tidy topics and 60% on short
extracted ones ("The user下个月打算去京都旅行。" is found by "travel" and "trip", not by "旅游"),
while 3 and 4 of the 43 unrelated words reach some topic. The hashing fake is no semantic
model: for it a document is near when it shares the query's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
from numpy.typing import NDArray

from memstrata.embed.base import embed_queries
from memstrata.embed.blend import BlendEmbedder
from memstrata.ports import Embedder

NEAR: Final = 1.25
_TOPIC_NAMES: Final = (  # everyday topics, in English and Chinese
    ("weather", "天气"),
    ("news", "新闻"),
    ("shopping", "购物"),
    ("sports", "体育"),
    ("music", "音乐"),
    ("movies", "电影"),
    ("books", "读书"),
    ("cooking", "烹饪"),
    ("health", "健康"),
    ("money", "理财"),
    ("cars", "汽车"),
    ("travel", "旅行"),
    ("work", "工作"),
    ("school", "学校"),
    ("family", "家庭"),
    ("friends", "朋友"),
    ("pets", "宠物"),
    ("games", "游戏"),
    ("science", "科学"),
    ("history", "历史"),
    ("politics", "政治"),
    ("art", "艺术"),
    ("fashion", "时尚"),
    ("home", "家居"),
    ("technology", "科技"),
    ("law", "法律"),
    ("food", "美食"),
    ("fitness", "健身"),
    ("language", "语言"),
    ("holidays", "节日"),
    ("nature", "自然"),
    ("love", "爱情"),
)
REFERENCE_WORDS: Final = tuple(word for pair in _TOPIC_NAMES for word in pair)


_REFERENCES: dict[str, NDArray[np.float32]] = {}  # model name -> its reference word vectors


def _references(part: Embedder) -> NDArray[np.float32]:
    """The reference words as queries of ``part``, computed once per model and process."""
    found = _REFERENCES.get(part.name)
    if found is None:
        found = _REFERENCES[part.name] = embed_queries(part, REFERENCE_WORDS, "question")
    return found


def nearness(embedder: Embedder, query: str, documents: Sequence[Sequence[str]]) -> list[float]:
    """For each document (given as its texts: title, passages), how much nearer it is to
    ``query`` than to everyday topic names, in standard deviations; near from :data:`NEAR`."""
    parts = embedder.parts if isinstance(embedder, BlendEmbedder) else (embedder,)
    scores = np.zeros(len(documents))
    for part in parts:
        queries = np.vstack([embed_queries(part, [query], "question"), _references(part)])
        for i, texts in enumerate(documents):
            if not texts:
                scores[i] = -np.inf
                continue
            best = (part.embed_documents(texts) @ queries.T).max(axis=0)
            null = best[1:]
            scores[i] += (best[0] - float(null.mean())) / max(float(null.std()), 1e-3)
    return [float(s) / len(parts) for s in scores]
