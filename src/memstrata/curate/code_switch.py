"""A mixed clause as the English frames read it: the speaker's Chinese "I" before English words.

Code-switched Chinese and English keeps the Chinese function words and says the content in
English: "我 shellfish allergy", "我做 ICU nurse 在 St Paul's", "我现在是 data scientist at Grab",
"我 just started at Shopify". The English frames (:mod:`memstrata.curate.frames_en`) read clauses
whose subject is "I". :func:`english_reading` gives the clause with that subject, and only the
words that belong to it, in English, where English words follow it: 我 + "X allergy" is "I have
a X allergy"; 我有 is "I have"; 我做 is "I work as"; 我是 is "I'm a" (before an adjective, "I'm");
我 before an English verb or adverb is "I"; 我 before anything else (an adjective, a diet) is
"I'm". 在 between English words, before a name, is "at". What is left in Chinese is a clause
break (", "): the English words are read alone. Nothing else is translated, and a
clause without such a subject has no English reading (None): "我的 doctor", "我们", "我老公 Ben"
are not the speaker as the subject of English words.
"""

from __future__ import annotations

import re
from typing import Final

from memstrata.util.scripts import CJK_PUNCTUATION, FULLWIDTH, HAN

#: the speaker's Chinese "I" as a subject, with the adverbs and the verb that may follow it,
#: right before English words; at the start of the clause or after a space or a stop
_SUBJECT: Final = re.compile(
    r"(?:^|(?<=[\s，,。；;！!？?:：]))我(?:自己)?(?:现在|目前|也|还|都|就|已经|一直|本身)*\s*"
    r"(?P<verb>是|做|有)?\s*(?=[A-Za-z])"
)
#: an allergy named right after the subject ("我 peanut allergy")
_ALLERGY: Final = re.compile(r"[A-Za-z][\w' -]{0,30}?\s+allerg(?:y|ies)\b", re.IGNORECASE)
#: English words that open a predicate with its own verb: the subject is only "I"
_VERBS: Final = frozenset(
    {
        "have",
        "has",
        "had",
        "take",
        "took",
        "taking",
        "work",
        "worked",
        "working",
        "live",
        "lived",
        "living",
        "just",
        "still",
        "also",
        "quit",
        "got",
        "get",
        "love",
        "like",
        "hate",
        "can",
        "can't",
        "cannot",
        "don't",
        "didn't",
        "do",
        "did",
        "need",
        "use",
        "go",
        "went",
        "start",
        "started",
        "move",
        "moved",
        "left",
        "leave",
        "joined",
        "join",
        "eat",
        "drink",
        "run",
        "play",
        "am",
        "was",
        "will",
        "would",
        "never",
        "always",
        "usually",
        "often",
        "recently",
        "finally",
        "already",
        "barely",
        "only",
        "mostly",
        "actually",
        "really",
        "probably",
        "think",
        "feel",
        "felt",
        "know",
        "want",
        "prefer",
        "changed",
        "switched",
        "stopped",
        "gave",
        "give",
        "broke",
        "signed",
        "booked",
        "bought",
        "sold",
        "retired",
        "graduated",
        "became",
        "teach",
        "study",
        "studied",
    }
)
#: the endings of an English adjective after 是 ("我是 lactose intolerant", "我是 diabetic")
_ADJECTIVE: Final = re.compile(r"(?:ic|ant|ent|ive|ous|ful|less|able|ible)$", re.IGNORECASE)
#: a run of Chinese characters and stops left in the reading: a clause break in English
_CHINESE: Final = re.compile(rf"\s*[{CJK_PUNCTUATION}{HAN}{FULLWIDTH}]+\s*")
#: 在 (or Cantonese 喺) between an English word and a name: "ICU nurse 在 St Paul's"
_AT: Final = re.compile(r"(?<=[A-Za-z'.])\s*(?:在|喺)\s*(?=[A-Z])")


def _said(match: re.Match[str], rest: str) -> str:
    """What the subject ``match`` is in English, before the English words ``rest``."""
    verb = match["verb"]
    first = re.match(r"[A-Za-z']+", rest)
    word = first[0].casefold() if first else ""
    if verb == "有":
        return "I have "
    if verb == "做":
        return "I work as "
    if verb == "是":
        return "I'm " if _ADJECTIVE.search(word) else "I'm a "
    if _ALLERGY.match(rest):
        return "I have a "
    if word in _VERBS or word.endswith("ed"):
        return "I "
    return "I'm "


def english_reading(clause: str) -> str | None:
    """``clause`` with the speaker's Chinese subject before English words in English (see the
    module), or None when it has none."""
    if "我" not in clause:
        return None
    out: list[str] = []
    at = 0
    for match in _SUBJECT.finditer(clause):
        out.append(clause[at : match.start()])
        out.append(_said(match, clause[match.end() :]))
        at = match.end()
    if not out:
        return None
    out.append(clause[at:])
    english = _AT.sub(" at ", "".join(out))
    # what is left in Chinese ends the English words before it: "I work as accountant, "
    return _CHINESE.sub(", ", english).strip(" ,")
