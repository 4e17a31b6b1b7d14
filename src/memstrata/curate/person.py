"""Rewriting a first-person sentence into the third person, keeping the grammar.

Only person and agreement change; no word is added that the speaker did not say. The rule:

- the subject "I" becomes the speaker's name, and the verb that follows agrees with it
  (love -> loves, have -> has, am -> is, do -> does, go -> goes, try -> tries; past tenses,
  modals and "was" stay);
- "me" becomes the name ("Books guide Caroline and help Caroline grow": "them" could be read
  as the books); "my", "mine" and "myself" become the name's possessive and the name until the
  name has been said once in the sentence, then the singular "their", "theirs", "themselves"
  ("Melanie loves camping trips with their family");
- "we", "us", "our" become "they", "them", "their" only when the sentence has named the group
  first ("Max and I had a blast on our trip" -> "Max and John had a blast on their trip");
- in Chinese, 我 becomes the name (我的 -> 名字的; with no name, 用户), but not inside a word
  that holds it (自我, 忘我); 我们 is not first person singular and is never rewritten here (the
  extractor resolves it first, :mod:`memstrata.curate.referents`, or drops it).
"""

from __future__ import annotations

import re
from typing import Final

from memstrata.curate.discourse import speaker_group

_CONTRACTIONS: Final = (
    (re.compile(r"\bI'm\b"), "I am"),
    (re.compile(r"\bI've\b"), "I have"),
    (re.compile(r"\bI'll\b"), "I will"),
    (re.compile(r"\bI'd(?=\s+(?:\w+ly\s+)?(?:been|had|got|gone|done|seen|\w+ed)\b)"), "I had"),
    (re.compile(r"\bI'd\b"), "I would"),
)
_ADVERBS: Final = frozenset(
    "really just also still usually often always never sometimes actually totally "  # noqa: SIM905
    "absolutely truly definitely finally recently already even only mostly generally rarely "
    "seldom currently now sort kind of".split()
)
_UNCHANGED: Final = frozenset(
    "can could will would shall should may might must was wasn't can't couldn't won't "  # noqa: SIM905
    "wouldn't shouldn't mustn't used ought had hadn't did didn't got went made took saw met "
    "ran began bought found gave won lost wrote built left came felt became brought taught "
    "sold spent sang drew flew drove swam grew heard kept knew paid sent sat stood told "
    "thought understood wore ate fell forgot held hurt led let meant rode rose said set "
    "shot slept spoke stuck swore threw woke fought caught sought hung dug lit "
    "struck swung bit hid spun won chose froze spoke stole wove broke drank sank shook "
    "forgave".split()
)
_IRREGULAR: Final = {
    "am": "is",
    "are": "is",
    "were": "was",
    "weren't": "wasn't",
    "have": "has",
    "haven't": "hasn't",
    "do": "does",
    "don't": "doesn't",
    "go": "goes",
    "aren't": "isn't",
}
DEFAULT_SUBJECT: Final = "The user"  # who "I" is when the speaker has no name; 用户 in Chinese
_INVERTED: Final = re.compile(
    r"\b(?:can|could|will|would|shall|should|may|might|must|do|does|did|am|have|has|had)\s+$",
    re.IGNORECASE,
)
_WORD: Final = re.compile(r"[A-Za-z']+")
_SUBJECT_I: Final = re.compile(r"\bI\b")
_AND_BEFORE: Final = re.compile(r"(?:\b[A-Z][a-z]+|\b[Mm]y\s+[\w-]+)\s+and\s+$")
#: a word in lower case before "and I", a name as a chat writes it ("marcus and I are"):
#: plural only when the verb after says so
_LOWER_AND_BEFORE: Final = re.compile(r"\b[a-z]{3,}\s+and\s+$")
_PLURAL_VERB: Final = re.compile(r"\s*(?:are|were|'re|have|'ve|both)\b")
_SINGULAR_VERB: Final = re.compile(r"\s*(?:am|'m|was)\b")
_AND_AFTER: Final = re.compile(r"\s*and\s", re.IGNORECASE)


# Verbs whose past is their base form: read, put... agree only when nothing marks the past.
_SAME_IN_PAST: Final = frozenset(
    "read put set cut let hit hurt quit spread cost shut bet split upset".split()  # noqa: SIM905
)
_PAST_MARKER: Final = re.compile(
    r"\b(?:yesterday|ago|last|recently|once|already|went|got|made|took|saw|was|were|had|did|"
    r"came|told|said|thought|felt)\b",
    re.IGNORECASE,
)


def _past_in(text: str) -> bool:
    """Whether ``text`` speaks of the past: a time word or a verb in the past."""
    words = re.findall(r"[a-z]+", text.lower())
    return bool(_PAST_MARKER.search(text)) or any(len(w) > 4 and _regular_past(w) for w in words)


def _regular_past(lower: str) -> bool:
    """-ed is a past ending, except in need, feed, succeed... and shed, wed, embed."""
    return lower.endswith("ed") and not lower.endswith("eed") and lower not in {"shed", "wed"}


def agree(verb: str) -> str:
    """The third person singular present of ``verb`` (unchanged when it is not a base form)."""
    lower = verb.lower()
    if lower in _IRREGULAR:
        out = _IRREGULAR[lower]
    elif lower in _UNCHANGED or lower.endswith("n't") or _regular_past(lower):
        return verb
    elif re.search(r"[^aeiou]y$", lower):
        out = lower[:-1] + "ies"
    elif lower.endswith(("s", "sh", "ch", "x", "z", "o")):
        out = lower + "es"
    else:
        out = lower + "s"
    return out[0].upper() + out[1:] if verb[0].isupper() else out


#: words that can follow a subject "I" and are no verb to agree
_NOT_VERBS: Final = frozenset({"and", "or", "but", "nor"})


def _agree_after(rest: str) -> str:
    """``rest`` (what follows a subject) with its first verb, past any adverbs, agreeing."""
    pos = 0
    while match := _WORD.match(rest, pos):
        word = match.group()
        if word.lower() in _ADVERBS:
            pos = match.end()
            while pos < len(rest) and rest[pos] in " ,":
                pos += 1
            continue
        if word.lower() in _SAME_IN_PAST and _past_in(rest):
            return rest
        if word.lower() in _NOT_VERBS:
            return rest  # "I and my kids don't go": the subject goes on, no verb yet
        agreed = agree(word)
        after = rest[match.end() :]
        if agreed != word and not (
            word.lower() in _AUXILIARIES
            or (word.lower() in ("have", "am") and re.match(r"\s+\w+(?:ed|en|ing)\b", after))
        ):  # "I have finished and", "I am going and": the verb after goes with its helper
            after = _agree_coordinated(after)
        return rest[: match.start()] + agreed + after
    return rest


#: verbs that take another verb after them ("I can swim and run"): what follows "and" goes
#: with that verb, not with the subject
_AUXILIARIES: Final = frozenset(
    {
        "can",
        "could",
        "will",
        "would",
        "shall",
        "should",
        "may",
        "might",
        "must",
        "do",
        "did",
    }
)
#: the plain verbs a person goes on with after "and", one subject two verbs ("I have a kidney
#: transplant and take tacrolimus", "I'm anaemic and take iron"): closed, as a noun after
#: "and" must stay a noun ("I make coffee and tea")
_COORDINATED: Final = re.compile(
    r"^(?P<head>[^.;!?]*?\s(?:,\s*)?and\s+(?:also\s+|still\s+)?)"
    r"(?P<verb>take|use|need|carry|wear|keep|go|live|work|love|like|hate|want|try|eat|drink|"
    r"run|see|get|do|have|walk|swim|cook|teach|play|avoid|watch|make|feel|volunteer|study|"
    r"write|read|sing|drive|train|visit)\b"
)


def _agree_coordinated(rest: str) -> str:
    """``rest`` with a second verb of the same subject, joined by "and", agreeing too: never
    past a new subject or clause ("and you", "and Tom takes", "but reading helps me escape
    and feel free") or after "to" ("to read and write", "gonna stay and make")."""
    match = _COORDINATED.match(rest)
    if match is None:
        return rest
    if re.search(
        r"\b(?:I|me|you|he|she|we|they|it|to|gonna|wanna|gotta|but|because|so|when|while|if|"
        r"that|which|who|helps?|makes?|lets?)\b|,.*\w.*,?\s*and\s",
        match["head"],
        re.IGNORECASE,
    ):
        return rest  # another subject, clause or verb the "and" may go with
    if re.search(r"\b(?:the|a|an|my|our|his|her|their)\s+[\w-]+\s+and\s+$", match["head"]):
        return rest  # "the self-acceptance and love theme": two nouns, no second verb
    return match["head"] + agree(match["verb"]) + rest[match.end() :]


#: "… at Klook and ", "… the gym and ": a clause's object before "and", not a subject
_OBJECT_AND: Final = re.compile(
    r"\b(?:at|in|on|for|with|to|from|by|of|the|a|an|my|our|every|each)\s+[\w'-]+(?:\s+[\w'-]+)?"
    r",?\s+and\s*$",
    re.IGNORECASE,
)


#: how far before a subject "I" the words that decide its verb are read (characters)
_LOOK_BACK: Final = 160


def _agree_each_subject(text: str) -> str:
    """``text`` with the verb after every subject "I" agreeing with a third person."""
    pos = 0
    while match := _SUBJECT_I.search(text, pos):
        pos = match.end()
        # what stands right before it (a window: the words that decide are the last few, and
        # a run-on sentence of thousands of "I"s is read in linear time)
        before = text[max(0, match.start() - _LOOK_BACK) : match.start()]
        if _INVERTED.search(before):
            continue  # "can I say", "do I": I follows its verb, nothing to agree
        tail = text[match.end() :]
        # "Mel and I love" is a plural subject; "I work at Klook and I volunteer" a new
        # clause of the same "I" (what stands before "and" is the object of a preposition)
        again = _OBJECT_AND.search(before) is not None and _SUBJECT_I.search(before) is not None
        plural = not again and (
            (_AND_BEFORE.search(before) and not _SINGULAR_VERB.match(tail))
            or (_LOWER_AND_BEFORE.search(before) and _PLURAL_VERB.match(tail))
        )
        if plural or _AND_AFTER.match(tail):
            continue  # "Mel and I love", "I and my kids love": a plural subject
        space = len(tail) - len(tail.lstrip(" "))
        text = text[: match.end()] + tail[:space] + _agree_after(tail[space:])
    return text


# 我 on its own, not inside 我们 or a word that holds it (自我, 忘我, 唯我).
_FIRST_PERSON_ZH: Final = re.compile(r"(?<![自忘唯])我(?!们)")

_WE_TO_THEY: Final = {
    "we": "they",
    "us": "them",
    "our": "their",
    "ours": "theirs",
    "ourselves": "themselves",
}


def _plural_third(match: re.Match[str]) -> str:
    word = match.group()
    out = _WE_TO_THEY[word.lower()]
    return out.capitalize() if word[0].isupper() else out


def _in_place(name: str, start: int) -> str:
    """``name`` as written at ``start``: "The user" is "the user" inside a sentence."""
    return "the" + name[3:] if start > 0 and name.startswith("The ") else name


#: words quoted from someone ("上面写 'I teach chemistry, what's your superpower'", 'she said
#: "I'm done"'): theirs, said as they said them
_QUOTED: Final = re.compile(
    r"(?:(?<=[\s:：，,写寫说說])|^)(?:'[^'\n]{6,200}'|\"[^\"\n]{6,200}\"|“[^”\n]{6,200}”|"
    r"‘[^’\n]{6,200}’|「[^」\n]{2,200}」|"
    # a quotation the clause was cut inside: from its opening after a word of saying to the end
    r"(?<=[写寫说說:：] )['\"“‘][^'\"”’\n]{2,200}$|(?<=[写寫说說:：])['\"“‘][^'\"”’\n]{2,200}$)"
)


def third_person(sentence: str, name: str) -> str:
    """``sentence`` with the speaker's first-person words in the third person, by ``name``;
    words quoted from someone stay as they were said."""
    quotes: list[str] = []

    def keep(match: re.Match[str]) -> str:
        quotes.append(match[0])
        return f"\ue000{len(quotes) - 1}\ue001"

    held = _QUOTED.sub(keep, sentence)
    if not quotes:
        return _third_person(sentence, name)
    told = _third_person(held, name)
    return re.sub(r"\ue000(\d+)\ue001", lambda m: quotes[int(m[1])], told)


def _third_person(sentence: str, name: str) -> str:
    out = sentence.strip()
    for pattern, expanded in _CONTRACTIONS:
        out = pattern.sub(expanded, out)
    out = _agree_each_subject(out)
    named = False

    def replace(match: re.Match[str]) -> str:
        nonlocal named
        word = match.group().lower()
        was_named, named = named, True
        name = _in_place(subject, match.start())
        if word in ("i", "me"):
            return name  # "them" after a plural noun would point at the noun
        if word == "myself":
            return "themselves" if was_named else name
        if word == "mine":
            return "theirs" if was_named else f"{name}'s"
        return "their" if was_named else f"{name}'s"

    subject = name
    group = speaker_group(out)
    text = re.sub(r"\b(?:I|[Mm]y|[Mm]e|[Mm]ine|[Mm]yself)\b(?!-)", replace, out)
    if group:  # "Max and I ... our trip": "we" are named, so they are "they"
        text = re.sub(r"\b(?:[Ww]e|[Uu]s|[Oo]ur|[Oo]urs|[Oo]urselves)\b", _plural_third, text)
    text = _FIRST_PERSON_ZH.sub("用户" if name == DEFAULT_SUBJECT else name, text)
    return text[0].upper() + text[1:] if text else text
