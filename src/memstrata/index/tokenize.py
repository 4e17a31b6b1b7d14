"""Tokenization for lexical search, for English, Chinese and text that mixes them.

* Latin-script words: lowercased (after NFKC, so full-width letters fold), a trailing ``'s``
  style suffix dropped, English stopwords removed, Snowball-stemmed. A hyphenated word gives
  its parts and the joined form (``de-stress``: ``de``, ``stress``, ``destress``).
* CJK runs: every character except a few function characters, plus every overlapping pair of
  characters (bigrams). Character n-grams need no dictionary and no model, match across word
  boundaries a segmenter would get wrong, and the bigrams restore most of the precision that
  single characters lose.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from functools import lru_cache
from typing import Any, Final

from memstrata.util.scripts import HAN, is_han

_TOKEN_RE: Final = re.compile(rf"[{HAN}]+|[a-z0-9]+(?:-[a-z0-9]+)*(?:'[a-z]+)?")

_STOPWORD_TEXT: Final = (
    "a about above after again against all am an and any are aren't as at be because been "
    "before being below between both but by can can't cannot could couldn't did didn't do does "
    "doesn't doing don't down during each few for from further had hadn't has hasn't have "
    "haven't having he he'd he'll he's her here here's hers herself him himself his how how's i "
    "i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my "
    "myself no nor not of off on once only or other ought our ours ourselves out over own same "
    "shan't she she'd she'll she's should shouldn't so some such than that that's the their "
    "theirs them themselves then there there's these they they'd they'll they're they've this "
    "those through to too under until up very was wasn't we we'd we'll we're we've were weren't "
    "what what's when when's where where's which while who who's whom why why's with won't "
    "would wouldn't you you'd you'll you're you've your yours yourself yourselves s t d ll m re "
    "ve just also really yeah yes oh hey hi wow "
)
STOPWORDS: Final = frozenset(_STOPWORD_TEXT.split(" ")) - {""}

CJK_STOP_CHARS: Final = frozenset(
    "的了是我你他她它们在和有也就都这那吗呢吧啊呀哦嗯哈很会要说一个不没着给让把被对为与及还又么什怎样啦嘛得地之"
)

_stemmer_lock = threading.Lock()
_stemmer: Any = None


def _stem_words(words: list[str]) -> list[str]:
    global _stemmer
    if _stemmer is None:
        with _stemmer_lock:
            if _stemmer is None:
                import Stemmer

                _stemmer = Stemmer.Stemmer("english")
    return list(_stemmer.stemWords(words))


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stem_words([word])[0]


def tokenize(text: str) -> list[str]:
    """The lexical tokens of ``text``, in order (terms may repeat)."""
    normalized = unicodedata.normalize("NFKC", text).lower()
    out: list[str] = []
    for match in _TOKEN_RE.finditer(normalized):
        token = match.group(0)
        if is_han(token[0]):
            out.extend(ch for ch in token if ch not in CJK_STOP_CHARS)
            out.extend(token[i : i + 2] for i in range(len(token) - 1))
        else:
            word = token.split("'", 1)[0]
            if token in STOPWORDS:
                continue
            parts = word.split("-")
            if len(parts) > 1:
                out.append(_stem("".join(parts)))
            out.extend(_stem(p) for p in parts if p not in STOPWORDS)
    return out
