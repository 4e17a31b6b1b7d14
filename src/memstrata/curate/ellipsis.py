"""A fragment that adds one more thing to the statement before it, read as that statement.

People list what matters in pieces: "I'm allergic to penicillin. Sulfa too.", "I take
metformin. And lisinopril.", "Oh and latex too", "我对花生过敏。还有芒果。", "芒果也是。". The
fragment has no verb of its own; it says the statement before it again of another thing. Read
alone it says nothing, and an allergy said that way was lost.

:func:`added` gives the thing a fragment adds ("Sulfa", "芒果"), or None when the sentence is
no such fragment. :func:`said_again` writes the statement before it of that thing: the value a
state was read from in that statement is replaced by the added thing ("I'm allergic to
penicillin." + "Sulfa" -> "I'm allergic to Sulfa."), which the frames then read as they read
any statement. What it adds must be a thing and not a person: "Me too", "Mike too" and "我老公也
是" change who the statement is about, not what, and are no such fragment here; a capitalised
word is taken only when the lexicon knows it (an allergen, a medicine, a condition, a drink,
a pastime), for a name opens a fragment the same way. Pure: no store, no model.
"""

from __future__ import annotations

import re
from typing import Final

from memstrata.curate import lexicon
from memstrata.util.scripts import HAN

#: the words a fragment may hedge with after what it adds ("Gluten too, I think.")
_HEDGE_EN: Final = r"(?:,?\s*(?:I think|I guess|I believe|apparently|actually|probably|maybe))?"
_THING_EN: Final = r"(?P<thing>[A-Za-z][\w'-]*(?:\s+[A-Za-z][\w'-]*){0,3}?)"
_ADDED_EN: Final = (
    # "And lisinopril.", "Also latex.", "Oh and latex too", "Plus ibuprofen as well"
    re.compile(
        rf"^(?:oh,?\s+|oh and\s+|and\s+|also,?\s+|plus\s+)+(?:also\s+)?{_THING_EN}"
        rf"(?:,?\s+(?:too|as well|also))?{_HEDGE_EN}\s*[.!~]*$",
        re.IGNORECASE,
    ),
    # "Sulfa too.", "Gluten as well, I think."
    re.compile(rf"^{_THING_EN},?\s+(?:too|as well|also){_HEDGE_EN}\s*[.!~]*$", re.IGNORECASE),
)
_THING_ZH: Final = rf"(?P<thing>[{HAN}A-Za-z][{HAN}A-Za-z\s'-]{{0,11}}?)"
_ADDED_ZH: Final = (
    # "还有芒果。", "对了，还有芒果", "另外还有布洛芬"
    re.compile(
        rf"^(?:对了|哦|噢|另外|然后)?[，,\s]*(?:还有|以及|加上){_THING_ZH}(?:也是|也)?"
        r"(?:吧|啦|哈)?[。！!.~～]*$"
    ),
    # "芒果也是。", "芒果也一样"
    re.compile(rf"^(?:对了|哦|噢|另外)?[，,\s]*{_THING_ZH}也(?:是|一样)(?:的)?[。！!.~～]*$"),
)
#: what a person is, not a thing: a fragment that names one changes whom the statement is of
_PEOPLE_EN: Final = frozenset(
    {"me", "i", "you", "him", "her", "them", "us", "we", "he", "she", "they", "mine", "same"}
)
_PERSON_OPENS_EN: Final = re.compile(r"^(?:my|his|her|our|their|your|the)\b", re.IGNORECASE)
_PERSON_ZH: Final = re.compile(r"^(?:我|你|他|她|它|咱|大家|家里|孩子|宝宝)")
#: the tables whose words are things a statement may be said again of
_TABLES: Final = (
    lexicon.FOODS,
    lexicon.CONDITIONS,
    lexicon.MEDICATIONS,
    lexicon.DIETS,
    lexicon.DRINKS,
    lexicon.PASTIMES,
)


def _known(thing: str) -> bool:
    """Whether the lexicon names ``thing`` whole: an allergen, a medicine, a condition..."""
    if lexicon.is_medication(thing):
        return True
    folded = thing.casefold()
    return any(folded in (w.casefold() for w in words) for t in _TABLES for words in t.values())


def _kin(thing: str) -> bool:
    folded = thing.casefold()
    return (
        folded in lexicon.RELATIONS_EN
        or folded in lexicon.RELATIONS_ZH
        or any(folded.startswith(word) for word in lexicon.RELATIONS_ZH)
    )


def added(sentence: str) -> str | None:
    """The thing ``sentence`` adds to the statement before it, when it is only that ("Sulfa
    too." -> "Sulfa", "还有芒果。" -> "芒果"); None for any other sentence, and for a fragment
    that names a person ("Me too", "Mike too", "我老公也是")."""
    text = sentence.strip()
    if not text or len(text) > 60:
        return None
    for pattern in (*_ADDED_EN, *_ADDED_ZH):
        match = pattern.match(text)
        if match is None:
            continue
        thing = match["thing"].strip()
        ascii_thing = thing.isascii()
        if ascii_thing:
            words = thing.casefold().split()
            if words[0] in _PEOPLE_EN or _PERSON_OPENS_EN.match(thing):
                return None
            if lexicon.common(thing) and not _known(thing):
                return None  # "And then.", "Also yes": no thing named
            if thing[:1].isupper() and not _known(thing):
                return None  # a name opens a fragment the same way ("Mike too")
        elif _PERSON_ZH.match(thing) or (not _known(thing) and _kin(thing)):
            return None
        if _kin(thing):
            return None
        if match.start("thing") == 0 and ascii_thing and thing[1:] == thing[1:].lower():
            thing = thing[:1].lower() + thing[1:]  # capitalised as the sentence's first word
        return thing
    return None


def said_again(statement: str, value: str, thing: str) -> str | None:
    """``statement`` said of ``thing`` in place of ``value``, the value a state was read from
    in it ("I'm allergic to penicillin." with "Sulfa" -> "I'm allergic to Sulfa."); None when
    ``value`` is not in its words, or already names ``thing``."""
    if not value or thing.casefold() in value.casefold():
        return None
    at = statement.casefold().find(value.casefold())
    if at < 0:
        return None
    # of a value that says more than the thing ("lactose intolerant"), only the thing
    start, end = _thing_in(value)
    return f"{statement[: at + start]}{thing}{statement[at + end :]}"


def _thing_in(value: str) -> tuple[int, int]:
    """Where the lexicon's longest word stands in ``value`` ("lactose" of "lactose
    intolerant"), or the whole of it when it holds none or is that word."""
    folded = value.casefold()
    best = (0, len(value))
    longest = 0
    for table in _TABLES:
        for words in table.values():
            for word in words:
                w = word.casefold()
                if len(w) <= longest or w == folded:
                    continue
                pattern = rf"(?<![\w-]){re.escape(w)}(?![\w-])" if w.isascii() else re.escape(w)
                if found := re.search(pattern, folded):
                    best, longest = found.span(), len(w)
    return best
