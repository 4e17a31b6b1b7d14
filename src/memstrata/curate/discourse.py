"""Discourse filters for the offline extractor: what a chat sentence is, before what it says.

Pure functions over one sentence, English and Chinese. A fact must stand on its own out of
context, so a sentence is not one when it:

- is only a discourse marker or a reaction ("Thanks!", "Yup", "哈哈太好了"): leading markers are
  stripped first (``strip_markers``) and what is left must still say something; a reply about
  how one is ("I'm doing OK, thanks.") is small talk too;
- asks (a question mark, an exclamation of the "What a ...!" kind, a final 吗/呢);
- speaks to or about the listener (you, your, 你, 您): compliments and replies; or tells them
  what to do or look at ("Check out ...", "Here's ...");
- (a clause in the past that leaves its subject "I" out, "Dyed my hair last week", has it
  said again: ``restore_subject``, so that "my" is not read as someone else's);
- leans on a referent outside the sentence (``dangling``): it, they, them, this/that used as a
  pronoun, we and us, 这个, 那个, 他们, 我们... with no noun before it in the same sentence (a
  person is no antecedent for "it", nor a noun compared "like these", nor the listener
  addressed), a subject "it" left out ("Makes me feel connected"), or
  a verb whose object was left to the previous turn ("I love to.", "I'm hoping so.", "我很喜欢。").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from memstrata.curate import quality
from memstrata.util.scripts import HAN

_MARKER_WORDS: Final = (
    r"yup|yep|yeah|yes|yay|yea|no|nope|nah|ok(?:ay)?|sure|wow|woah|whoa|oh|ooh|aw+|ah+|hmm+|"
    r"haha(?:ha)*|hah|lol|omg|hi|hey|hello|bye|thanks?(?: so much| a lot)?|thank you(?: so much)?|"
    r"cool|great|awesome|nice|amazing|wonderful|congrats|congratulations|totally|absolutely|"
    r"definitely|exactly|indeed|right|well|so|anyways?|also|and|but|plus|by the way|btw|"
    r"on (?:another|a different|a side|a related|a positive|a lighter) note|guess what|"
    r"don't worry|no worries|what can i say|actually|honestly|luckily|thankfully|fortunately|"
    r"anyhow|fyi|phew|gotcha|yay|hehe|whew|oops|yikes|cheers|"
    r"of course|me too|same here|good luck|take care|sounds good|first(?:ly| of all| off)?|"
    r"second(?:ly)?|third(?:ly)?|lastly|finally|another thing|in other news|other news"
)
# Leading markers, optionally followed by a vocative name ("Woah Joanna,"), then a break.
#: capitalised words after a marker that name a time, not whom one speaks to ("And Sundays I
#: play futsal", "So Monday we fly"): they stay
_NO_VOCATIVE: Final = (
    r"(?:(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?|January|February|March|April|May|June|"
    r"July|August|September|October|November|December|Christmas|Easter)\b"
)
_LEADING_EN: Final = re.compile(
    rf"^(?:(?:{_MARKER_WORDS})\b(?:\s+(?:{_MARKER_WORDS})\b)*(?-i:\s+(?!{_NO_VOCATIVE})[A-Z][a-z]+)?\s*"
    rf"(?:[,!.:;–—-]+\s*|\s+(?-i:(?=[A-Z]))|\s*(?=[{HAN}]))|"
    rf"(?:{_MARKER_WORDS})\s*$)",
    re.IGNORECASE,
)
_LEADING_ZH: Final = re.compile(
    r"^(?:哈+|嘿+|哇+|嗯+|哦+|噢+|啊+|呀+|耶|谢谢|太好了|太棒了|真棒|好棒|恭喜|加油|没错|对啊|是啊|好的|好吧|嗨|你好|"
    r"对了|其实|说实话|话说|是的|挺好的|还不错|顺便说一下|顺便说一句|另外|哦对了?)"
    r"[，,！!。~～\s]*"
)

_WELL_BEING_EN: Final = re.compile(
    r"^I(?:'m| am|'ve been| have been)\s+(?:doing\s+)?(?:really\s+|pretty\s+|so\s+|super\s+)?"
    r"(?:good|great|ok|okay|well|fine|alright|awesome)\b(?:\s*,?\s*thanks?(?: you)?)?[.!…~]*$",
    re.IGNORECASE,
)
_WELL_BEING_ZH: Final = re.compile(
    r"^我(?:最近|还|挺|很|都)*(?:好|不错|挺好|还行)(?:的|啊|呀)?[。！!~～]*$"
)
_IMPERATIVE_EN: Final = re.compile(
    r"^(?:check (?:out|it)|come (?:see|and see|over)|look (?:at|here)|take a look|have a look|"
    r"let me|let's|guess|imagine|tell me|keep me|don't|here(?:'s| is| are)|there you go)\b",
    re.IGNORECASE,
)
# Past verbs that open a clause whose subject "I" was left out ("Lost my job yesterday").
_PAST_FIRST: Final = frozenset(
    "lost got went made took saw met ran began bought found gave won had did wrote built left "  # noqa: SIM905
    "came felt brought sold spent drew grew heard kept paid sent told thought ate fell quit".split()
)
# Other openings that leave "I" out: "Been running longer", "Gonna keep pushing", "Just got
# some new shoes", "Never had a chance", "Can't wait". Group 1: what needs "I've".
_LEFT_OUT: Final = re.compile(
    r"(?:((?:always |never |just |also |recently )?been)|(gonna(?! be\b)|(?:now |just |also )?"
    r"(?:starting|moving|working|living|studying) (?:at|in|to|as|for|from)\b)|wanna|"
    r"can't wait|won't|(?:still |also |just )?(?:can't|cannot)(?! you\b| we\b)|"
    r"haven't|didn't|(?:just|also|finally|recently|never|always) "
    r"(?:\w+ed|got|went|made|took|saw|met|bought|found|had|did|started|tried|been))\b",
    re.IGNORECASE,
)
# How a question opens: a question word, or a verb before its subject.
_ASKS: Final = re.compile(
    r"(?:what|how|why|when|where|who|whom|which|whose|do|does|did|are|is|was|were|have|has|"
    r"had|can|could|would|will|should|shall|may|might|any|ever|wanna|want|got|care)\b|"
    r".*(?:吗|呢|么|什么|怎么|为什么|哪|谁|几)",
    re.IGNORECASE,
)
# A clause whose subject "it" was left out, seen by a verb on the speaker as its object or in
# the third person: "Makes me feel connected.", "Reminds me it's important ...".
_IT_LEFT_OUT: Final = re.compile(
    r"(?:[A-Za-z]+(?<!ss)s|[A-Za-z]+ed|made|gave|kept|brought|got|took|taught|told|showed)"
    r"\s+(?:me|us)\b|(?:sounds|seems|looks|feels|means)\b",
    re.IGNORECASE,
)
# A participle that says how one feels, before what about: "Excited to see what's next".
_FEELING_FIRST: Final = re.compile(
    # "Excited to", "worried about"; not a deed ("moved to Berlin", "settled in Vancouver")
    r"(?!(?:used|moved|relocated|settled|switched|changed|married|engaged|started|joined|"
    r"signed|transferred|promoted|enrolled|accepted|signed|returned|headed|flew|travel+ed|"
    r"retired|graduated|hired|transferred)\b)[A-Za-z]+ed\s+(?:to|about|for|with|by|of|in|that)\b",
    re.I,
)
_QUESTION_EN: Final = re.compile(r"^(?:what an?|how)\b[^.]*!$", re.IGNORECASE)
_QUESTION_ZH: Final = re.compile(r"(?:吗|呢|么)[。！!？?…~～]*$")
_LISTENER_WORDS: Final = "|".join(sorted(quality.SECOND_PERSON | {"y'all"}))
_LISTENER_EN: Final = re.compile(rf"\b(?:{_LISTENER_WORDS})\b", re.IGNORECASE)

# Pronouns that need an antecedent. "this/that/these/those" count only when used as a pronoun
# (followed by a verb, a preposition or the end), not as a determiner ("that book"); "there"
# only as a place ("I love it there"), not as the "there is" of existence.
_PRONOUN_EN: Final = re.compile(
    r"\bthere\b(?!\s*(?:'s|'re|'ll|is|are|was|were|will|would|has|have|had|must|might|may|can|"
    r"could|seems?|used|isn't|aren't|wasn't|weren't)\b)|"
    r"\b(?:it|its|they|them|their|theirs|themselves|we|us|our|ours|ourselves|he|him|his|she|"
    r"her)\b|"
    r"\b(?:this|that|these|those)(?=\s*(?:$|[,.!;:–—-]|'s\b|\s(?:is|was|are|were|will|would|"
    r"has|had|have|can|could|must|might|made|makes|means|meant|sounds|looks|seems|feels|"
    r"reminds|remind|gets|got|keeps|keep|helps|help|brings|bring|gives|give|make|show|shows|"
    r"always|just|for|to|with|about|of|in|on|at|so|too|really|"
    r"too|again|yet|one|stuff|thing|kind|type|idea)\b))",
    re.IGNORECASE,
)
# Pronouns that can only point outside the sentence, whatever precedes them.
_WE_WORDS: Final = quality.ALWAYS_DANGLING | {"ourselves"}
_ALWAYS_DANGLING_EN: Final = re.compile(rf"\b(?:{'|'.join(sorted(_WE_WORDS))})\b", re.IGNORECASE)
# A noun an anaphor may point back to: a name, or a word after a determiner or a number.
_ANTECEDENT_EN: Final = re.compile(
    r"(?<=\s)(?!I\b)[A-Z][a-z]+|"
    r"^(?!(?:And|But|So|Then|When|If|Because|Since|After|Before|Just|Also|Really|Still|Even|"
    r"Now|Yes|No|Well|Oh|Plus|Though|Although|While|Once|Lately|Recently|Today|Yesterday|"
    r"Sometimes|Usually|Often|Always|Never|Honestly|Actually|Maybe|Perhaps|Hopefully|Luckily|"
    r"Unfortunately|Fortunately|Finally|Anyway|Anyways|Besides|Currently|Definitely|Basically|"
    r"Obviously|Clearly|Seriously|Sadly|Thankfully|Tonight|Tomorrow|Last|Next|Every)\b)"
    r"[A-Z][a-z]{2,}|"
    r"\b(?i:a|an|the|my|his|her|some|any|every|each|one|two|three|four|five|\d+)\s+[A-Za-z]",
)
# "it", "its", "this", "that" point at a thing, never at a person ("my family and I love it").
_THING_PRONOUNS: Final = frozenset(("it", "its", "this", "that"))
_PERSON_NP: Final = re.compile(
    r"\b(?i:a|an|the|my|his|her|their|our|some)\s+(?:\w+\s+)?(?i:family|fam|kids?|children|"
    r"husband|wife|partner|son|daughter|boyfriend|girlfriend|parents|mom|dad|mother|father|"
    r"brother|sister|friends?|buddy|buddies|team|teammates|crew|people|folks|guys)\b"
)
# "Moments like these remind me ...": the noun before "like" is compared to what these point
# at, it is not what they point at.
_LIKE_THESE: Final = re.compile(
    r"\blike (?:this|that|these|those)(?=\s*(?:$|[,.!;:–—-]|\s+(?:remind|reminds|make|makes|"
    r"keep|keeps|help|helps|bring|brings|give|gives|show|shows|are|is|were|was|really|always|"
    r"just|truly)\b))",
    re.IGNORECASE,
)
_SPEAKER_GROUP_EN: Final = re.compile(
    r"\b(?i:and)\s+(?:I|me|myself)\b|\b(?:I|[Mm]e)\s+(?i:and)\s+(?!I\b)\w"
)
# "a bunch of them", "some of those": the quantity is not what the pronoun points to.
_PARTITIVE_EN: Final = re.compile(r"(?:\b[\w']+\s+){1,2}of\s+$")
# "I love to.", "I'm hoping so.": what is loved or hoped was said before.
_ELLIPSIS_EN: Final = re.compile(r"\b(?:to|so)\s*[.!…~]*$", re.IGNORECASE)
# How a clause cut out of a sentence may open: with its subject, a name, a determiner, a time
# or a subordinating word; not with a verb whose subject was in the clause before.
_OPENS_CLAUSE: Final = re.compile(
    r"(?:I|I'm|I've|I'll|I'd|[Mm]y|[Tt]he|[Aa]n?|[A-Z]\w*|\w+ing|last|yesterday|today|next|"
    rf"this|now|then|when|after|before|since|while|if|once|lately|recently|[0-9]+|[{HAN}])"
    rf"(?:\b|(?<=[{HAN}]))"
)
# "我很喜欢。", "我也想要！": a verb of liking or wanting with its object left to the turn before.
_ELLIPSIS_ZH: Final = re.compile(
    r"(?:喜欢|爱|讨厌|想要|希望如此|同意|期待)(?:的|啊|呀|哦)?[。！!~～…\s]*$"
)
# The bench's Chinese pronouns, and what stands for a whole situation.
_DANGLING_ZH: Final = re.compile(rf"{quality.CJK_PRONOUN.pattern}|这样|那样|这件事|那件事")


def strip_vocative(sentence: str, names: Iterable[str]) -> str:
    """``sentence`` without an address to one of ``names`` at its end ("I love it, Nate!") or
    at its start ("Gina, I'm stoked about this!"): the listener named is not what it, this or
    that point to."""
    for name in names:
        pattern = rf",?\s+{re.escape(name)}\s*([.!…~]*)$"
        sentence = re.sub(pattern, r"\1", sentence.strip())
        sentence = re.sub(rf"^{re.escape(name)}\s*[,，!！]\s*", "", sentence)
    return sentence


def speaks_to_listener(sentence: str) -> bool:
    """An imperative ("Check out this moment I snapped!") or a presentation of something shown
    ("Here's a snap of ..."): said to the listener about what they see."""
    return bool(_IMPERATIVE_EN.match(sentence))


def restore_subject(sentence: str) -> str:
    """``sentence`` with its left-out subject "I" said ("Dyed my hair last week" -> "I dyed my
    hair last week"; "Vegetarian since uni" -> "I'm vegetarian since uni"), so that the
    rewrite names the doer instead of the owner of "my"."""
    if _STATE_FIRST.match(sentence) and verbless(sentence):
        return "I'm " + sentence[0].lower() + sentence[1:]  # "Engaged!": a state, not a deed
    if not drops_subject(sentence):
        return sentence
    lead = _LEFT_OUT.match(sentence)
    subject = "I've " if lead and lead.group(1) else "I'm " if lead and lead.group(2) else "I "
    if _FEELING_FIRST.match(sentence):
        subject = "I'm "  # "Excited to see what's next": a state, not a deed
    return subject + sentence[0].lower() + sentence[1:]


#: the words an English clause with a subject has for its verb (a helper, a modal, a verb
#: of saying, having or taking) or a subject of its own; a chat's fragment has none
_FINITE_EN: Final = re.compile(
    r"\b(?:is|are|was|were|am|has|have|had|does|do|did|will|would|shall|should|can|could|"
    r"may|might|must|gets?|got|makes?|made|gives?|gave|takes?|took|says?|said|goes|went|"
    r"needs?|wants?|keeps?|thinks?|knows?|loves?|likes?|hates?|feels?|told|tells?)\b|"
    r"\w(?:'s|'re|'m|'ve|'d|'ll)\b|\b(?:I|he|she|they|it|we|you|there|this|that)\b",
    re.IGNORECASE,
)
#: a fragment that says a state of its left-out "I'm": a state word ("Vegetarian since uni",
#: "Retired since June", "Engaged!"), where the speaker is ("Still at Google", "Back in
#: Toronto for good"; not a passing "At the park"); not "In other news", nor what opens
#: with a verb in -ing, as often a subject ("Painting helps me unwind") as a state
_STATE_FIRST: Final = re.compile(
    r"(?:(?:still|now|also|just|finally|officially|currently|happily)\s+)*"
    r"(?:(?:vegetarian|vegan|pescatarian|pregnant|engaged|married|single|divorced|widowed|"
    r"retired|unemployed|self-employed|freelance|allergic|lactose intolerant|sober|diabetic|"
    r"asthmatic|coeliac|celiac)\b|"
    r"(?:(?<=still )|(?<=now ))(?:at|in)\s+(?!(?:other|fact|general|least|last|first|the end|"
    r"any case|short|total|time)\b)|(?:based|living|back|home) in\b|back\s+(?:at|to|home)\b)",
    re.IGNORECASE,
)


def verbless(sentence: str) -> bool:
    """Whether an English ``sentence`` has neither a verb a subject would take nor a subject
    ("Still on the sertraline, 50mg.", "Vegetarian since uni."): a chat's fragment."""
    return _FINITE_EN.search(sentence) is None


def drops_subject(sentence: str) -> bool:
    """Whether a clause in the past leaves its subject "I" out ("Lost my job yesterday")."""
    first = re.match(r"[A-Za-z]+", sentence)
    if first is None or re.match(r"I\b", sentence):
        return False
    word = first.group().lower()
    if _IT_LEFT_OUT.match(sentence):
        return False  # "Made me feel great": what made it was left out, not "I"
    verb_first = (word.endswith("ed") and not word.endswith("eed")) or word in _PAST_FIRST
    if _LEFT_OUT.match(sentence):
        return True  # nothing can stand before "Been", "Gonna": the subject was left out
    return verb_first and not re.search(r"\bI\b", sentence[: _first_person_at(sentence)])


def _first_person_at(sentence: str) -> int:
    found = re.search(r"\b(?:I|[Mm]y|[Mm]e|[Mm]yself)\b", sentence)
    return found.end() if found else len(sentence)


def is_small_talk(sentence: str) -> bool:
    """A reply about how one is ("I'm doing OK", "I've been doing great!", "我很好")."""
    return bool(_WELL_BEING_EN.match(sentence) or _WELL_BEING_ZH.match(sentence))


def strip_markers(sentence: str) -> str:
    """``sentence`` without leading interjections, thanks, greetings and vocatives."""
    out = sentence.strip()
    while True:
        stripped = _LEADING_ZH.sub("", _LEADING_EN.sub("", out, count=1), count=1).strip()
        if stripped == out:
            return out
        out = stripped


def is_question(sentence: str) -> bool:
    """What the fact bench calls a question (:func:`quality.is_question`), and also an
    exclamation of the "What a ...!" kind and a Chinese sentence ending in 么 or in more marks."""
    s = sentence.strip()
    return quality.is_question(s) or bool(_QUESTION_EN.match(s) or _QUESTION_ZH.search(s))


def addresses_listener(sentence: str) -> bool:
    return bool(_LISTENER_EN.search(sentence) or quality.CJK_SECOND_PERSON.search(sentence))


def speaker_group(sentence: str) -> bool:
    """Whether ``sentence`` names who "we" are before saying it ("Max and I", "me and my kids")."""
    first_we = _ALWAYS_DANGLING_EN.search(sentence)
    group = _SPEAKER_GROUP_EN.search(sentence)
    return bool(group and (first_we is None or group.start() < first_we.start()))


#: how far back a pronoun's noun is looked for (characters)
_BACK: Final = 400


def dangling(sentence: str) -> bool:
    """True when a pronoun in ``sentence`` has no noun it could refer to before it."""
    if _DANGLING_ZH.search(sentence) or _ELLIPSIS_EN.search(sentence):
        return True
    if _ELLIPSIS_ZH.search(sentence):
        return True
    if _ALWAYS_DANGLING_EN.search(sentence) and not speaker_group(sentence):
        return True
    if _LIKE_THESE.search(sentence) or _IT_LEFT_OUT.match(sentence):
        return True
    if quality.dangling_there(sentence):
        return True  # "my parents are there": a place no clause names
    for match in _PRONOUN_EN.finditer(sentence):
        word = match.group().lower()
        if word in _WE_WORDS:
            continue
        # the noun it stands for is said shortly before it: a run-on sentence is read back
        # a window at a time, so many pronouns in it cost linear time
        before = _PARTITIVE_EN.sub("", sentence[max(0, match.start() - _BACK) : match.start()])
        if word in _THING_PRONOUNS:
            before = _PERSON_NP.sub(" ", before)  # "it" is not "my family"
        if not _ANTECEDENT_EN.search(before):
            return True
    return False


def is_fact_shaped(sentence: str) -> bool:
    """Whether a marker-stripped sentence can carry a fact on its own."""
    return not (
        is_question(sentence)
        or addresses_listener(sentence)
        or dangling(sentence)
        or is_small_talk(sentence)
        or speaks_to_listener(sentence)
    )


# A conjunction opens a clause only when a subject follows it ("and it was", not "and dogs").
_CLAUSE_BREAK: Final = re.compile(
    r"\s*[,;:]\s+|\s*[，；：]\s*|\s+[–—-]+\s+|\s*[–—]\s*|"
    r"(?<!\bI)(?<!\bme)\s+(?=(?:but|and|so|because|cause|'cause)\s+"
    r"(?:I|I'm|I've|it|it's|they|they're|we|we're|he|she|that|this|there|my|our|the|his|her|"
    r"their|you)\b)"
)
#: the most clauses one run of :func:`self_contained` holds
_MOST_CLAUSES: Final = 16
_LEADING_CONJUNCTION: Final = re.compile(r"^(?:but|and|so|because|cause|'cause)\s+", re.I)


def self_contained(sentence: str, listeners: Iterable[str] = ()) -> list[str]:
    """The longest runs of whole clauses of ``sentence`` that can stand alone, in order.

    A statement is not a question; within it, a clause that speaks to the listener or leans on
    a referent no earlier clause of the run names breaks the run. The whole sentence is one run
    when it is fact-shaped; otherwise the parts around the broken clauses are kept as they were
    said (only a leading "but", "and", "so" is dropped), never joined across a gap, and only
    when they open with a subject ("tracks my goals" lost its subject to the clause before).
    A closing address to one of ``listeners`` ("..., Nate!") is not part of what is said.
    """
    listeners = tuple(listeners)
    text = strip_vocative(strip_markers(strip_vocative(sentence, listeners)), listeners)
    text = restore_subject(strip_markers(text))
    if text and is_question(text):
        text = statement_before_question(text)
    if not text:
        return []
    if is_fact_shaped(text):
        return [text]
    clauses: list[str] = []
    pos = 0
    for match in _CLAUSE_BREAK.finditer(text):
        clauses.append(text[pos : match.start()])
        pos = match.start()
    clauses.append(text[pos:])
    runs: list[str] = []
    start = 0
    while start < len(clauses):
        end = start
        # a run is read clause by clause up to a bound: a fact is said in a few clauses, and
        # a run-on sentence of thousands is read a run at a time, in linear time
        while (
            end < len(clauses)
            and end - start < _MOST_CLAUSES
            and is_fact_shaped(_join(clauses[start : end + 1]))
        ):
            end += 1
        if end > start:
            run = _join(clauses[start:end])
            if start == 0 or _OPENS_CLAUSE.match(run):
                runs.append(run)
            start = end
        else:
            start += 1
    return [run for run in runs if run]


def statement_before_question(sentence: str) -> str:
    """What a sentence states before the clause that asks ("I finished another pottery project
    - want to see a pic?" -> "I finished another pottery project"); empty when it asks from
    its start ("Did you ..., or ...?") or has no break before the question."""
    breaks = list(_CLAUSE_BREAK.finditer(sentence))
    statement = _join([sentence[: breaks[-1].start()]]) if breaks else ""
    return "" if _ASKS.match(statement) else statement


def _join(clauses: list[str]) -> str:
    text = "".join(clauses).strip(" ,;:，；：–—-")
    return restore_subject(_LEADING_CONJUNCTION.sub("", strip_markers(text)))
