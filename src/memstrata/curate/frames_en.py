"""Frames read from English first-person statements (:mod:`memstrata.curate.frames`).

Patterns over one clause as said ("I'm severely allergic to shellfish", "We moved from
Shenzhen to Ningde last week", "My husband 王磊 and I are planning a trip to Kyoto in May").
Values end at a clause break and lose the words of time that follow them ("last week", "in
May": the time is read by :mod:`memstrata.timeref`), never inside a phrase; names may be in
Chinese inside English text.
"""

from __future__ import annotations

import calendar
from collections.abc import Sequence
from functools import lru_cache
from typing import Final

from memstrata.curate import lexicon
from memstrata.curate import patterns as re
from memstrata.curate.frames import Frame, complete
from memstrata.util.scripts import HAN

_I = re.IGNORECASE

#: where a value ends: a clause break, a conjunction that opens a new clause
_STOP: Final = (
    r"(?=\s*(?:[,.;:!?()]|\s[-–—]\s|$)|\s+(?:because|'cause|cause|but|since|so that|so|which|who|"
    r"where|when|while|after|before|until|till|though|although|as well|if|and (?:I|we|my|he|she|"
    r"they|it|then|now)|and I'm|and I've|with (?:my|our|the) (?:\w+ )?(?:kids|family|husband|"
    r"wife|partner))\b)"
)
#: words of time and manner that end a value ("in Ningde now", "coffee every morning")
_TRAILING: Final = re.compile(
    r"(?:,\s*like|\s+(?:myself|themselves|himself|herself|ourselves)|"
    r"\s+(?:on |from |by )?(?:jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec|"
    r"january|february|march|april|may|june|july|august|september|october|november|"
    r"december)\.? \d{1,2}(?:st|nd|rd|th)?|\s+(?:completely|entirely|altogether|totally|for good|"
    r"now|again|too|also|anymore|any more|lately|recently|these days|nowadays|"
    r"for now|at the moment|yet|already|still|either|as well|finally|though|tho|haha|lol|"
    r"today|tonight|tomorrow|yesterday|soon|this (?:year|month|week|weekend|summer|spring|"
    r"fall|autumn|winter)|next (?:year|month|week|weekend|summer|spring|fall|autumn|winter|"
    r"\w+day)|last (?:year|month|week|weekend|night|summer|spring|fall|autumn|winter|\w+day)|"
    r"(?:in|on|by|from|since|until|for|around|at) (?:early |late |mid-?)?(?:january|february|"
    r"march|april|may|june|july|august|september|october|november|december|spring|summer|fall|"
    r"autumn|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday|\d{4}|the "
    r"(?:morning|evening|weekend|summer|fall|spring|winter))(?: \d{1,2}(?:st|nd|rd|th)?)?"
    r"(?:,? \d{4})?|(?:a|one|two|three|four|five|six|a few|several|\d+) (?:days?|weeks?|months?|"
    r"years?) ago|every (?:\w+ )?(?:day|morning|evening|night|week|weekend|month|year|\w+day)|"
    r"(?:each|most) (?:day|morning|evening|night|week)s?|on weekends|at \d{1,2}(?::\d{2})?"
    r"(?:\s*[ap]\.?m\.?)?|daily|weekly|regularly|usually|often|sometimes|every so often|"
    r"(?:once|twice|three times) a (?:day|week|month|year)))+$",
    _I,
)
_LEAD: Final = re.compile(r"^(?:(?:the|a|an|some)\s+)+", _I)
_ADVERBS: Final = (
    r"(?:(?:now|currently|still|also|really|just|actually|finally|recently|officially|"
    r"already|even|only|mostly|usually|always|normally|generally|definitely|totally|"
    r"absolutely|truly|honestly|seriously|kinda|kind of|sort of|basically|pretty much|"
    r"happily|luckily|sadly|unfortunately|completely|entirely|mostly|basically)\s+)*"
)
_NAME: Final = (
    rf"(?:(?-i:[A-Z][a-z]+(?:[- ](?-i:[A-Z][a-z]+)){{0,2}})|[{HAN}]{{2,3}}(?![{HAN}])|"
    r"(?-i:[a-z][a-z'-]{2,}))"  # a chat in lower case: "my sister zara"
)
#: capitalised words that open a clause and are no name ("I'm So happy", "my sister Went")
_NOT_NAMES: Final = frozenset(
    [
        *(m.casefold() for m in calendar.month_name[1:]),
        *(m.casefold() for m in calendar.month_abbr[1:]),
        *(d.casefold() for d in calendar.day_name),
        *(d.casefold() for d in calendar.day_abbr),
        "sept",
        "so",
        "and",
        "but",
        "the",
        "a",
        "an",
        "is",
        "was",
        "are",
        "were",
        "has",
        "had",
        "have",
        "will",
        "would",
        "can",
        "could",
        "i",
        "i'm",
        "i've",
        "it",
        "this",
        "that",
        "these",
        "those",
        "just",
        "really",
        "very",
        "also",
        "too",
        "now",
        "then",
        "here",
        "there",
        "when",
        "where",
        "who",
        "what",
        "why",
        "how",
        "lol",
        "haha",
        "yes",
        "no",
        "ok",
        "okay",
        "oh",
        "well",
        "thanks",
        "thank",
        "hey",
        "hi",
        "hello",
        "sorry",
        "glad",
        "happy",
        "excited",
        "tired",
        "fine",
        "good",
        "great",
        "back",
        "home",
        "busy",
        "sure",
        "not",
        "never",
        "always",
        "still",
        "only",
        "even",
    ]
)
_ORG_NAMED: Final = (
    rf"(?:(?:the\s+)?(?:(?-i:[A-Z][\w&.'-]*)|[{HAN}]{{2,12}})"
    # "Procter and Gamble", but not the "and I" after a name ("at Klook and I volunteer")
    r"(?:[ -](?:(?-i:[A-Z][\w&.'-]*)|of|(?:and|&)(?=[ -](?!I\b)(?-i:[A-Z]))|for|de|"
    rf"[{HAN}]+))*"
    r"|(?:a|an|the|my|our)\s+(?:[\w'-]+\s+){0,3}?(?:company|startup|start-up|firm|hospital|"
    r"clinic|school|university|college|bank|bakery|agency|store|shop|restaurant|cafe|café|"
    r"studio|lab|factory|hotel|nonprofit|non-profit|charity|magazine|newspaper|office|"
    r"salon|gym|library|museum|church|warehouse|farm|consultancy|shelter|center|centre))"
)
#: a name written in lower case, as chats write them ("at shopify", "in mount pleasant"):
#: up to three words, cut at the first common word (:func:`_proper`)
_LOWER: Final = (
    r"(?-i:[a-z][\w&.'-]*)(?:\s+(?!(?:jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec|on|in|"
    r"at|to|for|from|since|until|next|last|this|and|but|so|or|because|now|today|tomorrow|"
    r"yesterday|tonight|soon)\b)(?-i:[a-z][\w&.'-]*)){0,2}"
)
_ORG_BODY: Final = rf"(?:{_ORG_NAMED}|{_LOWER})"
_ORG: Final = rf"(?P<org>{_ORG_BODY})"
_PLACE_NAMED: Final = (
    rf"(?:(?:(?-i:[A-Z][\w.'-]*)|[{HAN}]{{2,12}})"
    rf"(?:[ -](?:(?-i:[A-Z][\w.'-]*)|[{HAN}]+))*"
    r"(?:,\s*(?-i:[A-Z][\w.'-]*)(?: (?-i:[A-Z][\w.'-]*))*)?)"
)
_PLACE_BODY: Final = rf"(?:{_PLACE_NAMED}|{_LOWER})"
_PLACE: Final = rf"(?P<place>{_PLACE_BODY})"


def _proper(value: str | None) -> str | None:
    """A name as a chat writes it: a value in lower case keeps its words up to the first
    common one ("shopify remote" -> "shopify"; "home" is no name); one with a capital, or in
    Chinese, stays as it is."""
    if not value:
        return None
    words = value.split()
    if any(not w.islower() for w in words) or not value.isascii():
        return value
    kept = []
    for word in words:
        if lexicon.common(word) or _TRAILING.fullmatch(f" {word}"):
            break
        kept.append(word)
    return " ".join(kept) or None


_JOB: Final = "|".join(sorted((re.escape(j) for j in lexicon.JOBS_EN), key=len, reverse=True))
_ROLE: Final = rf"(?P<role>(?:[\w'/&-]+\s+){{0,4}}?(?:{_JOB})s?(?:\s+(?:{_JOB})s?)*)"
_REL: Final = "|".join(sorted((re.escape(r) for r in lexicon.RELATIONS_EN), key=len, reverse=True))
_PET: Final = "|".join(sorted((re.escape(p) for p in lexicon.PETS_EN), key=len, reverse=True))
_NEG: Final = re.compile(
    r"\b(?:not|no longer|don't|do not|doesn't|never|stopped|quit|gave up|anymore|any more)\b",
    _I,
)
_ANYMORE: Final = re.compile(r"\b(?:anymore|any more|no longer)\b", _I)
_ONLY: Final = re.compile(r"\b(?:only|just)\b", _I)


def _clean(value: str) -> str:
    """A value without the words of time and manner after it, the punctuation around it,
    and leading articles and possessives."""
    value = value.strip(" \"'“”,.;:!?")
    if _TRAILING.fullmatch(f" {value}"):
        return ""  # only words of time: no value
    while (trimmed := _TRAILING.sub("", value)) != value:
        value = trimmed.strip(" ,")
    return _LEAD.sub("", value).strip(" \"'“”,.;:!?")


def _phrase(text: str, start: int) -> str:
    """The phrase from ``start`` to the next clause break, cleaned."""
    match = re.match(rf"(.+?){_STOP}", text[start:], _I)
    return _clean(match[1] if match else text[start:])


def _name(candidate: str | None, text: str = "") -> str | None:
    """``candidate`` when it can be a person's or a pet's name: not a word of the sentence
    capitalised ("So", "Seeing", "Marrying", "Really"); in lower case only in a sentence
    written all in lower case ("my boyfriend marcus says"), where names are too ("My husband
    cooks" names no one)."""
    if not candidate:
        return None
    candidate = re.sub(r"['’]s$", "", candidate)  # "my brother gerry's having a barbecue"
    if candidate.islower() and not _casual(text):
        return None
    first = candidate.split()[0].split("-")[0]
    lower = first.casefold()
    if lower in _NOT_NAMES or (first.isascii() and lower.endswith(("ing", "ed", "ly"))):
        return None
    if first.islower() and (lexicon.common(first) or len(first) < 3):
        return None  # a word of the sentence, not a name written in lower case
    if not first.isascii() and _NOT_IN_NAMES_ZH.search(first):
        return None  # "my mom 现在住 Cupertino": the words that follow her, not her name
    return candidate


#: characters of Chinese words that say something, and are in no one's name
_NOT_IN_NAMES_ZH: Final = re.compile(
    r"[在住是的了很要去说会想有没不也都就还吗呢吧啊跟把被让给从到]"
)


@lru_cache(maxsize=64)
def _casual(text: str) -> bool:
    """Whether a sentence is written in lower case (no capital but "I")."""
    return not re.search(r"(?!I\b)[A-Z]", text)


def _key(value: str, words: int = 3) -> str:
    """The key a free value is known by: its first content words, lower case, up to the
    first preposition or conjunction ("long meetings on Mondays" -> "long meetings")."""
    parts = re.findall(rf"[\w'-]+|[{HAN}]+", value.casefold())
    parts = [w for w in parts if w not in ("the", "a", "an", "my", "our", "some", "their")]
    kept: list[str] = []
    for word in parts:
        if kept and (word in _PREPOSITIONS or word in ("and", "or", "but", "because")):
            break
        kept.append(word)
    return " ".join(kept[:words])


def _listed(text: str, table: dict[str, tuple[str, ...]]) -> str:
    """The phrase at the head of ``text``, with the list it goes on with across commas when
    every item after a comma is a word of ``table`` ("peanuts, shrimp and sesame" is three
    allergens; "peanuts, which is annoying" is one)."""
    value = _phrase(text, 0)
    parts = re.split(r"\s*,\s*", text)
    if not value or _clean(parts[0]) != value:
        return value  # the phrase ended before a comma: no list goes on
    for part in parts[1:]:
        item = _phrase(part, 0)
        items = _items(re.sub(r"^(?:and|or|&)\s+", "", item, flags=_I))
        if not item or not items or not all(lexicon.canonical(table, i) for i in items):
            break
        value = f"{value}, {item}"
        if _clean(part) != item:
            break  # the list ends inside this part ("sesame because ...")
    return value


def _items(value: str) -> list[str]:
    """The items of a list value ("peanuts, shellfish and eggs")."""
    parts = re.split(r"\s*(?:,|\band\b|\bor\b|&|/|\bplus\b)\s*", value)
    return [p for p in (_clean(p) for p in parts) if p]


def frames(text: str, earlier: Sequence[Frame] = (), context: str = "") -> list[Frame]:
    """The frames of ``text``; ``context``: the whole turn it is part of, whose words may say
    what an elliptical clause is about ("allergist results!! it's only cashew")."""
    found: list[Frame] = []
    for reader in _READERS:
        found += reader(text, [*earlier, *found], context or text)
    return found


def _name_age(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out = []
    match = re.search(rf"\b(?:my name is|my name's|call me|I go by)\s+(?P<n>{_NAME})", text, _I)
    if match is None:
        match = re.match(
            rf"^I(?:'m| am)\s+(?P<n>(?-i:[A-Z][a-z]+(?:[- ][A-Z][a-z]+){{0,2}})|[{HAN}]{{2,3}})"
            r"(?=\s*(?:[,.!]|$|\s+and I\b|\s+from\b|\s+here\b))",
            text,
        )
    if match and _name(match["n"], text):
        out.append(Frame("name", match["n"]))
    match = re.search(
        r"\bI(?:'m| am)\s+(?:now\s+)?(?P<a>\d{1,2})(?:\s+years?\s+old|\s*(?:yo|y/o)\b|"
        r"(?=\s*(?:[,.!]|$|\s+now\b|\s+this year\b)))|\bI (?:just )?turned (?P<b>\d{1,3})\b",
        text,
        _I,
    )
    if match is None:  # an age among what an introduction lists: "I'm Margaret, retired, 71,"
        match = re.search(
            r"\bI(?:'m| am)\s+(?-i:[A-Z][a-z]+)(?:,\s*[^,.;!?]{1,40}?)*?,\s*(?P<a>[1-9]\d)"
            r"(?=\s*(?:,|\.|!|$|\s+and\b|\s+years\b))",
            text,
        )
    if match:
        out.append(Frame("age", match["a"] or match["b"]))
    match = re.search(r"\bmy birthday is (?:on )?(?P<v>[^,.;!?]{3,30})", text, _I)
    if match:
        out.append(Frame("birthday", _clean(match["v"])))
    return out


#: what one joins for a pastime: a group, never an employer
_GROUP: Final = re.compile(
    r"\b(?:choir|club|group|team|band|league|class|classes|society|circle|orchestra|gym|"
    r"community|meetup|squad|crew|congregation|church|forum|server|subreddit|book club)\b",
    re.IGNORECASE,
)


#: words of a job around a place's last day ("VGH last shift", "美团 last day … 入职")
_AT_WORK: Final = re.compile(
    r"\bshifts?\b|\bjob\b|\bwork\b|\boffer\b|\bresign|\bnotice\b|上班|工作|离职|辞职|入职|offer",
    _I,
)
#: an offer got, without who made it in the same clause ("Got the offer!!", "拿到 offer 啦")
_OFFER_GOT: Final = re.compile(
    r"\b(?:got|landed|accepted|signed) (?:an?|the|my) (?:job )?offer\b|"
    r"(?:拿到|收到|接了|签了)(?:了)?\s*offer",
    _I,
)
#: a clause that is only who made the offer, and perhaps the role and the start: "Stripe,
#: start March 3", "Shopee 的 data analyst", "BC Children's PICU"
_OFFERED: Final = re.compile(
    rf"\s*(?P<org>(?-i:[A-Z][\w&.'-]*)(?:\s+(?-i:[A-Z][\w&.'-]*)){{0,3}})"
    rf"(?:\s*(?:的|'s|,|:|-|–)?\s*{_ROLE})?"
    r"\s*(?:[,，]?\s*(?:I\s+)?start(?:s|ing)?\b.*)?[.!,，。！;；]*\s*$",
    _I,
)


def _work(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out: list[Frame] = []
    role = org = None
    if (
        (
            match := re.search(
                rf"^I(?:'m| am)\s+{_NAME},\s+(?:(?:a|an)\s+)?{_ROLE}"
                rf"(?:\s+(?:at|for|with)\s+{_ORG})?",
                text,
            )
        )
        or (
            match := re.search(
                rf"\bI(?:'m| am)\s+{_ADVERBS}(?:an?|the)\s+{_ROLE}\b"
                rf"(?:\s+(?:at|for|with|in)\s+{_ORG})?",
                text,
                _I,
            )
        )
        or (
            match := re.search(
                rf"\bI(?:'ll| will)\s+(?:now\s+)?be\s+(?:an?|the)\s+{_ROLE}\b"
                rf"(?:\s+(?:at|for)\s+{_ORG})?",
                text,
                _I,
            )
        )
    ):
        role, org = match["role"], _proper(match["org"])
    elif match := re.search(
        rf"\bI\s+{_ADVERBS}work(?:ed)?\s+as\s+(?:an?\s+)?(?P<r>[^,.;!?]+?)"
        rf"(?:\s+(?:at|for|with)\s+{_ORG})?{_STOP}",
        text,
        _I,
    ):
        role, org = match["r"], _proper(match["org"])
    elif at_org := re.search(  # "My new job is at a startup called Routefox": where, not what
        rf"\bmy (?:new )?(?:job|role|position) (?:is|will be) (?:at|with)\s+"
        rf"(?:an?\s+[\w -]{{2,30}}?\s+(?:called|named)\s+)?{_ORG}",
        text,
        _I,
    ):
        org = _proper(at_org["org"])
    elif (
        (
            match := re.search(
                r"\bmy (?:new )?(?:job|role|position|title)(?: title)? (?:is|will be)\s+(?:as\s+)?"
                r"(?:an?\s+)?(?P<r>[^,.;!?]+)",
                text,
                _I,
            )
        )
        or (
            match := re.search(  # "Started my new role as head of design last week"
                r"(?:\bI\s+|^)(?:just\s+|finally\s+)?(?:started|began|took on|stepped into)\s+"
                r"(?:my|a|the)\s+(?:new\s+)?(?:role|job|position)\s+as\s+(?:an?\s+|the\s+)?"
                r"(?P<r>[^,.;!?]+)",
                text,
                _I,
            )
        )
        or (
            match := re.search(  # "I'm a stay-at-home mum now"
                r"\bI(?:'m| am)\s+(?:now\s+)?(?:an?\s+)(?P<r>stay[- ]at[- ]home (?:mum|mom|dad|"
                r"parent)|full[- ]time (?:mum|mom|dad|parent|carer|caregiver)|carer|caregiver|"
                r"homemaker)\b",
                text,
                _I,
            )
        )
        or (
            match := re.search(
                r"\bI(?:'ve| have)?\s+(?:just |finally )?(?:got |been |was )?promoted to\s+"
                r"(?:an?\s+)?(?P<r>[^,.;!?]+)",
                text,
                _I,
            )
        )
    ):
        role = _phrase(text, match.start("r"))
    if role is None and (
        taught := re.search(  # "I teach history at the local high school": a teacher
            rf"\bI\s+{_ADVERBS}teach(?:es)?\s+(?P<subj>[a-z0-9][\w -]{{2,30}}?)\s+(?:at|in)\s+"
            rf"(?P<where>(?:the\s+|a\s+)?(?:[\w'-]+\s+){{0,3}}?(?:school|college|university|"
            rf"academy|primary|kindergarten|nursery|uni)\b|(?-i:[A-Z])[\w&.'-]*(?:\s+(?-i:[A-Z])"
            rf"[\w&.'-]*)*)",
            text,
            _I,
        )
    ):
        subject = _clean(taught["subj"])
        role = f"{subject} teacher" if len(subject.split()) <= 2 else "teacher"
        org = org or _proper(taught["where"]) or taught["where"]
    if (
        org is None
        and (
            offer := re.search(
                rf"\b(?:I\s+{_ADVERBS})?got (?:an?|the|their|my) (?:job )?offer (?:from|at|with)"
                rf"\s+{_ORG}",
                text,
                _I,
            )
        )
        and re.search(
            r"\b(?:I\s+start|I'm starting|I am starting|starting (?:on|in|next)|start date|"
            r"start(?:s|ing)? on (?:the )?\w+day)\b",
            f"{text} {context}",
            _I,
        )
    ):
        org = _proper(offer["org"])  # an offer with a start: taken ("..., I start Jan 6")
    if (
        org is None
        and _OFFER_GOT.search(context)
        and re.search(r"\bstart(?:s|ing)?\b|入职|上班", context, _I)
        and (offered := _OFFERED.match(text))
    ):
        # "Got the offer!! Stripe, start March 3.", "拿到 offer 了！Shopee 的 data analyst":
        # the turn says an offer was got and a start; the clause opens with who made it
        org = _proper(offered["org"]) or offered["org"]
        role = role or (_clean(offered["role"]) if offered["role"] else None)
    if (
        role is None
        and (
            taken := re.match(
                rf"\s*(?:(?:a|an|the)\s+)?{_ROLE}\s*[,:–—-]\s*(?:I\s+)?start", text, _I
            )
        )
        and re.search(
            r"\bI\s+(?:just\s+)?(?:got|landed)\s+(?:it|the job|the role|the position|the offer)\b",
            f"{text} {context}",
            _I,
        )
    ):
        role = taken["role"]  # "I GOT IT. Clinical nurse educator, start March 16."
    works = re.search(r"\bI\s+(?:work|'m working|am working)\b", text, _I)
    if (
        org is None
        and role is None
        and works
        and (match := re.search(rf"\b{_ROLE}\s+(?:at|for|with)\s+{_ORG}", text, _I))
    ):
        # "I work full time (data engineer at shopify, remote)": a position said beside it
        role, org = match["role"], _proper(match["org"])
    if org is None and (
        match := re.search(
            rf"\bI(?:'m| am|'ve been| have been)?\s+{_ADVERBS}(?:work|working|employed)\s+"
            rf"(?:(?:remotely|full[- ]time|part[- ]time|freelance|from home)\s+)?(?:at|for|with)\s+"
            rf"{_ORG}",
            text,
            _I,
        )
        or re.search(
            rf"\bI\s+{_ADVERBS}(?:joined|started (?:a new job |a job |working |my new job |my "
            rf"job )?(?:at|with)|got (?:a|the|my) (?:new )?job (?:at|with)|accepted (?:an?|the|"
            rf"their) (?:job )?offer (?:from|at|with)|took (?:a|the) (?:new )?job (?:at|with)|"
            rf"signed (?:on )?with|landed (?:a|the) (?:new )?(?:job|role|position) (?:at|with)|"
            rf"(?:was|got) hired (?:at|by)|moved to a new (?:job|company) at|switched to)\s+{_ORG}"
            rf"|\bI\s+(?:just\s+)?got the\s+(?P<got>{_ORG_BODY})\s+(?:job|offer|position|role)\b"
            rf"|\bI(?:'ve| have)\s+been\s+(?:at|with)\s+(?P<been>(?-i:[A-Z])[\w&.'-]*"
            rf"(?:\s+(?-i:[A-Z])[\w&.'-]*)*)\s+(?:for|since)\b"
            rf"|\bI(?:'m| am)\s+{_ADVERBS}starting (?:a new job |a job |work |my new job )?"
            rf"(?:at|with)\s+(?P<starts>{_ORG_BODY})|\bI\s+{_ADVERBS}start (?:work |my new job )?"
            rf"(?:at|with)\s+(?P<start>{_ORG_BODY})",
            text,
            _I,
        )
    ):
        named = match.groupdict()
        raw = (
            named.get("org")
            or named.get("got")
            or named.get("starts")
            or named.get("start")
            or named.get("been")
        )
        org = _proper(raw) or (raw if raw and re.match(r"(?:a|an|the|my|our)\s", raw, _I) else None)
        if named.get("got") and re.fullmatch(_ROLE, named["got"], _I):
            # "I got the instructional coach job for the district": the role, and who for
            role, org = named["got"], None
            if by := re.match(rf"\s*(?:for|at|with)\s+{_ORG}", text[match.end() :], _I):
                org = _proper(by["org"]) or by["org"]
        joined = re.search(r"\bjoined\b", match[0], _I)
        after = text[match.end() : match.end() + 16].lstrip()  # "a fantasy literature forum"
        if org and joined and (_GROUP.search(org) or _GROUP.match(after)):
            org = None  # "I joined a choir", "joined the running club": a pastime, not a job
    if (
        role is None
        and org
        and (as_role := re.search(rf"\bas\s+(?:an?\s+|the\s+)?{_ROLE}\b", text, _I))
    ):
        role = as_role["role"]  # "I just started a new job at Stripe as a data scientist"
    after_employer = any(f.kind == "employer" and not f.negated for f in earlier)
    if (
        role is None
        and after_employer
        and (
            match := re.match(
                rf"^(?:an?\s+)?{_ROLE}\b(?!\s+(?:is|was|are|were|said|says|has|had)\b)", text, _I
            )
        )
    ):
        role = match["role"]  # "… at Clio. ML engineer."
    if role:
        role = _clean(re.sub(r"^(?:做|当|是|担任)", "", role))  # "做senior PM" after 跳槽去了蚂蚁
        if role and not re.match(r"(?:it|that|this|them|there)\b", role, _I):
            out.append(Frame("job", role))
    if org:
        value = _clean(org)
        rest = text[text.find(org) + len(org) :] if org in text else ""
        place = re.match(rf"\s+in\s+{_PLACE}", rest)
        where = _proper(place["place"]) if place else None
        if where and _TRAILING.fullmatch(f" in {where}"):
            where = None  # "at King's College Hospital in August": when, not where
        if not value or (lexicon.common(value) and not where):
            value = ""  # "a startup" names no employer; "a startup in Berlin" does
        if where and value:
            value = f"{value} in {_clean(where)}"
        if value:
            out.append(Frame("employer", value))
    if match := re.search(
        r"\bI\s+(?:just\s+)?(?:lost|quit|left)\s+my\s+(?:old\s+)?job\s+as\s+(?:an?\s+)?"
        r"(?P<r>[^,.;!?]+)",
        text,
        _I,
    ):
        was = _phrase(match["r"], 0)
        if was:
            out.append(Frame("job", was, negated=True, target=was))
    if match := re.search(
        rf"\bI\s+{_ADVERBS}(?:quit|left|resigned from|am leaving|'m leaving|walked away from)\s+"
        rf"(?:my (?:job|position|role) (?:at|with)\s+{_ORG}|(?P<named>{_ORG_NAMED}))",
        text,
        _I,
    ):
        quit_org = match["org"] or match["named"]
        given_up = lexicon.canonical(lexicon.DRINKS, quit_org) or lexicon.canonical(
            lexicon.FOODS, quit_org
        )  # "I quit coffee completely": a habit given up, not an employer left
        if not given_up and not re.match(
            r"(?:the|my)\s+(?:house|home|party|city|town|country)\b|(?:smoking|drinking|"
            r"vaping|sugar|caffeine|alcohol|social media|gluten|dairy|meat)\b",
            quit_org,
            _I,
        ):
            left = _clean(_proper(quit_org) or quit_org)
            out.append(Frame("employer", left, negated=True, target=left))
    elif match := re.search(
        rf"\b(?:my\s+|the\s+)?(?:last|final) (?:day|shift) (?:at|with)\s+{_ORG}|"
        # "VGH last shift 係 12月20", "我在腾讯的 last day 是周五": the place, then its last day
        r"^\s*(?P<at>我\s*在\s*)?(?P<first>(?-i:[A-Z][\w&.'-]*)(?:\s+(?-i:[A-Z][\w&.'-]*)){0,3}|"
        rf"[{HAN}]{{2,8}}?)(?<!'s)\s*(?:的\s*)?(?:last|final) (?:day|shift)\b",
        text,
        _I,
    ):
        # "my last day at routefox was friday", "last shift at St Mike's is Dec 20"
        said = match["org"] or match["first"]
        left = _clean(_proper(said) or said)
        # a day of one's own there ("my last day at"), or a day said among words of a job
        mine = bool(match["at"]) or bool(match["org"] and re.match(r"\s*my\b", match[0], _I))
        at_work = mine or bool(_AT_WORK.search(f"{text} {context}"))
        if left and at_work and not lexicon.common(left.split()[0]):
            out.append(Frame("employer", left, negated=True, target=left))
    elif not any(f.kind == "job" and f.negated for f in out) and re.search(
        r"\bI\s+(?:just\s+)?(?:got|was|have been|'ve been)\s+(?:laid off|fired|let go)\b|"
        r"\bI\s+(?:just\s+)?lost my job\b|\bI\s+quit my job\b|\bI(?:'m| am)\s+(?:now\s+)?"
        r"(?:unemployed|between jobs|out of work|job hunting|looking for (?:a )?(?:new )?job)",
        text,
        _I,
    ):
        out.append(Frame("employer", "between jobs", negated=True))
    if re.search(
        r"\b(?:I|and)(?:'ve| have|'m| am)?\s+(?:just |finally |officially |now )?retired\b"
        r"(?!\s+(?:teacher|nurse|doctor|engineer|police|officer|[a-z]+er)\b)",
        text,
        _I,
    ) and re.search(r"\bI\b", text):
        out.append(Frame("job", "retired"))
    return out


def _school(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out: list[Frame] = []
    if match := re.search(
        rf"\bI(?:'m| am)\s+{_ADVERBS}(?:studying|majoring in|doing (?:a|my) (?:degree|masters?|"
        rf"phd|ph\.d\.) in)\s+(?P<m>[^,.;!?]+?)(?:\s+at\s+(?P<at>{_ORG_BODY}))?{_STOP}",
        text,
        _I,
    ):
        out.append(Frame("major", _clean(match["m"])))
        if match["at"]:
            out.append(Frame("school", _clean(match["at"])))
    elif match := re.search(
        r"\bI\s+(?:just\s+)?(?:switched|changed) (?:my )?majors? (?:from [^,.;!?]+? )?to\s+"
        r"(?P<m>[^,.;!?]+)",
        text,
        _I,
    ):
        out.append(Frame("major", _phrase(text, match.start("m"))))
    if match := re.search(
        rf"\bI(?:'m| am)\s+{_ADVERBS}(?:a|an)\s+(?:[\w-]+\s+){{0,3}}?student\s+at\s+{_ORG}"
        rf"|\bI\s+(?:go to|attend|study at)\s+(?P<at>{_ORG_BODY})",
        text,
        _I,
    ):
        out.append(Frame("school", _clean(_proper(match["org"] or match["at"]) or "")))
    return out


#: words of a trip: where one says hello from on one is not where one lives
_TRIP_WORDS: Final = re.compile(
    r"\b(?:trip|holiday|vacation|hotel|hostel|airbnb|resort|honeymoon|conference|tour)\b", _I
)


#: the kinds of home a person lives in
_DWELLING: Final = (
    r"(?:flat|flatshare|flat-share|flat share|house|houseshare|house share|apartment|studio|"
    r"bungalow|condo|room|place|townhouse|cottage|terrace)"
)


#: a move not yet decided: a plan, never the home
_UNSURE_MOVE: Final = re.compile(
    r"\b(?:thinking|think|might|maybe|perhaps|considering|hoping|hope|if|eventually|someday|"
    r"one day|probably|not)\b",
    _I,
)
#: the time a move is said to happen on, after its place
_MOVE_TIME: Final = re.compile(
    r"\b(?:in|on|at the end of|end of|by|next|this|from)\s+(?:\w+\s+)?(?:january|february|"
    r"march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|"
    r"jun|jul|aug|sep|sept|oct|nov|dec|week|weeks|month|months|spring|summer|autumn|fall|"
    r"winter|the \d+(?:st|nd|rd|th)|\d+(?:st|nd|rd|th)?|two|three|a few|a couple of|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b|\bnext\s+\w+|"
    r"\b(?:keys|move-in|moving day)\b",
    _I,
)


def _home(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out: list[Frame] = []
    if re.search(r"\b(?:I|we)(?:'re| are|'m| am)\s+(?:\w+\s+)?(?:moving|relocating)\b", text, _I):
        # a move to come is a plan (_plans); one on a date said is also the home from then
        # ("we're moving to Boulder in June", "moving into ratoath in two weeks")
        if (
            move := re.search(
                rf"\b(?:I|we)(?:'re| are|'m| am)\s+(?:(?:finally|officially|also|actually)\s+)?"
                rf"(?:moving|relocating)\s+(?:back\s+)?(?:to|into)\s+{_PLACE}",
                text,
                _I,
            )
        ) and not _UNSURE_MOVE.search(text):
            place = _clean(_proper(move["place"]) or "")
            if place and _MOVE_TIME.search(text[move.end() :]):
                out.append(Frame("residence", place))
        return out
    if match := re.search(
        rf"(?:\b(?:I|we)(?:'re|'m| are| am)?\s+|^)(?:(?:finally|all)\s+)?{_ADVERBS}"
        rf"(?:'ve |have |had )?(?:just\s+)?(?:moved|relocated|settled)"
        rf"(?:\s+back)?(?:\s+(?:here|house|home))?\s+(?:from\s+(?P<from>[^,.;!?]+?)\s+)?"
        rf"(?:to|into|in)\s+{_PLACE}",
        text,
        _I,
    ):
        out.append(Frame("residence", _clean(_proper(match["place"]) or "")))
    elif match := re.search(
        rf"\b(?:I|we)(?:'ve| have|'re| are|'m| am)?\s+{_ADVERBS}(?:been\s+)?"
        rf"(?:live|lives|living|lived|reside|residing|based|staying)\s+"
        rf"(?:with\s+(?:my|our)\s+[\w' -]{{2,30}}?\s+)?(?:in|at|near|outside(?: of)?)\s+"
        rf"(?!(?:a|an|the|our|my)\s+(?:[\w-]+\s+){{0,2}}?{_DWELLING}\b){_PLACE}",
        text,
        _I,
    ):
        if not re.search(r"\b(?:used to|before|grew up)\b", text, _I):
            out.append(Frame("residence", _clean(_proper(match["place"]) or "")))
    elif (
        match := re.search(  # "I live in a flatshare in Brixton": the place of the home named
            rf"\b(?:I|we)(?:'ve| have|'re| are|'m| am)?\s+{_ADVERBS}(?:been\s+)?"
            rf"(?:live|living|lived|staying|renting|rent)\s+in\s+(?:a|an|the|our|my)\s+"
            rf"(?:[\w-]+\s+){{0,2}}?{_DWELLING}\s+(?:in|near)\s+{_PLACE}",
            text,
            _I,
        )
        or re.search(  # "got the flat in Peckham, moved in on the 1st"
            rf"\b(?:got|bought|rented|found|signed for)\s+(?:the|a|our|a new|the new)\s+"
            rf"{_DWELLING}\s+in\s+{_PLACE}(?=[^.;!?]*\bmoved in\b)",
            text,
            _I,
        )
        or re.search(
            rf"\b(?:from\s+)?(?:my|our) (?:new )?(?:home|place|apartment|flat|house|condo)"
            rf"(?: is)? in\s+{_PLACE}",
            text,
            _I,
        )
        or re.search(
            rf"\bthe new (?:place|apartment|flat|house|home|condo) in\s+{_PLACE}"
            rf"(?=\s+(?:is|has|'s)\b)",
            text,
            _I,
        )
        or re.search(
            rf"(?:^|,\s*|\bI(?:'m| am)\s+)(?:currently\s+|now\s+)?based (?:in|out of)\s+{_PLACE}",
            text,
            _I,
        )
        or re.search(
            rf"\b(?:I|we)(?:'ve| have) been (?:living |based )?in\s+{_PLACE}\s+since\b", text, _I
        )
        or (  # greeting from a place one has been for a while: "Hello from Tucson! We've been
            # here a little over a month now" (not a trip's "hi from Paris, the hotel is lovely")
            re.search(
                r"\b(?:I|we)(?:'ve| have) (?:now |already )?been here (?:for )?(?:about |almost |"
                r"nearly |over |a little over |just over )?(?:a|an|one|two|three|four|five|six|"
                r"few|couple(?: of)?|\d+)\b",
                context or text,
                _I,
            )
            and not _TRIP_WORDS.search(context or text)
            and re.search(rf"^(?:hi|hello|hey|greetings|howdy)\s+from\s+{_PLACE}", text, _I)
        )
        or re.search(  # what an introduction lists: "I'm Margaret, retired, living in Leeds"
            rf"\bI(?:'m| am)\b[^.;!?]*?,\s*(?:now\s+)?(?:living|based|settled)\s+in\s+{_PLACE}",
            text,
            _I,
        )
    ):
        out.append(Frame("residence", _clean(_proper(match["place"]) or "")))
    if match := re.search(
        rf"\bI(?:'m| am)\s+(?:originally\s+)?from\s+{_PLACE}|\bI\s+(?:grew up|was born"
        rf"(?: and raised)?)\s+in\s+(?P<born>{_PLACE_BODY})|"
        rf"\bmy home ?town is\s+(?P<town>{_PLACE_BODY})",
        text,
        _I,
    ):
        where = _proper(match["place"] or match["born"] or match["town"]) or ""
        out.append(Frame("hometown", _clean(where)))
    return out


def _nationality(word: str) -> bool:
    """Whether a capitalised word names a language or a people ("my wife is Chinese")."""
    folded = word.casefold()
    return folded in _PEOPLES or any(
        folded in (w.casefold() for w in words) for words in lexicon.LANGUAGES.values()
    )


#: peoples whose word is no language's name (a language's name is in the lexicon)
_PEOPLES: Final = frozenset(
    "american canadian australian british irish scottish welsh mexican brazilian nigerian "  # noqa: SIM905
    "indian filipino malaysian singaporean taiwanese pakistani kenyan ghanaian jamaican "
    "argentinian colombian chilean peruvian egyptian turkish iranian israeli european asian "
    "african latina latino".split()
)


def _people(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    match: re.Match[str] | None
    out: list[Frame] = []
    for match in re.finditer(
        rf"\b(?:[Mm]y|[Oo]ur)\s+(?:(?:new|lovely|amazing|wonderful|little|older|younger|big|"
        rf"baby|eldest|youngest|oldest|twin|dear|late)\s+)*(?P<rel>{_REL})\b"
        rf"(?:,?\s+(?P<n>{_NAME}))?",
        text,
        _I,
    ):
        rel = match["rel"].casefold()
        kind = lexicon.RELATIONS_EN.get(rel)
        name = _name(match["n"], text)
        if kind is None or (rel in ("kid", "child", "baby") and name is None):
            continue
        if kind == "child" and name is None and match[0][:3].casefold() == "our":
            continue  # "for our kids": whose they are is left to the turns before
        if re.match(r"'s\b|s'", text[match.end("rel") :]):
            continue  # "my sister's dog": the dog's, not a relation of the speaker's
        if name is None and (kind in ("family", "friend") or rel == "partner"):
            continue  # a relative without a name, "my partner", is no state worth keeping
        value = f"{rel} {name}" if name else rel
        # died: this person, not one a clause after them speaks of ("my mum Joan since Dad died")
        tail = re.split(
            r"\b(?:since|when|after|before|because|but|(?-i:Mum|Mom|Dad|Nan|Gran|Grandma|Grandpa))\b",
            text[match.end("rel") : match.end() + 60],
            maxsplit=1,
            flags=_I,
        )[0]
        if re.search(r"\b(?:passed away|died)\b", tail, _I):
            out.append(Frame(kind, value, None if kind == "partner" else name or rel, negated=True))
            continue
        out.append(Frame(kind, value, None if kind == "partner" else name or rel))
    for match in re.finditer(  # "My wife is Niamh", "wife's name is Niamh", "my son is called cian"
        rf"(?:\b(?:[Mm]y|[Oo]ur)\s+|^)(?:(?:little|older|younger|big|eldest|youngest)\s+)?"
        rf"(?P<rel>{_REL})(?:\s+is|'s)\s+(?:(?P<called>called|named)\s+)?(?P<n>{_NAME})"
        r"(?=\s*(?:[,.;!?]|$|\s+and\b|\s+who\b|\s+btw\b))|"
        rf"(?:\b(?:[Mm]y|[Oo]ur)\s+|^)(?P<r2>{_REL})(?:'s|s')?\s+names?\s+(?:is|are)\s+(?P<m>{_NAME})",
        text,
        _I,
    ):
        rel = (match["rel"] or match["r2"]).casefold()
        kind = lexicon.RELATIONS_EN.get(rel)
        said = match["n"] or match["m"]
        if said and said.islower() and not (match["called"] or match["m"]):
            continue  # "my wife is tired": a word of the sentence after a bare "is"
        name = _name(said, text) if said and not _nationality(said) else None
        if kind is None or name is None or any(f.kind == kind and name in f.value for f in out):
            continue
        out[:] = [f for f in out if not (f.kind == kind and f.value == rel)]  # named now
        out.append(Frame(kind, f"{rel} {name}", None if kind == "partner" else name))
    for match in re.finditer(
        rf"\b(?P<n>{_NAME})(?:,\s*|\s+(?:is|was)\s+)my\s+(?:(?:little|older|younger|big|best)\s+)?"
        rf"(?P<rel>{_REL})\b|\b(?P<m>{_NAME})\s*\(\s*(?:my|our)\s+(?P<r2>{_REL})\s*[,)]",
        text,
    ):
        rel = (match["rel"] or match["r2"]).casefold()
        kind = lexicon.RELATIONS_EN.get(rel)
        name = _name(match["n"] or match["m"], text)
        if kind and name:
            out.append(Frame(kind, f"{rel} {name}", None if kind == "partner" else name))
    if match := re.search(
        rf"\b(?:I(?:'m| am)|we(?:'re| are))\s+{_ADVERBS}(?P<s>married|engaged|divorced|single|"
        r"separated|widowed)"
        rf"(?:\s+to\s+(?P<n>{_NAME}))?\b",
        text,
        _I,
    ):
        status, name = match["s"].casefold(), _name(match["n"], text)
        value = f"{status} to {name}" if name else status
        out.append(Frame("partner", value, negated=status in ("divorced", "single", "separated")))
    elif match := re.search(
        rf"\b(?:I|we)\s+(?:just\s+|finally\s+)?(?:got\s+)?(?P<s>married|engaged|divorced)"
        rf"(?:\s+(?:to\s+)?(?P<n>{_NAME}))?\b",
        text,
        _I,
    ):
        status, name = match["s"].casefold(), _name(match["n"], text)
        out.append(
            Frame(
                "partner", f"{status} to {name}" if name else status, negated=status == "divorced"
            )
        )
    elif re.search(r"\b(?:I|we)\s+(?:just\s+)?(?:broke up|split up|separated|split)\b", text, _I):
        out.append(Frame("partner", "broke up", negated=True))
    elif re.search(  # "He proposed last night and I said yes!"
        r"\b(?!(?:you|they|who|it|someone|somebody)\b)[A-Za-z]+\s+(?:finally\s+|just\s+)?proposed\b|"
        r"\bI\s+said yes\b",
        text,
        _I,
    ) and re.search(r"\bpropos", context or text, _I):
        to = re.search(rf"\bproposed\s+to\s+(?P<n>{_NAME})", text, _I)
        name = _name(to["n"], text) if to else None
        out.append(Frame("partner", f"engaged to {name}" if name else "engaged"))
    # a child by name: "we just had a baby girl, Emma", "our baby girl Chloe was born on July 9"
    if born := re.search(
        rf"\b(?:I|we)\s+(?:just\s+|finally\s+)?(?:had|welcomed)\s+(?:a|our|my)\s+(?:(?:new\s+)?baby\s+)?"
        rf"(?P<g>girl|boy|daughter|son)\b,?\s+(?:(?:named|called)\s+)?(?P<n>{_NAME})",
        text,
        _I,
    ) or re.search(
        rf"\b(?:our|my)\s+(?:new\s+)?(?:baby\s+)?(?P<g>girl|boy|daughter|son)\b,?\s+(?P<n>{_NAME}),?\s+"
        r"(?:was|is|has been)\s+(?:finally\s+)?(?:born|here|arrived)\b",
        text,
        _I,
    ):
        name = _name(born["n"], text)
        rel = {"girl": "daughter", "boy": "son"}.get(born["g"].casefold(), born["g"].casefold())
        if name and not any(f.kind == "child" and f.key == name for f in out):
            out.append(Frame("child", f"{rel} {name}", name))
    if match := re.search(
        r"\bI have (?P<n>an?|one|two|three|four|five|six|\d) (?P<r>kids?|children|child|sons?|"
        r"daughters?|grandkids|grandchildren)\b",
        text,
        _I,
    ):
        kind = "family" if match["r"].startswith("grand") else "child"
        out.append(Frame(kind, f"{match['n']} {match['r']}", match["r"].casefold()))
    return out


_LANG: Final = "|".join(
    sorted(
        (re.escape(w) for ws in lexicon.LANGUAGES.values() for w in ws if w.isascii()),
        key=len,
        reverse=True,
    )
)


def _languages(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    match = re.search(
        rf"\bI(?:'m|'ve|\s+am|\s+have)?\s+{_ADVERBS}(?P<v>speak|fluent in|learning|studying|"
        rf"been (?:learning|studying)|started learning|can speak)\s+(?P<x>(?:{_LANG})"
        r"(?:\s*(?:,|and|&)\s*(?:" + _LANG + r"))*)\b",
        text,
        _I,
    )
    if match is None:
        return []
    learning = "learn" in match["v"].casefold() or "stud" in match["v"].casefold()
    out = []
    for key in lexicon.canonical(lexicon.LANGUAGES, match["x"]):
        out.append(Frame("language", f"{key} (learning)" if learning else key, key))
    return out


def _pets(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    match: re.Match[str] | None
    out: list[Frame] = []
    if adopted := re.search(
        r"\b(?:I|we|\w+ and I)\s+(?:just\s+|finally\s+)?(?:adopted|rescued)\s+(?:a|an)\s+"
        r"(?P<k>(?:[\w-]+\s+){0,2}?[\w-]+?)(?=[!.,;]|$|\s+(?:from|today|yesterday|last|this)\b)",
        text,
        _I,
    ):
        kind = adopted["k"].casefold()
        if not re.search(r"\b(?:baby|child|kid|son|daughter|boy|girl)\b", kind):
            called = re.search(
                rf"(?:named|called|her name is|his name is|她叫|他叫|它叫|名字叫)\s*(?P<n>{_NAME})",
                context or text,
                _I,
            )
            name = _name(called["n"], context or text) if called else None
            out.append(Frame("pet", f"{kind} {name}" if name else kind, name or kind))
            return out
    for match in re.finditer(  # "biscuit (my cat) is judging me", "Hamish …, he's our Westie"
        rf"(?P<n>{_NAME})\s*\(\s*(?:my|our)\s+(?P<k>{_PET})\s*[,)]|"
        rf"\b(?!(?:Right|Well|Yes|Oh|So|And|But|Ok|Okay|Now|Then|Also)\b)(?P<n2>(?-i:[A-Z][a-z]+))\b"
        rf"[^.!?;]{{0,40}}?,?\s+(?:he|she)(?:'s|\s+is)\s+(?:my|our)\s+"
        rf"(?:(?:little|old|new|rescue)\s+)?(?P<k2>(?i:{_PET}))(?=\s*(?:[,.!;)]|$)|\s+(?:and|who)\b)",
        text,
    ):
        if match["n2"]:
            name = _name(match["n2"], text)
            if name:
                out.append(Frame("pet", f"{match['k2'].casefold()} {name}", name))
            continue
        name = _name(match["n"], text)
        if name:
            out.append(Frame("pet", f"{match['k'].casefold()} {name}", name))
    for match in re.finditer(
        rf"\b(?:[Mm]y|[Oo]ur)\s+(?:(?:new|little|old|sweet|two|three|rescue|baby)\s+)*"
        rf"(?P<k>{_PET})s?\b,?\s+(?:named\s+|called\s+)?(?P<n>{_NAME})",
        text,
    ):
        name = _name(match["n"], text)
        if name:
            gone = bool(re.search(r"\b(?:passed away|died|ran away|was put down)\b", text, _I))
            out.append(Frame("pet", f"{match['k'].casefold()} {name}", name, negated=gone))
    if match := re.search(
        rf"\b(?:I|we)\s+{_ADVERBS}(?:have|'ve got|adopted|got|rescued|bought|brought home)\s+"
        rf"(?P<num>an?|one|two|three|\d|another)\s+(?:(?:new|little|rescue|sweet|baby|[\w-]+)\s+){{0,2}}"
        rf"(?P<k>{_PET})s?\b(?:,?\s+(?:named|called)\s+(?P<n>{_NAME}))?",
        text,
        _I,
    ):
        name = _name(match["n"], text)
        kind = match["k"].casefold()
        if not out:
            value = f"{kind} {name}" if name else f"{match['num']} {kind}"
            out.append(Frame("pet", value, name or kind))
    return out


def _health(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out: list[Frame] = []
    exclusive = bool(re.search(r"\bonly\b", text, _I))
    if match := re.search(
        rf"(?:\bI(?:'m| am)|我|^(?:(?:also|and|plus|oh and|btw|but)\s+)?(?=(?:\w+\s+)?allergic\b))"
        rf"\s*{_ADVERBS}(?:(?:very|severely|seriously|deathly|mildly|slightly|"
        r"extremely|highly|super|so|quite|a (?:bit|little))\s+)*(?P<neg>not\s+|no longer\s+)?"
        r"(?:\w+\s+)?allergic\s+to\s+(?P<x>[^.;!?]+)",
        text,
        _I,
    ) or re.search(
        r"\bI(?: also| still)? (?:have|'ve got|have got) (?:a |an )?(?:\w+\s+){0,2}?"
        r"allerg(?:y|ies) to (?P<x>[^.;!?]+)|"
        r"\bI(?: also| still)?(?: have|'ve got| have got) (?:a |an )?(?:(?:severe|mild|serious|bad|"
        r"life-threatening|bad|nasty)\s+)*(?P<w>[\w' -]{2,30}?)\s+allerg(?:y|ies)\b|"
        r"\bmy (?P<y>[\w' -]{2,30}?)\s+allerg(?:y|ies)\b|"
        # "Peanut allergy here", "also a shellfish allergy": the allergy named, the speaker's
        r"^(?:(?:also|and|plus|oh and|btw)\s+)?(?:a\s+)?(?:(?:severe|mild|serious|bad|"
        r"life-threatening)\s+)*(?P<z>(?:(?!\b(?:I|I've|I'm|have|has|got|my|he|she|we|they|is|are)"
        r"\b)[\w' -]){2,30}?)\s+allerg(?:y|ies)(?:\s+(?:here|over here))?"
        r"\s*(?:[,.;!]|$)",
        text,
        _I,
    ):
        found = match.groupdict()
        said = found.get("x") or found.get("w") or found.get("y") or found.get("z") or ""
        if found.get("z") and (
            not lexicon.canonical(lexicon.FOODS, said)
            or re.search(r"\b(?:I|I've|I'm|have|has|got|my|he|she|we|they|is|are)\b", said, _I)
            or re.search(r"\b(?:not|no|never)\s*$", said, _I)  # "no cilantro, not allergy"
        ):
            said = ""  # "Hay fever allergy season": an allergen the lexicon knows, or none
        negated = bool(match.groupdict().get("neg")) or bool(
            re.search(r"\b(?:not|no longer|isn't|aren't)\b.*\banymore\b|\bafter all\b", text, _I)
            and re.search(r"\bnot\b", text, _I)
        )
        value = _listed(said, lexicon.FOODS) if said else ""
        out += _allergens(value, negated=negated, exclusive=exclusive and not negated)
    elif reaction := _REACTION.search(text):  # "Shellfish gives me hives", "I react to latex"
        said = _clean(next(v for v in reaction.groupdict().values() if v))
        if lexicon.canonical(lexicon.FOODS, said):
            out += _allergens(_listed(said, lexicon.FOODS), negated=False, exclusive=False)
    elif _ALLERGY_CUE.search(context) or any(f.kind in ("allergy", "avoids") for f in earlier):
        out += _allergy_update(text)
    if match := re.search(
        rf"(?:\bI\s+{_ADVERBS}|^)(?:can't|cannot|can not|mustn't|shouldn't|am not allowed to)\s+"
        r"(?:eat|have|"
        r"touch|drink|take|do)\s+(?P<x>[^.;!?]+)|"
        # "gotta avoid shellfish", "I have to avoid dairy", "no nuts for me", "nuts are a no-go"
        r"(?:\bI\s+(?:have to|need to|must|try to|always)\s+|^(?:gotta|got to|have to|must)\s+|"
        r"\bI\s+|\bI(?:'m| am)\s+(?:(?:still|now|also)\s+)?(?=avoiding))avoid(?:ing)?\s+"
        r"(?P<y>[^.;!?,]+)|"
        r"^(?:and\s+|also\s+)?no\s+(?P<z>[\w' -]{2,30}?)\s+for\s+me\b|"
        r"^(?P<w>[\w' -]{2,30}?)(?:\s+is|\s+are|'s)\s+(?:a\s+)?(?:hard\s+|big\s+)?"
        r"(?:no-go|no go|no)(?:\s+(?:for me|zone)|\s*$)|"
        # "I'm off dairy now", "staying away from gluten", "I steer clear of nuts", "I cut out
        # dairy", "and no sesame either"
        rf"\bI(?:'m| am)\s+{_ADVERBS}(?:completely\s+)?off\s+(?P<v>[^.;!?,]+)|"
        r"(?:\bI(?:'m| am)?\s+|^)(?:\w+\s+)?(?:stay(?:ing)?|keep(?:ing)?|steer(?:ing)?)\s+"
        r"(?:well\s+)?(?:away from|clear of)\s+(?P<u>[^.;!?,]+)|"
        r"\bI(?:'ve| have)?\s+(?:completely\s+)?cut\s+out\s+(?P<t>[^.;!?,]+)|"
        r"^(?:and\s+)?no\s+(?P<s>[\w' -]{2,30}?)\s+either\b",
        text,
        _I,
    ):
        said = next(match[g] for g in "xyzwvuts" if match[g])
        kind = (
            "allergy" if re.search(r"allerg|epi-?pen|anaphyla", context or text, _I) else "avoids"
        )
        out += [
            Frame(kind, word, item)
            for item, word in dict(lexicon.named(lexicon.FOODS, _phrase(said, 0))).items()
            if not any(f.key == item for f in out)
        ]
    for match in re.finditer(  # each one said ("I'm lactose intolerant and I have asthma")
        rf"\bI(?:\s+(?:also|still|now))?(?:\s+(?:have|have got|was diagnosed with|got "
        rf"diagnosed with|suffer from|live with|struggle with|am dealing with|developed|"
        rf"am recovering from|am intolerant (?:to|of))|'ve got|'ve been diagnosed with|"
        rf"'m dealing with|'m recovering from|'m intolerant (?:to|of))\s+(?P<x>[^,.;!?]+)|"
        rf"\bI(?:'m| am)\s+(?:an?\s+)?{_ADVERBS}(?:\d+\s+(?:weeks?|months?)\s+)?"
        rf"(?P<y>diabetic|asthmatic|t1d|t2d|type 1|"
        rf"epileptic|pregnant|breastfeeding|breast-feeding|lactose intolerant|gluten intolerant|"
        rf"autistic|prediabetic)\b|"
        rf"\bI(?:'m| am)\s+(?P<not>not|no longer)\s+(?:\w+\s+)?(?P<z>diabetic|asthmatic|pregnant|"
        rf"lactose intolerant|gluten intolerant|prediabetic)\b",
        text,
        _I,
    ):
        said = match["x"] or match["y"] or match["z"]
        verb = match[0][: match.start("x") - match.start()] if match["x"] else ""
        if "intolerant" in verb.casefold():
            said = f"{_clean(said)} intolerant"  # "intolerant to gluten": gluten intolerant
        keys = lexicon.canonical(lexicon.CONDITIONS, said)
        if not keys and (named := _NAMED_CONDITION.match(_clean(said))):
            keys = [named[0].casefold()]  # "G6PD deficiency", "Hashimoto's disease"
        if not keys and "recovering" in verb.casefold() and _MEDICAL_EVENT.search(said):
            what = _clean(said)  # "recovering from knee surgery": a condition while it lasts
            out.append(Frame("condition", f"recovering from {what}", _key(what, 3)))
            continue
        negated = bool(match["not"]) or bool(
            re.search(r"\b(?:no longer|not|don't|isn't)\b", text, _I)
        )
        keys = [k for k in keys if not any(f.kind == "condition" and f.key == k for f in out)]
        out += [Frame("condition", _condition_value(said, key), key, negated) for key in keys]
        if keys and (
            also := re.search(r"\band\s+(?:also\s+)?(?P<m>(?:take|use|am on|'m on)\s+.+)", said, _I)
        ):
            out += _medication(f"I {also['m']}")
    if not any(f.kind == "condition" for f in out):
        out += _condition_said_shortly(text)
    if match := re.search(
        r"\bmy (?P<x>[\w' -]{2,30}?) (?:is|has) (?:gone|cured|under control|in remission|"
        r"better now|healed)\b",
        text,
        _I,
    ):
        out += [
            Frame("condition", key, key, negated=True)
            for key in lexicon.canonical(lexicon.CONDITIONS, match["x"])
        ]
    out += _medication(text, context, any(f.kind == "condition" for f in [*earlier, *out]))
    out += _diet(text)
    out += _access(text)
    out += _restriction(text)
    return out


#: what one recovers from that is a matter of health
_MEDICAL_EVENT: Final = re.compile(
    r"\b(?:surgery|operation|op|injury|fracture|broken|stroke|heart attack|covid|flu|pneumonia|"
    r"chemo|chemotherapy|radiotherapy|c-section|transplant|replacement|concussion|infection|"
    r"sepsis|burnout)\b",
    _I,
)
#: who may tell a person what not to do for their health
_CARER_EN: Final = (
    r"(?:doctor|dr|gp|physio|physiotherapist|surgeon|consultant|specialist|nurse|midwife|"
    r"cardiologist|neurologist|orthopedist|obgyn|therapist|hospital)"
)
#: what they say must not be done: "the doctor says I mustn't lift anything heavy", "physio
#: says no running for 6 weeks", "I'm not allowed to fly until after the scan"
_RESTRICTED_EN: Final = re.compile(
    rf"\b{_CARER_EN}s?\.?\s+(?:says|said|told me|has told me|wants me|advised(?: me)?|"
    r"insists)\s+(?:that\s+)?(?:I\s+)?(?:mustn't|must not|can't|cannot|shouldn't|"
    r"should not|am not to|not to|to avoid|to stop|"
    r"(?P<no>no)(?!\s+(?:idea|problem|worries|way|need)\b))"
    r"\s+(?P<x>[^,.;!?]+)|"
    r"\bI(?:'m| am)\s+(?:still\s+)?not (?:allowed|supposed|meant) to\s+(?P<y>[^,.;!?]+)|"
    r"\b(?:I've been|I was|I got|I'm) (?:told|advised) (?:not to|to avoid|no)\s+(?P<z>[^,.;!?]+)",
    _I,
)
#: a restriction lifted: "physio cleared me to run again", "I'm allowed to drive again"
_LIFTED_EN: Final = re.compile(
    r"\b(?:cleared me to|cleared to|allowed to)\s+(?P<x>[a-z][\w -]{2,30}?)\s+again\b", _I
)


def _restriction(text: str) -> list[Frame]:
    """What a doctor or a therapist says the speaker must not do (:data:`_RESTRICTED_EN`), or
    that it is allowed again; a food or a drink not to have is read by the diet and the
    drinks."""
    if match := _RESTRICTED_EN.search(text):
        said = _clean(match["x"] or match["y"] or match["z"])
        if said and not (
            lexicon.canonical(lexicon.FOODS, said) or lexicon.canonical(lexicon.DRINKS, said)
        ):
            act = re.sub(
                r"\s+(?:for|until|till|before|after|while|during)\b.*$", "", said, flags=_I
            )
            value = f"no {said}" if match["no"] else f"not to {said}"
            return [Frame("restriction", value, _key(act, 2))]
    if match := _LIFTED_EN.search(text):
        act = _clean(match["x"])
        return [Frame("restriction", act, _key(act, 2), negated=True)]
    return []


#: an allergy said by the reaction it gives ("Shellfish gives me hives", "Penicillin makes me
#: break out in a rash", "I react badly to latex"): read for an allergen the lexicon knows
_REACTION: Final = re.compile(
    r"^(?:the\s+|any\s+)?(?P<x>[\w' -]{2,30}?)\s+(?:gives?|gave)\s+me\s+(?:hives|a rash|rashes|"
    r"an allergic reaction|a bad reaction|a reaction|reactions|anaphylaxis)\b|"
    r"^(?:the\s+|any\s+)?(?P<y>[\w' -]{2,30}?)\s+(?:makes?|made)\s+me\s+(?:break out|swell(?: up)?|"
    r"itch|wheeze|come out in hives|go into anaphylaxis)\b|"
    r"\bI\s+(?:always\s+)?(?:react|reacted)\s+(?:(?:really\s+)?badly\s+)?to\s+(?P<z>[^,.;!?]+)",
    _I,
)

#: words that make a turn about an allergy: an elliptical clause of it speaks of one
_ALLERGY_CUE: Final = re.compile(r"allerg|epi-?pen|anaphyla|hives|过敏", _I)


def _allergy_update(text: str) -> list[Frame]:
    """What a clause of a turn about an allergy says of it without saying "allergic": "it's
    only cashew and pistachio" (the only allergens), "almonds walnuts hazelnuts all fine"
    or "crab is fine" (no allergy to these)."""
    if match := re.search(
        r"\b(?:it's|it is|its|that's|turns out it's)\s+(?:actually\s+)?only\s+(?P<x>[^.;!?]+)",
        text,
        _I,
    ):
        return _allergens(_phrase(match["x"], 0), negated=False, exclusive=True)
    if match := re.search(
        r"^(?:but\s+|and\s+|so\s+)?(?P<x>[\w' ,-]{2,60}?)\s+(?:is\s+|are\s+|'s\s+)?"
        r"(?:all\s+|totally\s+|actually\s+|perfectly\s+)*(?:fine|ok|okay|safe|no problem)\b",
        text,
        _I,
    ):
        said = _clean(match["x"])
        if lexicon.canonical(lexicon.FOODS, said):
            return _allergens(said, negated=True, exclusive=False)
    return []


#: a condition named by what it is, whatever its name: "G6PD deficiency", "Crohn's disease"
_NAMED_CONDITION: Final = re.compile(
    r"^(?:[\w'-]+\s+){0,3}(?:deficiency|disorder|disease|syndrome|intolerance|insufficiency|"
    r"condition|anemia|anaemia)\b",
    _I,
)


#: a condition of the speaker's said without "I have": at the head of an elliptical clause
#: ("Also migraines, twice a month"), as "my X" ("my migraines are back"), got ("I get
#: migraines"), diagnosed or named by a doctor ("diagnosed with anaemia", "the doctor says it's
#: asthma")
_CONDITION_SHORTLY: Final = re.compile(
    r"^(?:(?:also|and|plus|oh and|oh|still|ugh)\s*,?\s+)*(?:the\s+|my\s+)?(?P<head>[\w' -]{3,40}?)"
    r"(?=\s*(?:[,;:(]|$|\s+(?:are|is|have|has|again|flar\w*|back|worse|better|started|"
    r"acting up|kicked in)\b))|"
    r"\b(?:my)\s+(?P<my>[\w' -]{3,30}?)\s+(?:are|is|have|has|keeps?|got|flar\w*)\b|"
    r"\bI\s+(?:(?:still|also|often|sometimes|keep)\s+)?(?:get|getting|been getting|'ve been "
    r"getting|keep getting)\s+(?P<get>[\w' -]{3,30})|"
    r"\b(?:was |got |been )?diagnosed (?:with|as having)\s+(?P<dx>[\w' -]{3,40})|"
    r"\b(?:doctor|dr|gp|specialist)\w*\s+(?:says|said|thinks|confirmed)\s+(?:I have|I've got|"
    r"it's|its|it is)\s+(?P<doc>[\w' -]{3,40})",
    _I,
)
#: someone else spoken of in the clause: their condition is not the speaker's
#: (:mod:`memstrata.curate.cared_for` reads it as theirs)
_SOMEONE_ELSE_EN: Final = re.compile(
    r"\b(?:he|she|his|her|they|their|him|my (?:mom|mum|mother|dad|father|husband|wife|partner|"
    r"son|daughter|kid|kids|child|boyfriend|girlfriend|sister|brother|grandma|grandpa|friend|"
    r"aunt|uncle|cousin|baby|dog|cat))\b",
    _I,
)


def _condition_said_shortly(text: str) -> list[Frame]:
    """The speaker's condition said without "I have" (:data:`_CONDITION_SHORTLY`): only a
    known condition (:data:`memstrata.curate.lexicon.CONDITIONS`), never of someone else the
    clause speaks of."""
    if _SOMEONE_ELSE_EN.search(text):
        return []
    for match in _CONDITION_SHORTLY.finditer(text):
        said = next((v for v in match.groupdict().values() if v), "")
        keys = lexicon.canonical(lexicon.CONDITIONS, said)
        if keys:
            return [
                Frame("condition", _condition_value(said, key), key, plain=True) for key in keys
            ]
    return []


def _condition_value(said: str, key: str) -> str:
    if key not in lexicon.CONDITIONS:  # as said: "G6PD deficiency"
        found = re.search(re.escape(key), said, _I)
        return found[0] if found else key
    """The words a condition was said in ("type 2 diabetes"), else its canonical name."""
    for word in sorted(lexicon.CONDITIONS[key], key=len, reverse=True):
        found = re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", said, _I)
        if found:
            return found[0]
    return key


def _allergens(value: str, *, negated: bool, exclusive: bool) -> list[Frame]:
    value = re.sub(
        r"(?:\s+(?:btw|lol|haha|tho|though|too|as well|also|fyi|anyway))+$", "", value, flags=_I
    )
    if not value:
        return []
    keys = lexicon.canonical(lexicon.FOODS, value)
    if not keys:
        items = _items(value)
        keys = [_key(i) for i in items if _key(i)]
    if not keys:
        return []
    key = "+".join(sorted(keys))
    return [Frame("allergy", value, key, negated=negated, exclusive=exclusive)]


#: words that make a clause about medicine: an unknown name taken or used in it is a drug
_MEDICAL: Final = re.compile(
    r"\b(?:doctor|dr|gp|prescri\w*|pharmac\w*|inhaler|puffs?|dose|doses|dosage|mg|pills?|"
    r"tablets?|meds|medication|medicine|refill|asthma|diabet\w*|blood pressure|thyroid|"
    r"allerg\w*|injections?)\b",
    _I,
)


def _medication(text: str, context: str = "", medical: bool = False) -> list[Frame]:
    """A medication taken, started, switched or stopped: a known one (a name of
    :data:`memstrata.curate.lexicon.MEDICATIONS`, a drug's suffix, pills or a dose), or any
    name taken in a clause about medicine (a doctor, an inhaler, a condition of the turn:
    ``medical``)."""
    out: list[Frame] = []
    medical = medical or bool(_MEDICAL.search(text))
    if switch := re.search(
        r"\bswitched\s+(?:me\s+)?(?:off|from)\s+(?:(?:the|my)\s+)?(?P<old>[\w-]+(?:\s+[\w-]+){0,2}?)"
        r"\s+(?:to|onto)\s+(?P<new>[\w-]+)",
        text,
        _I,
    ):
        old, new = switch["old"], switch["new"]
        known = any(
            lexicon.is_medication(w) or lexicon.canonical(lexicon.MEDICATIONS, w)
            for w in (old, new)
        )
        if (medical or known) and not (lexicon.common(old) or lexicon.common(new)):
            return [
                Frame("medication", old, _med_key(old), negated=True),
                Frame("medication", new, _med_key(new)),
            ]
    if off := re.search(  # "the GP took me off the amlodipine", "I came off sertraline"
        r"\b(?:took|taken|takes|take|came|come|coming|got|get|going)\s+(?:me\s+|him\s+|her\s+)?"
        r"off\s+(?:the\s+|my\s+|his\s+|her\s+)?(?P<x>[\w-]+)",
        text,
        _I,
    ):
        name = off["x"]
        if lexicon.is_medication(name) or lexicon.canonical(lexicon.MEDICATIONS, name):
            out.append(Frame("medication", name, _med_key(name), negated=True))
    # "The metformin was upsetting my stomach, so I stopped it": the medicine is what the
    # clause before is about, and the only one the sentence names (an ending is never guessed)
    if (
        gone := re.search(
            r"\b(?:the\s+|my\s+)?(?P<x>[A-Za-z][\w-]{3,})\s+(?:was|were|kept|had|upset|made|gave|"
            r"caused|did|wasn't)\b[^.;!?]*?"
            r"\b(?:so|and)\s+I\s+(?:stopped|quit|came off|stopped taking)\s+(?:it|them)\b",
            text,
            _I,
        )
    ) and (lexicon.canonical(lexicon.MEDICATIONS, gone["x"]) or lexicon.is_medication(gone["x"])):
        named = {
            _med_key(w)
            for w in re.findall(r"[A-Za-z][\w-]{3,}", text[: gone.end()])
            if lexicon.canonical(lexicon.MEDICATIONS, w) or lexicon.is_medication(w)
        }
        if named == {_med_key(gone["x"])}:
            out.append(Frame("medication", gone["x"], _med_key(gone["x"]), negated=True))
    # a known medicine named makes the clause one about medicine
    names_one = bool(lexicon.canonical(lexicon.MEDICATIONS, text))
    if (medical or names_one or bool(_MEDICAL.search(context))) and (
        swap := re.search(
            r"\breplaced\s+(?:my\s+|the\s+)?(?P<old>[\w-]+)\s+with\s+(?P<new>[\w-]+)|"
            r"\b(?P<old2>[\w-]+)\s+(?:was|got|has been|is)\s+replaced\s+(?:by|with)\s+"
            r"(?P<new2>[\w-]+)|\bno more\s+(?P<gone>[\w-]+)(?:[,;]?\s+(?:it's|its|it is|now)\s+"
            r"(?P<now>[\w-]+))?",
            text,
            _I,
        )
    ):
        # "replaced amlodipine with losartan", "no more ventolin, its symbicort now"
        old = swap["old"] or swap["old2"] or swap["gone"]
        new = swap["new"] or swap["new2"] or swap["now"]
        known = lexicon.is_medication(old) or bool(lexicon.canonical(lexicon.MEDICATIONS, old))
        if known or (not swap["gone"] and not lexicon.common(old) and len(old) > 3):
            found = [Frame("medication", old, _med_key(old), negated=True)]
            if new and not lexicon.common(new) and len(new) > 3:
                found.append(Frame("medication", new, _med_key(new)))
            return found
    if medical and (
        put := re.search(
            r"\b(?:started|put|got)\s+me\s+on\s+(?P<x>[\w-]+)|\bprescribed\s+(?:me\s+)?(?P<y>[\w-]+)",
            text,
            _I,
        )
    ):
        name = put["x"] or put["y"]
        if not lexicon.common(name) and len(name) > 3:
            out.append(Frame("medication", name, _med_key(name)))
    for carried in re.finditer(
        rf"\b(?:\d+|one|two|three|a couple of)\s+puffs?\s+of\s+(?P<x>[\w-]+)|"
        rf"(?:\bI\s+{_ADVERBS}|^|\b(?:still|always|also)\s+)(?:(?:have|need|got) to\s+|must\s+|"
        rf"gotta\s+)?(?:carry|keep|have|always have)\s+(?:(?:an?|my|the|two|2)\s+)?"
        rf"(?P<c>[\w-]+)",
        text,
        _I,
    ):
        name = carried["x"] or carried["c"]
        keys = lexicon.canonical(lexicon.MEDICATIONS, name)
        if keys or (carried["x"] and not lexicon.common(name) and len(name) > 3):
            out.append(Frame("medication", name, keys[0] if keys else name.casefold()))
    for match in re.finditer(
        rf"\bI(?:'m| am)?\s+{_ADVERBS}(?P<verb>take|taking|on|started taking|started on|"
        r"began taking|use|using|need|stopped taking|stopped|quit|came off|went off|am off|'m off|"
        r"no longer take)\s+(?P<x>(?:(?!\band\b|\bI\b)[^,.;!?])+)",
        text,
        _I,
    ):
        said = _phrase(match["x"], 0)
        head = re.split(
            r"\s+(?:for|because|since|after|to help with)\s+", said, maxsplit=1, flags=_I
        )[0]
        if head != said and (
            lexicon.canonical(lexicon.MEDICATIONS, head) or lexicon.is_medication(head.split()[-1])
        ):
            said = head  # "warfarin for her heart": the medicine; what it is for, in the text
        keys = lexicon.canonical(lexicon.MEDICATIONS, said)
        words = re.findall(r"[A-Za-z]+", said)
        if not words or any(f.key in [w.casefold() for w in words] for f in out):
            continue
        if not keys:
            keys = [w.casefold() for w in words if lexicon.is_medication(w)]
        if not keys and re.search(
            r"\b(?:pills?|tablets?|meds|medications?|medicine|injections?|shots|\d+\s?mg)\b",
            said,
            _I,
        ):
            keys = [_key(said)]
        if not keys and medical and not lexicon.common(words[0]) and len(words[0]) > 3:
            keys = [words[0].casefold()]  # "I use ventolin before long runs" beside asthma
        verb = match["verb"].casefold()
        negated = verb.startswith(
            ("stopped", "quit", "came", "went", "am off", "'m off", "no longer")
        ) or bool(_ANYMORE.search(text[match.start() :]))
        out += [Frame("medication", said, key, negated=negated) for key in keys]
    return out


def _med_key(name: str) -> str:
    """The key a medication is known by: its canonical name when the lexicon has it (so
    "no more ventolin" ends "I use salbutamol"), else its word."""
    known = lexicon.canonical(lexicon.MEDICATIONS, name)
    return known[0] if known else name.casefold()


def _diet(text: str) -> list[Frame]:
    out: list[Frame] = []
    diets = "|".join(
        sorted(
            (re.escape(w) for ws in lexicon.DIETS.values() for w in ws if w.isascii()),
            key=len,
            reverse=True,
        )
    )
    if match := re.search(
        rf"\bI(?:'m| am|'ve| have)?\s+{_ADVERBS}(?:gone |went |turned |become |became |been )?"
        rf"(?P<neg>not\s+|no longer\s+)?(?:(?:a|an|on a|on the|strictly|mostly|fully)\s+)?"
        rf"(?P<x>{diets})\b",
        text,
        _I,
    ) or re.search(
        rf"\bI\s+{_ADVERBS}(?:keep|eat|eat only|only eat)\s+(?P<x>halal|kosher)\b", text, _I
    ):
        key = lexicon.canonical(lexicon.DIETS, match["x"])
        negated = bool(match.groupdict().get("neg")) or bool(
            re.search(r"\bnot\b.*\banymore\b", text, _I)
        )
        if key:
            out.append(Frame("diet", key[0], negated=negated))
    elif re.search(
        r"\bI(?:'ve| have)?\s+(?:started\s+)?eat(?:ing)?\s+(?:meat|fish|chicken)\s+again\b",
        text,
        _I,
    ):
        out.append(Frame("diet", "eats meat again", negated=True))
    if match := re.search(
        r"\bI\s+(?:(?:also|still|now)\s+)?(?:don't|do not|never|no longer|won't|try not to)\s+"
        r"eat\s+(?P<x>[^,.;!?]+)",
        text,
        _I,
    ):
        said = _phrase(match["x"], 0)
        out += [
            Frame("avoids", word, key)
            for key, word in dict(lexicon.named(lexicon.FOODS, said)).items()
        ]
    if again := re.search(  # "I've started having a bit of dairy again": no longer avoided
        rf"\bI(?:'ve| have|'m| am)?\s+{_ADVERBS}(?:started\s+|begun\s+|been\s+)?"
        r"(?:eat|eating|having|have|drinking|drink|back on)\s+(?P<x>[^,.;!?]{2,40}?)\s+again\b",
        text,
        _I,
    ):
        said = again["x"]
        out += [
            Frame("avoids", key, key, negated=True)
            for key in lexicon.canonical(lexicon.FOODS, said)
            if not any(f.key == key for f in out)
        ]
    return out


def _access(text: str) -> list[Frame]:
    out: list[Frame] = []
    if match := re.search(
        rf"\bI\s+{_ADVERBS}(?:use|need|rely on|(?:'m|am) in|have|wear|can't|cannot|can not)\s+"
        r"(?P<x>[^,.;!?]+)|\bI(?:'m| am)\s+" + _ADVERBS + r"(?:\w+\s+)?(?P<y>hard of hearing|"
        r"deaf|blind|visually impaired|colou?r ?blind|partially sighted)\b",
        text,
        _I,
    ):
        said = _clean(match["x"] or match["y"])
        keys = lexicon.canonical(lexicon.ACCESS, said)
        out += [Frame("accessibility", said, key) for key in keys]
    return out


def _drinks(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out: list[Frame] = []
    if match := re.search(
        r"(?:\bI(?:'ve| have)?\s+|(?:^|[,;]\s*)(?:and\s+|so\s+|now\s+)?)(?:just\s+)?"
        r"(?:switched|changed|moved)\s+(?:over\s+)?"
        r"(?:from\s+(?P<old>[^,.;!?]+?)\s+)?to\s+(?P<x>[^,.;!?]+)",
        text,
        _I,
    ):  # "I switched to oat milk", "I've cut down coffee, switched to green tea mostly"
        new = lexicon.canonical(lexicon.DRINKS, match["x"])
        old = lexicon.canonical(lexicon.DRINKS, match["old"] or "")
        out += [Frame("drink", key, key, negated=True) for key in old if key not in new]
        out += [Frame("drink", _phrase(match["x"], 0), key, exclusive=True) for key in new[:1]]
        return out
    if match := re.search(
        rf"\bI(?:'ve| have)?\s+{_ADVERBS}(?:gone|went|come|came) off\s+(?P<x>[^,.;!?]+)|"
        rf"\bI(?:'m| am)\s+{_ADVERBS}(?:off|done with)\s+(?P<y>[^,.;!?]+)|"
        r"^(?:(?:also|and|so|now)\s+)*(?:off|done with)\s+(?P<z>[^,.;!?]+)",  # "off the pints"
        text,
        _I,
    ):
        said = _phrase(match["x"] or match["y"] or match["z"], 0)
        return [Frame("drink", k, k, negated=True) for k in lexicon.canonical(lexicon.DRINKS, said)]
    if match := re.search(
        rf"\bI(?:'m| am)\s+{_ADVERBS}(?:back\s+)?on\s+(?P<x>[^,.;!?]+)|"
        r"(?:^|[,;]\s*)(?:(?:honestly|and|so|but|now)\s+)*back on\s+(?P<y>[^,.;!?]+)",
        text,
        _I,
    ):  # "I'm on rooibos now", "honestly back on coffee now, 2 cups a day"
        said = _phrase(match["x"] or match["y"], 0)
        keys = lexicon.canonical(lexicon.DRINKS, said)
        if keys:  # "I'm on rooibos now, like 4 cups a day"
            return [Frame("drink", said, keys[0], exclusive=True)]
    if match := re.search(  # said without a verb: "matcha in the morning now", "matcha only"
        r"(?:^|[,;]\s*)(?:(?:and|now|so|just|but)\s+)?(?P<x>[\w -]{2,30}?)\s+(?P<when>only|in the "
        r"mornings?|every (?:day|morning)|each morning|these days|instead)(?:\s+now)?\b|"
        r"(?:^|[,;]\s*)(?:(?:and|so|just|but)\s+)?(?P<y>[\w -]{2,30}?(?:\s\d+\.\d+)?)\s+now"
        r"\s*(?:$|[,;])",
        text.strip(" .!"),
        _I,
    ):
        said = _clean(match["x"] or match["y"])
        keys = lexicon.canonical(lexicon.DRINKS, said)
        if keys and len(said.split()) <= 3:
            only = (match["when"] or "").casefold() == "only" or match["y"] is not None
            return [Frame("drink", said, keys[0], exclusive=only, plain=True)]
    match = re.search(
        rf"\bI\s+{_ADVERBS}(?P<neg>don't\s+|do not\s+|no longer\s+|never\s+|stopped\s+|quit\s+|"
        rf"gave up\s+|cut out\s+|have stopped\s+|'ve stopped\s+)?{_ADVERBS}"
        r"(?:drink|drinking|have|having)\s+(?P<x>[^.;!?]+)",
        text,
        _I,
    ) or re.search(
        r"\bI\s+(?P<neg>quit|gave up|cut out|stopped)\s+(?P<x>coffee|tea|alcohol|drinking|"
        r"caffeine|soda|beer|wine)\b",
        text,
        _I,
    )
    if match is None:
        return out
    said = _phrase(match["x"], 0)
    keys = lexicon.canonical(lexicon.DRINKS, said)
    if not keys and match["x"].casefold().startswith(("drinking", "caffeine")):
        keys = ["alcohol" if match["x"].casefold().startswith("drinking") else "coffee"]
    negated = bool(match["neg"]) or bool(_ANYMORE.search(text))
    only = bool(re.search(r"\bonly\s+(?:drink|have)\b|\bjust\s+(?:drink|have)\b", text, _I))
    whole = _clean(text[match.start("x") :].split(".")[0])
    for key in keys[:2]:
        out.append(
            Frame("drink", whole if len(keys) == 1 else key, key, negated, only and not negated)
        )
    return out


def _likes(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out: list[Frame] = []
    if match := re.search(
        r"\bmy (?:all-time |absolute |new )?fav(?:ou?)?rite (?P<w>[\w -]{1,24}?) (?:is|are|has "
        r"to be|would be)\s+(?P<x>[^.;!?]+)",
        text,
        _I,
    ):
        what, value = match["w"].casefold(), _phrase(match["x"], 0)
        if value and not re.match(r"(?:it|that|this|them)\b", value, _I):
            out.append(Frame("favorite", f"{what}: {value}", what))
        return out
    if match := re.search(  # "Dance is pretty much my go-to for stress relief", "X is my top pick"
        r"(?:^|[,;]\s*(?:but\s+|and\s+)?|\bbut\s+)(?P<x>[A-Za-z][\w' -]{1,40}?)\s+(?:is|are)\s+"
        r"(?:(?:pretty much|really|definitely|totally|always|still|now|also|kind of)\s+)?my\s+"
        r"(?:all-time\s+)?(?:fav(?:ou?)?rite|fave|go-to|top pick)(?:\s+(?P<w>(?!(?:for|to|when|"
        r"in|on|at|with|of|one|too)\b)[a-z]+))?(?:\s+for\s+(?P<f>[\w -]{2,30}))?",
        text,
        _I,
    ):
        value = _clean(match["x"])
        what = (match["w"] or match["f"] or "").casefold().strip()
        if value and not re.match(r"(?:it|that|this|they|these|those|he|she)\b", value, _I):
            label = f"{what}: {value}" if what else value
            out.append(Frame("favorite", label, what or _key(value)))
            return out
    match = re.search(
        rf"\bI\s+{_ADVERBS}(?P<neg>don't\s+|do not\s+|no longer\s+|never\s+|don't really\s+)?"
        rf"{_ADVERBS}(?P<v>love|like|enjoy|prefer|adore|hate|dislike|can't stand|cannot stand|"
        r"detest|am into|'m into|am a (?:big |huge )?fan of|'m a (?:big |huge )?fan of|"
        r"am passionate about|'m passionate about|am obsessed with|'m obsessed with)\s+"
        r"(?P<x>[^.;!?]+)",
        text,
        _I,
    ) or re.search(
        rf"\bI(?:'m| am)\s+{_ADVERBS}(?P<neg>not\s+|no longer\s+)?(?P<v>into|a (?:big |huge )?"
        r"fan of|passionate about|obsessed with|keen on|crazy about|hooked on|addicted to)\s+"
        r"(?P<x>[^.;!?]+)",
        text,
        _I,
    )
    if match is None:
        return out
    obj = _phrase(match["x"], 0)
    obj = re.split(r"\s+(?:than|over|instead of|rather than)\s+", obj, maxsplit=1)[0]
    if not obj or re.match(
        r"(?:it|this|that|them|these|those|you|him|her|everything|anything|something|"
        r"to (?:hear|see|know|think|say)|the (?:idea|way|feeling|thought))\b",
        obj,
        _I,
    ):
        return out
    if not complete(obj) or len(obj) < 3:
        return out
    verb = match["v"].casefold().replace("'m ", "").replace("am ", "")
    negated = bool(match["neg"]) and bool(_ANYMORE.search(text))
    if match["neg"] and not negated:
        verb = f"not {verb}"
    drinks = lexicon.canonical(lexicon.DRINKS, obj)
    if drinks and verb in ("prefer", "like", "love") and len(_key(obj, 6).split()) <= 2:
        out.append(Frame("drink", obj, drinks[0], negated, verb == "prefer" and not negated))
        return out
    out.append(Frame("like", f"{verb} {obj}", _key(obj), negated=negated))
    return out


_RECURRING: Final = re.compile(
    r"\b(?:every (?:single )?(?:\w+ )?(?:day|morning|evening|night|week|weekend|month|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)|each (?:day|morning|week)|"
    r"on (?:weekends|the weekends|weekdays|mondays|tuesdays|wednesdays|thursdays|fridays|"
    r"saturdays|sundays)|daily|weekly|(?:once|twice|three times|\d times) a (?:day|week|month)|"
    r"most (?:days|mornings|evenings|weekends)|usually|normally|regularly|often|"
    r"(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends|weeknights)|"
    # "Saturday mornings", "Tuesday nights", "weekday evenings": a part of the day that recurs
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekday|weekend)s?\s+"
    r"(?:mornings|afternoons|evenings|nights|lunchtimes))\b",
    _I,
)


def _routines(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out: list[Frame] = []
    if any(f.kind in ("drink", "medication", "like", "volunteer") for f in earlier):
        return out
    if gave_up := re.search(
        rf"\bI(?:'m| am|'ve| have|'d| had)?\s+{_ADVERBS}(?:(?:had|have|had) to\s+)?(?:giving up|"
        r"gave up|given up|give up|quitting|quit|stopping|stopped|stopped going to|packed in|"
        r"pack in|dropped)\s+(?:on\s+|the\s+|my\s+)?(?P<x>[a-z][\w-]*(?:\s+(?!(?:last|this|"
        r"next|in|on|at|for|since|from|after|before|because|and|but|so|now|today|yesterday)\b)"
        r"[a-z][\w-]*)?)",
        text,
        _I,
    ):
        what = _clean(gave_up["x"])
        if (
            what
            and not lexicon.common(what.split()[0])
            and not lexicon.canonical(lexicon.DRINKS, what)
        ):
            return [Frame("routine", what, _key(what, 2), negated=True)]
    if begun := re.search(  # "I've started aqua aerobics on Wednesday mornings"
        rf"\bI(?:'ve| have)?\s+{_ADVERBS}(?:started|begun|taken up|took up|joined)\s+"
        r"(?:a\s+|an\s+|the\s+)?(?P<act>[a-z][\w -]{2,30}?),?\s+(?P<when>(?:on\s+)?"
        r"(?:(?-i:[A-Z])\w+days?|weekends)(?:\s+(?:mornings|evenings|afternoons|nights))?|"
        r"on\s+\w+days?|every\s+\w+"
        r"(?:\s+(?:morning|evening|night))?|(?:once|twice|three times)\s+a\s+week)\b",
        text,
        _I,
    ):
        act = _clean(begun["act"])
        if act and not lexicon.common(act.split()[0]) and not _NEW_CLAUSE.search(act):
            said = f"{act} {begun['when']}"
            return [Frame("routine", said, _key(act, 2))]
    if no_more := re.search(
        rf"\bno more\s+(?P<x>{_SPORTS})\b|"
        rf"\b(?P<y>{_SPORTS})\s+(?:is\s+|'s\s+)?(?:on pause|on hold|paused)\b",
        text,
        _I,
    ):
        # "Physio says no more futsal": an activity ended (a medicine's "no more" is read
        # by _medication, a drink's by _drinks)
        what = no_more["x"] or no_more["y"]  # "badminton on pause obviously"
        return [Frame("routine", what, _key(what, 2), negated=True)]
    match = re.search(
        rf"\bI\s+{_ADVERBS}(?P<neg>don't\s+|do not\s+|no longer\s+|stopped\s+|quit\s+)?"
        rf"{_ADVERBS}(?P<act>(?:go|do|play|practice|practise|run|swim|walk|hike|bike|cycle|ride|"
        r"jog|train|lift|climb|dance|sing|paint|draw|write|read|cook|bake|meditate|"
        r"volunteer|teach|study|work out|hit the gym|take|attend|visit|call|pray|knit|garden|"
        r"surf|ski|skate|box|fish|row|stretch|shoot|coach|mentor|golf|bowl|sail|tutor|garden|"
        r"(?!(?:am|was|have|had|think|know|feel|want|need|hope|love|like|guess|mean|say|see|get|"
        r"got|can|will|would|could|should|must|may|might|do|did|just|really|also|still|enjoy|"
        r"hate|miss|wish|prefer|believe|remember|forget|try|plan|wonder|worry|look|seem|mind|"
        r"care|agree|doubt|bet|suppose|understand|appreciate|adore|dislike|spend|use|make|"
        r"find|keep|tell|ask|let|put|leave|bring|buy|pay|eat|drink|sleep|wake|wear|"
        r"and|or|but|nor|the|our|his|her|their|its|not)\b)"  # "I and my kids": no verb
        r"[a-z]{3,})(?:\s+[^,.;!?]+?)?)(?=\s*$|"
        r"\s*[,.;!?]|\s+(?:every|each|on|most|daily|weekly|once|twice|three|with|at|in the|"
        r"before|after|because|but|and)\b)",
        text,
        _I,
    )
    if match is None or not (_RECURRING.search(text) or match["neg"]):
        return out
    act = _clean(match["act"])
    key = _key(re.sub(r"^(?:go|do|hit the|take)\s+(?:to\s+)?", "", act, flags=_I), 2)
    negated = bool(match["neg"]) and bool(
        re.search(r"\b(?:stopped|quit|no longer|anymore)\b", text, _I)
    )
    if match["neg"] and not negated:
        return out
    rest = text[match.start("act") :]
    # up to where another clause begins ("and I volunteer"); how often, said in another
    # clause, is not this one's ("I work at Klook and I volunteer on Tuesdays")
    own = re.match(rf"(.+?){_STOP}", rest, _I)
    if own and _NEW_CLAUSE.search(rest):
        if not (match["neg"] or _RECURRING.search(own[1])):
            return out
        rest = own[1].strip(" ,")  # "swim twice a week", not "… and I love it"
    out.append(Frame("routine", _clean(rest) if len(rest) < 80 else act, key, negated=negated))
    return out


#: sports and activities people take up and give up, a closed class
_SPORTS: Final = (
    r"futsal|football|soccer|tennis|badminton|golf|running|jogging|swimming|yoga|pilates|"
    r"climbing|bouldering|cycling|hiking|choir|dancing|boxing|crossfit|basketball|volleyball|"
    r"squash|rugby|cricket|netball|hockey|skiing|surfing|karate|judo|taekwondo|aerobics|zumba|"
    r"spin(?: class)?|rowing|baseball|softball|pickleball|padel|bowling|martial arts"
)
#: another clause with its own subject ("and I volunteer", "but we")
_NEW_CLAUSE: Final = re.compile(r"\b(?:and|but|so|while)\s+(?:I|we|my|he|she|they)\b", re.I)


def _hobbies(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    match = re.search(
        rf"\bI(?:'ve| have|'m| am)?\s+{_ADVERBS}(?:been\s+)?(?:started\s+|begun\s+|taking up\s+|"
        rf"took up\s+|picked up\s+)?(?P<v>learning|learn|learned|taking|took up|taking up|"
        r"picked up|started|practicing|practising|playing)\s+(?:to\s+(?:play\s+)?)?"
        r"(?:the\s+|a\s+|an\s+)?(?P<x>[^,.;!?]+)",
        text,
        _I,
    )
    if any(
        f.kind in ("routine", "medication", "job", "language", "volunteer", "avoids")
        for f in earlier
    ):
        return []
    if joined := re.search(
        rf"\bI(?:'ve| have)?\s+{_ADVERBS}(?:joined|signed up for|signed up to)\s+"
        r"(?:a|an|the|our)\s+"
        r"(?:local\s+|new\s+|weekly\s+)?(?P<x>[\w'-]+(?:\s+[\w'-]+)?)\s+"
        r"(?:group|club|class|classes|choir|team|society|league|circle|course)\b",
        text,
        _I,
    ):
        # "I've joined a watercolour group at the village hall": an activity taken up
        what = joined["x"]
        if not lexicon.common(what.split()[-1]) or what.casefold().endswith("ing"):
            said = text[joined.start("x") : joined.end()]
            return [Frame("hobby", _clean(said), _key(what, 2))]
    if match is None:
        return []
    if _SUBORDINATE.search(text[: match.start("v")]):
        return []  # "… when I'm playing games": the time of something else, not a hobby
    obj = _phrase(match["x"], 0)
    first = obj.split()[0].casefold() if obj else ""
    if first.endswith("ly") or first in _PREPOSITIONS | _VAGUE or re.match(r"ever\b", obj, _I):
        return []
    if (
        not obj
        or re.match(
            r"(?:it|this|that|them|to|a new job|my|our|working|taking|a ton|a lot|lots|so much|"
            r"more|with|from|about|how|what|from|by|new things|stuff|things)\b",
            obj,
            _I,
        )
        or not complete(obj)
    ):
        return []
    if (
        match["v"].casefold() in ("taking", "started")
        and not first.endswith("ing")
        and not re.match(
            r"(?:\w+\s+)?(?:lessons?|classes?|class|course|piano|guitar|violin|drums|yoga|pilates|"
            r"pottery|painting|drawing|dance|dancing|swimming|running|climbing|boxing|tennis|golf|"
            r"chess|cooking|baking|knitting|photography|singing|gardening|surfing)\b",
            obj,
            _I,
        )
    ):
        return []
    return [Frame("hobby", obj, _key(obj, 2))]


#: a subordinate clause left open before a match: what it says is background, not a statement
_SUBORDINATE: Final = re.compile(
    r"\b(?:when|while|whenever|if|because|since|as|until|before|after|unless)\s+[^,.;!?]*$", _I
)
_PREPOSITIONS: Final = frozenset(
    [
        "for",
        "with",
        "from",
        "about",
        "at",
        "in",
        "on",
        "to",
        "by",
        "of",
        "into",
        "over",
        "under",
        "after",
        "before",
        "since",
        "until",
        "around",
        "through",
        "during",
        "without",
    ]
)
#: words that open no hobby ("learning a ton", "picked up a few new recipes")
_VAGUE: Final = frozenset(
    [
        "ton",
        "lot",
        "lots",
        "bit",
        "few",
        "new",
        "more",
        "much",
        "so",
        "thing",
        "things",
        "stuff",
        "skills",
        "something",
        "everything",
        "anything",
        "how",
        "what",
    ]
)
_PLAN_VERB: Final = (
    r"(?:(?:planning|hoping|thinking(?: about| of)?|getting ready|preparing)(?:\s+(?:on|to))?|"
    r"(?:going|about|looking forward) to)"
)


def _postponed(said: str, to: str) -> list[Frame]:
    """The plan ``said`` postponed to the time ``to`` (its words as said when they are only
    a time), none when ``said`` is a pronoun."""
    obj = _clean(said)
    if not obj or re.match(r"(?:it|this|that|we|i|they)$", obj, _I):
        return []
    when = _clean(to) or to.strip()
    return [Frame("plan", f"{obj}, postponed to {when}", _salient(obj))]


def _plans(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    out: list[Frame] = []
    if any(f.kind in ("residence", "employer", "job") for f in earlier if not f.negated):
        return out
    if match := re.search(
        r"(?:\b(?:the|our|my)\s+)?(?P<obj>[\w' -]{2,40}?)\s+(?:is|was|has been|got|'s|have been|"
        r"are|were)\s+(?:\w+\s+)?(?:postponed|pushed back|pushed|moved|delayed|rescheduled|"
        r"put off|bumped)(?:\s+back)?\s+(?:to|until|till|for|by)\s+(?P<t>[^,.;!?]+)|"
        r"\b(?:I|we)(?:'re| are|'m| am)?\s+(?:\w+\s+)?(?:postponed|pushed back|delayed|rescheduled|"
        r"put off|pushed|moved|pushing|moving|postponing|delaying)\s+(?:the\s+|our\s+|my\s+)"
        r"(?P<obj2>[\w' -]{2,40}?)\s+(?:back\s+)?"
        r"(?:to|until|till|by)\s+(?P<t2>[^,.;!?]+)",
        text,
        _I,
    ):
        out += _postponed(match["obj"] or match["obj2"], match["t"] or match["t2"])
        return out
    if (
        (
            moved := re.search(  # "The left eye surgery is moved again." … "so it's now April 21st"
                r"^(?:(?:the|our|my)\s+)?(?P<obj>[\w' -]{2,40}?)\s+(?:is|was|has been|got|'s)\s+"
                r"(?:\w+\s+)?(?:postponed|pushed back|moved|delayed|rescheduled|put off)"
                r"(?:\s+again)?\s*[.!]?$",
                text.strip(),
                _I,
            )
        )
        and (
            now := re.search(
                r"\bit(?:'s| is)\s+(?:now\s+)?(?:on\s+)?(?P<t>[^,.;!?]+?)"
                r"(?:\s+instead\b|[,.;!?]|$)",
                context[context.find(moved[0]) + len(moved[0]) :] if moved[0] in context else "",
                _I,
            )
        )
    ):
        out += _postponed(moved["obj"], now["t"])
        return out
    if match := re.search(
        r"(?:\b(?:the|our|my)\s+)?(?P<obj>[\w' -]{2,40}?)\s+(?:is|was|has been|got|'s|isn't|"
        r"is not|wasn't)\s+(?:\w+\s+)?(?:cancelled|canceled|called off|off|happening|going ahead)"
        r"\b|\b(?:I|we)\s+(?:\w+\s+)?"
        r"(?:cancelled|canceled|called off|scrapped|dropped|gave up on)\s+(?:the\s+|our\s+|"
        r"my\s+)?(?P<obj2>[^,.;!?]+)",
        text,
        _I,
    ):
        obj = _clean(match["obj"] or match["obj2"])
        if obj and not re.match(r"(?:it|this|that|we|i|they|work)$", obj, _I):
            # "the marathon is off for this year, postponed to Dec 2027": off until a time the
            # plan moves to, which a cancellation has not
            later = re.search(
                r"\b(?:postponed|pushed back|pushed|moved|delayed|rescheduled|put off|bumped)"
                r"(?:\s+back)?\s+(?:to|until|till)\s+(?P<t>[^,.;!?]+)",
                text[match.end() :],
                _I,
            )
            if later is not None:
                out += _postponed(obj, later["t"])
            else:
                out.append(Frame("plan", f"{obj}, cancelled", _salient(obj), negated=True))
        return out
    if booked := re.search(  # "Wedding is booked for May 2027 in Bristol"
        r"^(?:(?:the|our|my)\s+)?(?P<obj>[\w' -]{2,30}?)\s+(?:is|'s|are|'re|has been|have been)\s+"
        r"(?:now\s+)?(?:booked|set|scheduled|planned|fixed|confirmed)\s+for\s+(?P<t>[^,.;!?]+)",
        text.strip(),
        _I,
    ):
        obj = _clean(booked["obj"])
        if obj and not re.match(r"(?:it|this|that|everything|all)$", obj, _I):
            return [Frame("plan", f"{obj}, {_clean(booked['t']) or booked['t']}", _salient(obj))]
    match = re.search(
        rf"\b(?:I|we)(?:'re| are|'m| am)\s+{_ADVERBS}{_PLAN_VERB}\s+(?P<x>[^.;!?]+)|"
        r"\b(?:I|we)\s+(?:plan|intend|hope|aim|want|'d like|would like|am going|are going)\s+to\s+"
        r"(?P<y>[^.;!?]+)|"
        r"\b(?:I|we)(?:'re| are|'m| am)\s+(?P<m>(?:moving|relocating) to\s+[^,.;!?]+)|"
        r"\b(?:I|we)(?:'re| are|'m| am)\s+(?:\w+\s+)?(?P<z>(?:moving|relocating|"
        r"flying|driving|heading|going|traveling|travelling|visiting|starting|getting married|"
        r"having a baby)\b[^.;!?]*?\b(?:next|this coming|in (?:january|february|march|april|"
        r"may|june|july|august|september|october|november|december|\d{4}|a few|two|three)|"
        r"on (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)|tomorrow|soon)\b"
        r"[^.;!?]*)",
        text,
        _I,
    )
    if match is None:
        return out
    what = match["x"] or match["y"] or match["z"] or match["m"]
    what = re.sub(r"^(?:to|on)\s+", "", what.strip(), flags=_I)
    value = _clean(re.split(r"\s*[,;]\s*(?:and|but|so)?\s*(?=I\b|we\b)", what)[0])
    if not value or re.match(r"(?:it|this|that|do it|be|have)$", value, _I):
        return out
    if re.match(r"(?:keep|be|do my best|try my best|see|say|tell|ask|let)\b", value, _I):
        return out
    out.append(Frame("plan", value, _salient(value)))
    return out


def _trips(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    """A trip made ("we went to Kyoto in October", "I just got back from Chengdu"): what
    closes the plan to make it."""
    match = re.search(
        rf"\b(?:I|we)\s+(?:just\s+|finally\s+|recently\s+|also\s+)?(?:went|flew|drove|travel(?:l)?ed|"
        rf"got back|came back|returned)\s+(?:\w+\s+)?(?:to|from)\s+{_PLACE}|"
        rf"\b(?:I|we)\s+(?:just\s+|finally\s+|recently\s+)?visited\s+(?P<seen>{_PLACE_BODY})",
        text,
        _I,
    )
    if match is None or any(f.kind == "plan" for f in earlier):
        return []
    place = _clean(_proper(match["place"] or match["seen"]) or "")
    went = _clean(match[0])  # "I went to Kyoto": the rest of the sentence is its own
    return [Frame("trip", went, _salient(f"x {place}"))] if place and went else []


def _salient(phrase: str) -> str:
    """What a plan is known by: its proper names (Kyoto), else its first content words."""
    names = re.findall(rf"(?<!^)\b(?-i:[A-Z][a-z]+)\b|[{HAN}]{{2,}}", phrase.strip())
    names = [n for n in names if n.casefold() not in _NOT_NAMES]
    if names:
        return " ".join(n.casefold() for n in names[:2])
    words = [
        w
        for w in re.findall(r"[\w'-]+", phrase.casefold())
        if w not in _SKIP_FOR_KEY and not w.endswith("ly")
    ]
    return " ".join(words[:2]) or _key(phrase)


_SKIP_FOR_KEY: Final = frozenset(
    "the a an my our to go going get take have do make some this that next last trip "  # noqa: SIM905
    "visit visiting plan planning travel traveling travelling start starting new".split()
)


def _goals(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    match = re.search(
        r"\bmy (?:big |main |new )?(?:goal|dream|ambition|resolution) (?:is|for this year is) to\s+"
        r"(?P<x>[^.;!?]+)|\bI(?:'m| am)?\s+(?:really\s+)?(?:trying|working (?:hard )?on|"
        r"determined|aiming|want|hope|plan) to\s+"
        r"(?P<z>(?:learn|become|be a|get (?:better|fitter|in shape)|lose|save|run a|finish|"
        r"master|improve|quit|write a|start my own|open my own|buy a|get a degree)[^.;!?]*)|"
        r"\bI(?:'m| am)\s+(?:now\s+|currently\s+)?training for\s+"
        r"(?P<t>(?:a|an|my|the)\s+[^,.;!?]+)",
        text,
        _I,
    )
    if match is None:
        return []
    value = _phrase(match["x"] or match["z"] or f"run {match['t']}", 0)
    if not value or re.match(r"(?:it|this|that|do it|be)$", value, _I):
        return []
    return [Frame("goal", value, _salient(value))]


_LIFE: Final = re.compile(
    r"\b(?:I|we)\s+(?:just\s+|recently\s+|finally\s+|officially\s+)?(?P<ev>got married|"
    r"got engaged|got divorced|had (?:a|our|my) (?:baby|son|daughter|first child|kid)|"
    r"gave birth|graduated|got my (?:degree|diploma|masters|phd|license)|got promoted|"
    r"retired|bought (?:a|our|my|the) (?:first )?(?:house|home|flat|apartment|condo|car)|"
    r"adopted (?:a|our|my)\b[^,.;!?]*|lost my (?:dad|mom|father|mother|grandma|grandpa|"
    r"grandmother|grandfather|husband|wife)|passed (?:my|the) (?:exam|bar|driving test|boards)|"
    r"started (?:a|my|our) (?:own )?(?:new )?(?:job|business|company|studio|shop|store)|"
    r"had (?:surgery|an operation|a (?:baby|miscarriage|stroke|heart attack))|"
    r"had (?:a|an|my) (?:kidney|liver|heart|lung|bone marrow|cornea|hip|knee) "
    r"(?:transplant|replacement)|"
    r"broke my (?:arm|leg|wrist|ankle|foot|hand)|"
    r"(?:was|got) (?:diagnosed|hospitali[sz]ed|admitted)|was in (?:a|an) (?:car )?accident|"
    r"ran (?:a|my first) (?:\w+ )?marathon|finished my (?:degree|thesis|phd|dissertation)|"
    r"moved (?:in together|in with (?:my )?\w+)|opened (?:a|my|our) [^,.;!?]+)(?![\w-])",
    _I,
)


def _life(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    match = _LIFE.search(text)
    if match is None:
        return []
    event = _clean(match["ev"])
    return [Frame("life", event, _key(event, 3))]


_VOLUNTEER_AT: Final = re.compile(
    rf"\bI(?:'m| am|'ve been| have been|'ve| have)?\s+{_ADVERBS}"
    r"(?P<v>(?:stopped|quit|gave up|given up|no longer)\s+)?"
    r"(?:(?:just\s+)?(?:started|began|begun)\s+)?"
    r"(?:volunteer|volunteering)\s+(?:(?:once a \w+|every \w+|on \w+days|twice a \w+)\s+)?"
    r"(?:as\s+(?:an?\s+)?[\w-]+(?:\s+[\w-]+)?\s+)?"  # "as a docent at the museum"
    r"(?:at|with|for|in)\s+(?P<x>(?:a|an|the|my|our|this|that)?\s*[^,.;!?]{3,60})|"
    r"\b(?:the|a|an)\s+(?P<y>(?:(?!\b(?:at|in|on|of|to|for|with|from)\b)[\w' -]){3,40}?)\s+"
    r"(?:that\s+)?I\s+(?:still\s+|now\s+)?"
    r"volunteer\s+(?:at|with|for)\b",
    _I,
)
#: where what is volunteered at ends: its time, its reason, another clause
_VOLUNTEER_END: Final = re.compile(
    r"\s+(?:on|every|each|since|for|because|and|but|so|which|who|where|when|during|after|"
    r"before|last|this|next|yesterday|today|once|twice|once a|a few|about|around|near|"
    r"to|as)\b(?!\s+(?!(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)days?\b)(?-i:[A-Z])).*$",
    _I,
)


def _volunteering(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    """Where the speaker gives their time ("I'm still volunteering at the homeless shelter",
    "the homeless shelter I volunteer at", "I volunteer with Meals on Wheels"): a lasting
    role of their life, not an errand; what was volunteered at once ("I volunteered at an
    event yesterday") is an event, read elsewhere."""
    match = _VOLUNTEER_AT.search(text)
    if match is None:
        return []
    where = match["x"] or match["y"]
    where = _clean(_VOLUNTEER_END.sub("", where.strip()))
    if not where or (lexicon.common(where.split()[-1]) and len(where.split()) == 1):
        return []
    return [Frame("volunteer", where, _key(where, 3), negated=bool(match["v"]))]


#: a child of the speaker's born, by name: "Nora was born July 4th" (the pregnancy it ends is
#: closed by :mod:`memstrata.curate.supersede`, whoever's it was)
_BORN: Final = re.compile(r"(?:^|[.!?]\s+)(?P<n>(?-i:[A-Z][a-z]+))\s+was\s+born\b")


def _birth(text: str, earlier: Sequence[Frame], context: str = "") -> list[Frame]:
    """A child born and named, said without "my son" or "my daughter": the speaker's child."""
    born = _BORN.search(text)
    if born is None or (name := _name(born["n"], text)) is None:
        return []
    return [Frame("child", name, name)]


_READERS: Final = (
    _name_age,
    _volunteering,
    _work,
    _school,
    _home,
    _people,
    _languages,
    _pets,
    _health,
    _drinks,
    _likes,
    _routines,
    _hobbies,
    _plans,
    _trips,
    _goals,
    _birth,
    _life,
)
