"""Chinese as the offline rules read it: simplified characters, and written Cantonese's
function words in their Mandarin forms.

The readers of :mod:`memstrata.curate.frames_zh` and the lexicon are written in simplified
Mandarin. A turn in traditional characters ("我對花生過敏", "醫生話係甲減") or in written
Cantonese ("驗咗血", "佢唔食得蝦") is read in that form: :func:`as_read` converts its
characters with OpenCC (``t2s``, a phrase-aware table) and puts the commonest Cantonese words
in Mandarin (咗 了, 係 是, 唔 不, 喺 在, 佢 他, 冇 没有, 話 说 before a clause, 食 吃 before a
medicine or a meal...), only when the turn holds a word that only Cantonese writes. A fact
read from such a turn is said in simplified Mandarin; the turn it cites keeps every word as
written. Pure apart from OpenCC's table, loaded once on first use; where OpenCC is missing
(an install without it), the characters are read as written and the Cantonese words still
put in Mandarin.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any, Final

from memstrata.util.scripts import has_han

log = logging.getLogger(__name__)

#: words only written Cantonese uses: a turn holding one is read as Cantonese
_CANTONESE: Final = re.compile(r"[咗嘅喺佢冇啲嘢畀嚟哋噉乜攰]|係|唔|睇|琴日|聽日|而家|屋企|鍾意")
#: Cantonese words and their Mandarin forms, longest first (a word of two before its parts)
_TO_MANDARIN: Final = (
    ("佢哋", "他们"),
    ("我哋", "我们"),
    ("你哋", "你们"),
    ("琴日", "昨天"),
    ("尋日", "昨天"),
    ("聽日", "明天"),
    ("而家", "现在"),
    ("屋企", "家"),
    ("鍾意", "喜欢"),
    ("朝早", "早上"),
    ("佢", "他"),
    ("咗", "了"),
    ("嘅", "的"),
    ("喺", "在"),
    ("唔", "不"),
    ("冇", "没有"),
    ("啲", "些"),
    ("嘢", "东西"),
    ("畀", "给"),
    ("睇", "看"),
    ("嚟", "来"),
)
#: what one cannot eat, said the Cantonese way
_CANNOT_EAT: Final = (("唔食得", "不能吃"), ("食唔得", "不能吃"), ("唔可以食", "不能吃"))
#: 話 "says" before what is said (醫生話係…, 我媽話…), 係 "is", 食 "eat" or "take"
_SAYS: Final = re.compile(r"話(?=\s*(?:係|佢|我|你|要|唔|一|冇|可以|最好))")
_IS: Final = re.compile(r"(?<![關关聯联干幹])係")  # not the 係 of 關係
_EATS: Final = re.compile(r"食(?=[藥药飯饭嘢咗了完過过緊紧得開开])")


def as_read(text: str) -> str:
    """``text`` as the rules read it: Cantonese words in Mandarin, then simplified
    characters (see the module). The same text when it has no Chinese to convert."""
    if not has_han(text):
        return text
    if _CANTONESE.search(text):
        for word, mandarin in _CANNOT_EAT:
            text = text.replace(word, mandarin)
        text = _EATS.sub("吃", _IS.sub("是", _SAYS.sub("说", text)))
        for word, mandarin in _TO_MANDARIN:
            text = text.replace(word, mandarin)
    return simplified(text)


def simplified(text: str) -> str:
    """``text`` in simplified characters (OpenCC ``t2s``); as written where OpenCC is
    missing."""
    converter = _converter()
    if converter is None:
        return text
    return str(converter.convert(text))


@lru_cache(maxsize=1)
def _converter() -> Any:
    try:
        import opencc
    except ImportError:  # an install without it: read as written, said once
        log.warning("opencc is not installed: traditional characters are read as written")
        return None
    return opencc.OpenCC("t2s")
