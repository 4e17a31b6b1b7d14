"""Pure detectors of facts that are not memory yet, in English and Chinese.

Each takes a fact's text (and, for the dangling referent, the name the fact is about) and
says whether the fact shows the flaw; none needs a model.

* ``dangling_referent``: a subject or object pronoun (it, this, that, they, them, we, us;
  它, 这个, 那个, 他们, 她们, 我们...) with no named referent before it in the fact: no noun
  phrase (``a``/``the``/``her`` + word, ``X's`` + word, a name other than the fact's own
  subject; a Chinese measure word + noun, ``的`` + noun). *we*, *us* and *our* always dangle:
  a fact in the third person never names who they are. ``this``/``that`` count only as
  pronouns (``love this!``, ``that was fun``), not as determiners (``this book``, ``these
  critters``) or conjunctions (``love that you chose``).
* ``addresses_listener``: second person left in (you, your, 你, 您).
* ``is_question``: a question mark, or a Chinese sentence ending in 吗 / 呢.
* ``broken_verb``: a third-person singular subject (a name, *The user*, he, she) opening a
  clause, followed by a bare verb (``Melanie love``, ``The user really enjoy``), as a rewriting
  from *I* leaves it. English only: Chinese verbs do not agree.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memstrata.util.scripts import HAN


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_WORD: Final = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?|[^\sA-Za-z]")

ALWAYS_DANGLING: Final = _set("we us our ours")
_PRONOUNS: Final = _set("it they them")
_DEMONSTRATIVES: Final = _set("this that")
_PLURAL_DEMONSTRATIVES: Final = _set("these those")
_IRREGULAR_PLURALS: Final = _set("people children men women")
_DETERMINERS: Final = _set(
    "a an the his her their its my your our some any every each another one two three four "
    "five several many this that these those"
)
# after "this"/"that" these words show a pronoun, not a determiner or a conjunction
_PRONOUN_NEXT: Final = _set(
    "is was 's are were will would can could has had does did made makes means meant sounds "
    "sounded looks looked seems seemed feels felt helps helped gives gave for to with in on "
    "at of about so too really again yesterday today now together out up off before after "
    "one and but or"
)
SECOND_PERSON: Final = _set("you your yours yourself yourselves ya")
_THIRD_SINGULAR: Final = _set("he she")
_ADVERBS: Final = _set(
    "really also just always often never still usually sometimes actually truly definitely "
    "totally absolutely especially"
)
_BARE_VERBS: Final = _set(
    "love like enjoy want need have do go think feel hope plan prefer hate know live work "
    "make take get see try keep wish find play miss mean believe say adore dislike remember "
    "agree appreciate value care look use own run paint read write cook swim travel visit "
    "stay spend collect watch listen teach learn study volunteer fear admire dream am"
)
_NOT_OPENING_NOUNS: Final = _set(
    "last next this that these those after before when while since by but and so well yes "
    "yeah yep thanks thank sure oh hey wow also then now today yesterday tonight"
)
_CLAUSE_OPENERS: Final = _set(
    "but so because while when whenever if since as until though although once before after where"
)
_NOT_NAMES: Final = _ADVERBS | _set("i we you they these those both people kids all many some most")

CJK_PRONOUN: Final = re.compile(r"它们|它|他们|她们|这个|那个|这些|那些|我们|咱们")
_CJK_DEMONSTRATIVE: Final = _set("这个 那个 这些 那些")
# a demonstrative followed by one of these (or by nothing) stands alone as a pronoun
_CJK_PRONOUN_NEXT: Final = re.compile(r"^(?:$|[，。！？,.!?；;、\s]|[是很真太就也都让令对挺还])")
_CJK_REFERENT: Final = re.compile(
    rf"[一二两三四五六七八九十几每][个只条本位家部件辆台张座所间门首幅]\S|的[{HAN}]"
)
CJK_SECOND_PERSON: Final = re.compile(r"[你您]")
_CJK_QUESTION: Final = re.compile(r"[吗呢][。！!]?\s*$")


@dataclass(frozen=True, slots=True)
class Flaws:
    """The flaws one fact shows."""

    dangling: bool
    listener: bool
    question: bool
    broken_verb: bool

    @property
    def any(self) -> bool:
        return self.dangling or self.listener or self.question or self.broken_verb


def assess(text: str, subject: str | None = None) -> Flaws:
    """Every detector at once."""
    return Flaws(
        dangling_referent(text, subject),
        addresses_listener(text),
        is_question(text),
        broken_verb(text, subject),
    )


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace("\u2019", "'"))


def _has_referent(before: list[str], own: set[str], known_subject: bool) -> bool:
    """Whether the words before a pronoun name something it can stand for. A capitalized word
    opening the sentence counts only when the fact's subject is known to be another."""
    for i, word in enumerate(before):
        lower = word.lower()
        follows = i + 1 < len(before) and before[i + 1].isalpha()
        if (lower in _DETERMINERS or lower.endswith("'s")) and follows:
            return True
        opening_ok = i > 0 or (known_subject and _noun_like_opening(before))
        if opening_ok and word[:1].isupper() and word.isalpha() and lower not in own:
            return True
    return False


def _noun_like_opening(words: list[str]) -> bool:
    """Whether the word opening a sentence reads as a noun (``Nature inspires``), not an
    adverb or an interjection (``Lately``, ``Absolutely,``, ``Last Friday``)."""
    first = words[0].lower()
    if first.endswith("ly") or first in _NOT_OPENING_NOUNS:
        return False
    return not (len(words) > 1 and words[1] in (",", "!", "-"))


def dangling_referent(text: str, subject: str | None = None) -> bool:
    """A pronoun standing for something the fact does not name (``It's special to Melanie.``,
    ``they keep Melanie motivated.``, ``Lin Wei很喜欢这个。``)."""
    own = {w.lower() for w in _words(subject or "")} | {"user"}
    for sentence in re.split(r"(?<=[.!?;])\s+", text):
        words = _words(sentence)
        for i, word in enumerate(words):
            lower = word.lower().split("'", 1)[0]
            if lower in ALWAYS_DANGLING:
                return True
            if lower in _DEMONSTRATIVES:
                following = words[i + 1].lower() if i + 1 < len(words) else ""
                if following.isalpha() and following not in _PRONOUN_NEXT:
                    continue  # "this book", "love that you chose"
            elif lower in _PLURAL_DEMONSTRATIVES:
                following = words[i + 1].lower() if i + 1 < len(words) else ""
                if _plural_noun(following):
                    continue  # "these critters", "those people"
            elif lower == "there":
                if _there_for_no_place(words, i):
                    return True
                continue
            elif lower not in _PRONOUNS:
                continue
            if not _has_referent(words[:i], own, bool(subject)):
                return True
    return _cjk_dangling(text, subject or "")


#: what follows an existential "there" ("there is", "there's been")
_EXISTENTIAL: Final = _set(
    "is are was were 's will would has have had seems seem must might may could should can "
    "used isn't aren't wasn't weren't"
)
#: words before an idiomatic "there" ("out there", "over there", "here and there")
_THERE_IDIOMS: Final = _set("out over and get got getting almost nearly halfway")


def dangling_there(sentence: str) -> bool:
    """Whether a "there" of ``sentence`` stands for a place it does not name ("my parents are
    there"); the one test, for extraction (:func:`memstrata.curate.discourse.dangling`) as for
    what is served."""
    words = _words(sentence)
    return any(w.lower() == "there" and _there_for_no_place(words, i) for i, w in enumerate(words))


def _there_for_no_place(words: Sequence[str], i: int) -> bool:
    """Whether ``words[i]``, a "there" ("there's" is existential), stands for a place the words
    before it do not name; "there is", "out there" and a place named before are none."""
    if words[i].lower() != "there" or i == 0:
        return False
    following = words[i + 1].lower() if i + 1 < len(words) else ""
    if following in _EXISTENTIAL or words[i - 1].lower() in _THERE_IDIOMS:
        return False
    return not _place_before(words[:i])


def _place_before(words: Sequence[str]) -> bool:
    """Whether a place is named before a "there" (a capitalised word after in, at, to,
    from), so that the "there" stands for it."""
    for i in range(1, len(words)):
        if words[i - 1].lower() in ("in", "at", "to", "from", "near") and words[i][:1].isupper():
            return True
    return False


def _plural_noun(word: str) -> bool:
    """Whether ``word`` reads as a plural noun after *these* / *those*."""
    if word in _IRREGULAR_PLURALS:
        return True
    return word.isalpha() and word.endswith("s") and word not in _PRONOUN_NEXT


def _cjk_dangling(text: str, subject: str) -> bool:
    for match in CJK_PRONOUN.finditer(text):
        pronoun = match.group(0)
        if pronoun in ("我们", "咱们"):
            return True
        if pronoun in _CJK_DEMONSTRATIVE and not _CJK_PRONOUN_NEXT.match(text[match.end() :]):
            continue  # 这个城市: a determiner
        before = text[: match.start()]
        if subject:
            before = before.replace(subject, " ")
        if not _CJK_REFERENT.search(before):
            return True
    return False


def addresses_listener(text: str) -> bool:
    """Second person left in: the fact speaks to whoever listened (``Caroline love that you
    chose pottery for your art.``, ``你的画真好看``)."""
    if any(w.lower().split("'", 1)[0] in SECOND_PERSON for w in _words(text)):
        return True
    return bool(CJK_SECOND_PERSON.search(text))


def is_question(text: str) -> bool:
    """A question, not a statement (``What got you into painting?``, ``你去过黄山吗``)."""
    stripped = text.strip()
    return "?" in stripped or "？" in stripped or bool(_CJK_QUESTION.search(stripped))


def broken_verb(text: str, subject: str | None = None) -> bool:
    """A singular subject with a bare verb (``The user love``, ``Melanie love camping``). With
    the fact's ``subject`` known, only its name counts as a name; else any capitalized word."""
    words = _words(text)
    names = _words(subject) if subject else None
    for i, word in enumerate(words):
        if word.lower() not in _BARE_VERBS:
            continue
        j = i - 1
        while j >= 0 and words[j].lower() in _ADVERBS:
            j -= 1
        if j >= 0 and _singular_subject_ends_at(words, j, names):
            return True
    return False


def _name_like(word: str) -> bool:
    """A capitalized word that can be a name (not a pronoun, adverb or gerund)."""
    return (
        word[:1].isupper()
        and word.isalpha()
        and word.lower() not in _NOT_NAMES
        and not word.endswith("ing")
    )


def _singular_subject_ends_at(words: list[str], j: int, names: list[str] | None) -> bool:
    """Whether ``words[j]`` ends a third-person singular subject that opens a clause."""
    word = words[j]
    if word.lower() in _THIRD_SINGULAR:
        start = j
    elif word == "user" and j > 0 and words[j - 1] == "The":
        start = j - 1
    elif names is not None:
        start = j - len(names) + 1
        if start < 0 or words[start : j + 1] != names:
            return False
    elif _name_like(word):
        two_words = j > 0 and words[j - 1][:1].isupper() and words[j - 1].isalpha()
        start = j - 1 if two_words else j
    else:
        return False
    if start == 0:
        return True
    before = words[start - 1]
    if before in (".", "!", "?", ";", ",", "-") or before.lower() in _CLAUSE_OPENERS:
        return True
    if before.lower() == "and":  # "Ana and Ben love": a plural subject
        return not (start > 1 and words[start - 2][:1].isupper())
    return False
