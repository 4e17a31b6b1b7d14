r"""The script ranges every text path uses: which characters are Han, and CJK punctuation.

Users write Chinese, English and both in one sentence, so the extraction rules, the search
tokenizer, the token estimate, tense reading and the benchmark's scoring all ask the same
question of a character: is it a Chinese character? They ask it here, with one answer.

Han ideographs, :data:`HAN`, are three blocks of the Basic Multilingual Plane:

* :data:`HAN_UNIFIED`, CJK Unified Ideographs, U+4E00 to U+9FFF: the characters of everyday
  simplified and traditional Chinese;
* :data:`HAN_EXT_A`, CJK Unified Ideographs Extension A, U+3400 to U+4DBF: rarer characters,
  some of them in names (㐀, 䶮);
* :data:`HAN_COMPAT`, CJK Compatibility Ideographs, U+F900 to U+FAFF: duplicates of unified
  ideographs kept for round trips with older encodings (Big5 and KS X 1001 text brings
  them); NFKC folds most of them to their unified twins.

Every rule uses this one set, the curation rules included: a name in an extension A
character or a compatibility twin is still a Chinese name, and a sentence is not less
Chinese for holding one. (They once read U+4E00 to U+9FFF only; the characters the wider set
adds are rare enough in chat that the handed benchmark reads the same with either.)

Left out, on purpose:

* the supplementary-plane extensions (B onwards, U+20000 and up): rare in chat, and outside
  the blocks the rules and the token estimate were written and fitted on;
* CJK radicals and strokes (U+2E80 to U+2FDF, U+31C0 to U+31EF) and the Yijing hexagram
  symbols (U+4DC0 to U+4DFF, between extension A and the unified block): symbols, not words;
* ideographic zero 〇 (U+3007) and the iteration mark 々 (U+3005), which Unicode gives the
  Han script but which sit among the punctuation below;
* kana and hangul: Japanese and Korean are not Han here (a rule written for Chinese should
  not read kana as a Chinese name), and nothing in memstrata reads them yet.

Punctuation is named apart, for the places that want it with the characters (a run of
Chinese in a mixed sentence goes on across its commas and brackets):

* :data:`CJK_PUNCTUATION`, CJK Symbols and Punctuation, U+3000 to U+303F: the ideographic
  space, 、。〈〉《》「」『』【】〒〜 and their kin;
* :data:`FULLWIDTH`, Halfwidth and Fullwidth Forms, U+FF00 to U+FFEF: ，！？（）：； and the
  fullwidth letters and digits.

The ranges are regex character-class contents, written as ``\u`` escapes: put them inside
brackets, alone or with other characters (``f"[{HAN}A-Za-z]"``). In an ``rf``-string a
quantifier's braces must then be doubled (``rf"[{HAN}]{{2,4}}"``). :data:`HAN_RE` matches one
Han character and :data:`HAN_SPACE` is the pattern of the spaces between two of them (a
chat's pause where a comma would be: "房子定了 三月底交房"). :func:`is_han`,
:func:`has_han` and :func:`han_count` answer the question for a character and a text.

A leaf module: the standard library only.
"""

from __future__ import annotations

import re
from typing import Final

#: CJK Unified Ideographs, U+4E00 to U+9FFF (class contents)
HAN_UNIFIED: Final = r"\u4e00-\u9fff"
#: CJK Unified Ideographs Extension A, U+3400 to U+4DBF (class contents)
HAN_EXT_A: Final = r"\u3400-\u4dbf"
#: CJK Compatibility Ideographs, U+F900 to U+FAFF (class contents)
HAN_COMPAT: Final = r"\uf900-\ufaff"
#: Han ideographs, the one definition: extension A, unified and compatibility (class contents)
HAN: Final = HAN_EXT_A + HAN_UNIFIED + HAN_COMPAT

#: CJK Symbols and Punctuation, U+3000 to U+303F (class contents)
CJK_PUNCTUATION: Final = r"\u3000-\u303f"
#: Halfwidth and Fullwidth Forms, U+FF00 to U+FFEF (class contents)
FULLWIDTH: Final = r"\uff00-\uffef"

#: one Han character
HAN_RE: Final = re.compile(f"[{HAN}]")
#: the spaces between two Han characters (pattern text, for a larger pattern)
HAN_SPACE: Final = rf"(?<=[{HAN}])\s+(?=[{HAN}])"


def is_han(ch: str) -> bool:
    """Whether ``ch`` is one Han character (a string of any other length is not)."""
    return len(ch) == 1 and HAN_RE.match(ch) is not None


def has_han(text: str) -> bool:
    """Whether ``text`` holds at least one Han character."""
    return HAN_RE.search(text) is not None


def han_count(text: str) -> int:
    """How many Han characters ``text`` holds."""
    return len(HAN_RE.findall(text))
