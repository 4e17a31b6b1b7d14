"""Who "we" are, when the conversation says it: resolving the speaker's group from context.

"We", "us" and "our" always include the speaker; who else they include is said, if at all,
before the sentence. The resolution is taken only when it is certain:

- the sentence itself says the speaker did it *with* someone of theirs ("after we went camping
  with my fam"): "we" is the speaker, and the companion stays where it was said;
- with no companion named, a past deed told with "we" ("Oh yeah, we went to the beach
  recently") is true of the speaker, who was one of them: "we" is the speaker, unless the verb
  takes more than one (talked, met, hugged...) or "together", "in common", "each other" say so;
- otherwise the nearest context that names a companion of the speaker names exactly one: the
  earlier sentences of the same turn ("Here's a pic of my family camping at the beach. We love
  it"), then the turn before (the listener's, where the companion is the speaker's as seen by
  the listener: "How are your kids?" -> "my kids"), then the speaker's own previous turn.
  Two different companions in the nearest context that names any leave "we" unresolved, and
  so does a third person (he, she, 他, 她) in the sentence: one of "we", or the companion
  who is not ("We were so lucky he was okay").

A resolved sentence is rewritten in the first person singular so that the rest of the pipeline
(discourse filters, third-person rewrite) reads it as about a named group: the first "we" of
the sentence becomes "I and my family" (or "I and Mel"), "us" "me and my family", "our" before
it "my"; later "we", "us", "our" then stand for a group the sentence has named. Sentences that
use "we" for people in general ("we can make a difference") are not resolved: the modal or the
"both", "all", "each other" that marks them keeps them out.

In Chinese, 我们 becomes 我和 + the companion (我的孩子们 ... 我们去了海边 ->
我和孩子们去了海边), unless 都, 大家, 俩, 应该, 可以... mark it as people in general or as speaker
and listener; with no companion, a deed done (了, 过) is the speaker's (我们上周去了海边 ->
我上周去了海边) unless 一起, 互相, 聊, 见面... say it took more than one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from memstrata.util.scripts import HAN, is_han

_KIN: Final = (
    r"family|fam|kids|children|husband|wife|partner|son|daughter|boyfriend|girlfriend|"
    r"fiancée?|hubby|parents|mom|dad|mother|father|brother|sister|siblings|family members|"
    r"friends|buddies|team|crew|band|dog|dogs"
)
_OWN_COMPANION: Final = re.compile(rf"\b[Mm]y ((?:{_KIN}))\b")
_LISTENER_COMPANION: Final = re.compile(rf"\b[Yy]our ((?:{_KIN}))\b")
# "Mel and I", "me and Mel": a named companion.
_NAMED_PAIR: Final = re.compile(r"\b([A-Z][a-z]+) and (?:I|me)\b|\b(?:I|[Mm]e) and ([A-Z][a-z]+)\b")
_NOT_NAMES: Final = frozenset(
    "and but so then yes yeah yup oh well thanks now today yesterday also just".split()  # noqa: SIM905
)
_THIRD_PERSON: Final = re.compile(r"\b(?:he|she|him|her|they|them)\b", re.IGNORECASE)
_WITH_OWN: Final = re.compile(rf"\bwith my (?:{_KIN})\b")
_WE_WORD: Final = re.compile(
    r"\b(?:[Ww]e(?:'re|'ve|'ll|'d)?|[Uu]s|[Oo]ur|[Oo]urs|[Oo]urselves)\b(?!-)"
)
# "we" of people in general, of speaker and listener, or of a group counted: not resolved.
_GENERIC: Final = re.compile(
    r"\b(?:we|us)\s+(?:all|both)\b|\beach other\b|\bone another\b|\blet's\b|"
    r"\bwe(?:'ll)?\s+(?:\w+\s+)?(?:can|could|should|must|need|have to|got to|gotta|"
    r"might|may|ought)\b|\bwe(?:'re| are) (?:not )?alone\b",
    re.IGNORECASE,
)
# "We went to the beach recently": a past deed told with "we" is true of the speaker, who was
# one of them; not when the verb needs two ("we talked", "we met") or "we" were others.
_SPEAKER_DID: Final = re.compile(
    r"[Ww]e (?:just |recently |finally |also |even |then |once |first |all )?"
    r"(?!(?:talked|chatted|met|spoke|agreed|hugged|argued|fought|married|kissed|dated|"
    r"texted|called|messaged|caught up|connected|bonded|disagreed|broke)\b)"
    r"(?:\w{2,}(?<!e)ed|went|got|made|took|saw|ran|began|bought|had|did|found|gave|won|lost|"
    r"wrote|built|left|came|brought|sold|spent|sang|drew|flew|drove|swam|grew|heard|kept|ate|"
    r"threw|held|rode|sat|stood|wore|fought|caught|beat|hit|taught|slept|woke|hung)\b(?!')"
)
_TOGETHER: Final = re.compile(r"\b(?:together|in common|each ?other|one another)\b", re.I)


def _speaker_did(sentence: str) -> bool:
    """Whether every "we" of ``sentence`` tells a past deed of the speaker's (see
    ``_SPEAKER_DID``), with nothing that says it took more than one."""
    subjects = list(re.finditer(r"\b[Ww]e\b(?!')", sentence))
    if not subjects or _TOGETHER.search(sentence):
        return False
    return all(_SPEAKER_DID.match(sentence, m.start()) for m in subjects)


_EXPAND: Final = {"we're": "are", "we've": "have", "we'll": "will"}


def companions(text: str, *, own: bool = True) -> set[str]:
    """The speaker's companions ``text`` names, as the speaker would say them ("my kids",
    "Mel", "孩子"): from the speaker's own words when ``own``, else from the listener's ("your
    kids", "你老公")."""
    found = {f"my {m.group(1).lower()}" for m in (_OWN if own else _OTHER).finditer(text)}
    found |= {m.group(1) for m in (_OWN_ZH if own else _OTHER_ZH).finditer(text)}
    if own:
        names = (m.group(1) or m.group(2) for m in _NAMED_PAIR.finditer(text))
        found |= {n for n in names if n.lower() not in _NOT_NAMES}
    return found


_OWN = _OWN_COMPANION
_OTHER = _LISTENER_COMPANION
_KIN_ZH: Final = (
    r"家人|家里人|孩子们|孩子|儿子|女儿|老公|老婆|丈夫|妻子|爱人|男朋友|女朋友|对象|父母|爸妈|"
    r"爸爸|妈妈|哥哥|姐姐|弟弟|妹妹|朋友们|同事们|团队|队友们"
)
_OWN_ZH: Final = re.compile(rf"我(?!们)(?:的|和|跟)?({_KIN_ZH})")
_OTHER_ZH: Final = re.compile(rf"[你您]的?({_KIN_ZH})")
_WE_ZH: Final = re.compile(r"我们|咱们")
# 我们 of people in general or of speaker and listener: 大家, 一起努力, 都, 应该, 可以...
_GENERIC_ZH: Final = re.compile(r"(?:我们|咱们)(?:都|大家|俩|两个|一起努力|应该|可以|能|要|得)")
_THIRD_PERSON_ZH: Final = re.compile(r"[他她]")
# 我们 + a deed done (了, 过): "我们上周去了海边"; not one that takes two or says 一起.
_SPEAKER_DID_ZH: Final = re.compile(rf"(?:我们|咱们)[^，。！？,.!?]{{0,12}}?[{HAN}](?:了|过)")
_TOGETHER_ZH: Final = re.compile(r"一起|互相|彼此|聊|见面|认识|吵架|结婚|在一起|共同")


def companion_in(context: Sequence[tuple[str, bool]]) -> str | None:
    """The one companion named in the nearest ``(text, own)`` of ``context`` that names any;
    None when none does or the nearest names several."""
    for text, own in context:
        found = companions(text, own=own)
        if found:
            return next(iter(found)) if len(found) == 1 else None
    return None


def resolve_we(sentence: str, companion: str | None) -> str:
    """``sentence`` with its "we" said as the speaker and ``companion`` (see the module), or
    unchanged when "we" cannot be resolved for certain."""
    if _WE_ZH.search(sentence):
        return _resolve_we_zh(sentence, companion)
    first = _WE_WORD.search(sentence)
    if first is None or _GENERIC.search(sentence):
        return sentence
    if _THIRD_PERSON.search(sentence):
        return sentence  # "I sat with her and we talked", "we were so lucky he was okay"
    if _WITH_OWN.search(sentence, first.end()):
        return _WE_WORD.sub(_singular, sentence)
    if companion is None and _speaker_did(sentence):
        return _WE_WORD.sub(_singular, sentence)
    if companion is None or _is_cjk(companion):
        return sentence  # a companion said in Chinese is not put into an English sentence
    out = sentence
    while (match := _WE_WORD.search(out)) and match.group().lower() in ("our", "ours"):
        mine = "my" if match.group().lower() == "our" else "mine"
        out = out[: match.start()] + _case(mine, match.group()) + out[match.end() :]
    match = _WE_WORD.search(out)
    if match is None:
        return out
    word = match.group().lower()
    if word in ("ourselves", "we'd"):
        return sentence
    group = f"{companion} and I" if companion[:1].isupper() else f"I and {companion}"
    if word == "us":
        group = f"{companion} and me" if companion[:1].isupper() else f"me and {companion}"
    elif word in _EXPAND:
        group = f"{group} {_EXPAND[word]}"
    if match.start() == 0 or out[: match.start()].rstrip().endswith((".", "!", "?")):
        group = group[0].upper() + group[1:]
    return out[: match.start()] + group + out[match.end() :]


def _case(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


_SINGULAR: Final = {
    "we": "I",
    "we're": "I'm",
    "we've": "I've",
    "we'll": "I'll",
    "we'd": "I'd",
    "us": "me",
    "our": "my",
    "ours": "mine",
    "ourselves": "myself",
}


def _singular(match: re.Match[str]) -> str:
    word = match.group()
    out = _SINGULAR[word.lower()]
    return out if out.startswith("I") else _case(out, word)


def _resolve_we_zh(sentence: str, companion: str | None) -> str:
    """我们 as 我和 + the companion ("我们去了海边" -> "我和孩子去了海边"), under the same
    conditions as in English; a companion said in English is not used."""
    if _GENERIC_ZH.search(sentence) or _THIRD_PERSON_ZH.search(sentence):
        return sentence
    if companion is None and _SPEAKER_DID_ZH.search(sentence) and not _TOGETHER_ZH.search(sentence):
        return _WE_ZH.sub("我", sentence)
    if companion is None or not _is_cjk(companion):
        return sentence
    return _WE_ZH.sub(f"我和{companion}", sentence)


def _is_cjk(text: str) -> bool:
    return all(is_han(ch) for ch in text)
