"""Profile slots and preferences read from a fact about a known person, in English and Chinese.

A fact, as extraction writes it, speaks about its speaker in the third person ("Melanie is
lucky to have their husband and kids", "卡罗琳住在杭州"). Given that person's name, a fact
fills a slot when it states one of the profile's things: where they live (``residence``),
where they come from (``home_country``), their job (``job``) and employer (``employer``),
their ``partner``, ``children``, ``pets``, ``allergies``, ``languages``, the ``instruments``
they play, their ``age`` and their favourites (``favorite <thing>``). The person is named at
the start of the sentence; "their" stands for them once they have been named (the way
:mod:`memstrata.curate.person` rewrites "my"). Single-valued slots keep one value (the newest
supersedes); the others gather every value stated.

A preference is kept for L1 only when it has an object: "Melanie loves camping" yes,
"Melanie is so happy" or "Melanie loves it" no (:func:`preference_of`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

from memstrata.curate import lexicon
from memstrata.util.scripts import HAN, has_han

#: slots with one value at a time (a newer value supersedes the older)
SINGLE: Final = frozenset(
    {"age", "residence", "home_country", "job", "employer", "career", "business", "partner"}
)
#: the order slots are shown in, most defining first
ORDER: Final = (
    "name",
    "age",
    "residence",
    "home_country",
    "job",
    "employer",
    "career",
    "business",
    "former job",
    "former employer",
    "volunteering",
    "partner",
    "children",
    "pets",
    "allergies",
    "languages",
    "instruments",
)
_LABELS: Final = {"home_country": "home country"}


class _Patterns:
    """``re``'s search, match, finditer and split over patterns compiled once: the patterns
    here are built per person's name, more of them than ``re``'s own cache keeps, and
    compiling them again for every fact was most of an L1 recomputation."""

    @staticmethod
    @functools.lru_cache(maxsize=16_384)
    def compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
        return re.compile(pattern, flags)

    def search(self, pattern: str, text: str, flags: int = 0) -> re.Match[str] | None:
        return self.compiled(pattern, flags).search(text)

    def match(self, pattern: str, text: str, flags: int = 0) -> re.Match[str] | None:
        return self.compiled(pattern, flags).match(text)

    def finditer(self, pattern: str, text: str, flags: int = 0) -> Iterator[re.Match[str]]:
        return self.compiled(pattern, flags).finditer(text)

    def split(self, pattern: str, text: str, maxsplit: int = 0, flags: int = 0) -> list[str]:
        return self.compiled(pattern, flags).split(text, maxsplit)


_rx: Final = _Patterns()

_BREAK: Final = re.compile(
    r"\s+[-–—]\s+|[;!?()（）。；！？，]|\.(?:\s|$)|,\s+(?:it|this|that|they|which|but|so|and|"
    r"'cause|because|as|since|who|when|he|she|the|my|their|its|his|her|we|i|you)\b|\s+(?:because|'cause|cause|but|which|while|since)\s+",
    re.IGNORECASE,
)
_LEAD_ADVERBS: Final = r"(?:(?:now|currently|also|still|really|just|actually|finally)\s+)*"
_TRAILING: Final = re.compile(
    r"\s+(?:yesterday|today|tonight|now|too|as well|again|recently|lately|anymore|"
    r"(?:last|this|next) (?:week|weekend|month|year|night|summer|winter|spring|fall|\w+day))$",
    re.IGNORECASE,
)
_JOBS: Final = (
    r"engineer|developer|programmer|teacher|nurse|doctor|student|designer|manager|artist|"
    r"writer|screenwriter|counselor|counsellor|scientist|lawyer|chef|musician|researcher|"
    r"painter|photographer|banker|accountant|entrepreneur|athlete|player|coach|dancer|"
    r"instructor|consultant|analyst|architect|pilot|firefighter|officer|volunteer|therapist|"
    r"social worker|streamer|gamer|veterinarian|vet|pharmacist|librarian|journalist|editor|"
    r"baker|mechanic|farmer|owner|founder|professor|tutor|trainer"
)
_ZH_JOBS: Final = (
    r"工程师|老师|教师|医生|护士|学生|设计师|经理|程序员|律师|厨师|研究员|会计|记者|编辑|"
    r"作家|画家|摄影师|司机|销售|店主|老板|教练|运动员|舞蹈老师|咨询师|心理咨询师|公务员"
)
_PARTNERS: Final = r"husband|wife|partner|boyfriend|girlfriend|fianc[ée]e?|spouse"
_CHILDREN: Final = r"kids?|children|child|sons?|daughters?"
_PETS: Final = (
    r"dogs?|cats?|pupp(?:y|ies)|pups?|kittens?|pets?|turtles?|hamsters?|rabbits?|bunn(?:y|ies)|"
    r"parrots?|birds?|fish|horses?|snakes?|lizards?"
)
_INSTRUMENTS: Final = (
    r"piano|guitar|acoustic guitar|electric guitar|violin|cello|clarinet|flute|drums|"
    r"saxophone|trumpet|ukulele|bass|harp"
)
_NUMBERS: Final = r"(?:a|an|one|two|three|four|five|\d+)"
_BUSINESSES: Final = (
    r"store|studio|shop|business|company|restaurant|bakery|cafe|café|startup|brand|"
    r"foundation|salon|gym|clinic|agency"
)
_NAME_AFTER: Final = r"(?:,?\s+(?:named\s+|called\s+)?(?P<n>(?-i:[A-Z][a-z]+)))?"


@dataclass(frozen=True, slots=True)
class SlotFill:
    """One slot value a fact states about a person."""

    key: str
    value: str

    @property
    def single(self) -> bool:
        return self.key in SINGLE or self.key.startswith("favorite")


def label(key: str) -> str:
    """A slot key as a person reads it ("home_country" -> "home country")."""
    return _LABELS.get(key, key)


def _clip(value: str, words: int = 6, *, colon: bool = True) -> str:
    """The value up to the first clause break (and colon, unless ``colon`` is False), at most
    ``words`` words."""
    value = _BREAK.split(value.strip(), maxsplit=1)[0]
    if colon:
        value = value.split(":", 1)[0]
    value = value.strip(" \"'“”")
    parts = value.split()
    if len(parts) > words:
        value = " ".join(parts[:words])
    while (trimmed := _TRAILING.sub("", value)) != value:
        value = trimmed
    return value


def _possessive(name: str) -> str:
    return rf"(?:{re.escape(name)}['’]s|their)"


def _english(text: str, name: str) -> list[SlotFill]:
    s = re.escape(name)
    own = _possessive(name)
    out: list[SlotFill] = []
    flags = re.IGNORECASE

    def first(pattern: str, key: str, group: str = "o", ignore_case: bool = True) -> None:
        match = _rx.search(pattern, text, flags if ignore_case else 0)
        if match and match[group]:
            value = _clip(match[group])
            if value:
                out.append(SlotFill(key, value))

    subject = rf"^(?:\w+,?\s+)?{s}\s+{_LEAD_ADVERBS}"
    first(rf"{subject}is (?P<o>\d{{1,3}}) years old", "age")
    first(
        rf"{subject}(?:lives|is living|resides|has settled|settled) in (?P<o>[A-Z][\w .'-]+)",
        "residence",
        ignore_case=False,
    )
    first(rf"{subject}(?:moved|relocated) to (?P<o>[A-Z][\w .'-]+)", "residence", ignore_case=False)
    first(
        rf"{subject}(?:is|comes|came) from (?P<o>[A-Z][\w .'-]+)", "home_country", ignore_case=False
    )
    first(
        rf"{subject}moved (?:here )?from (?P<o>[A-Z][\w .'-]+)", "home_country", ignore_case=False
    )
    first(rf"{own} home (?:country|town)(?:,| is| was)\s+(?P<o>[A-Z][\w .'-]+)", "home_country")
    first(rf"{subject}(?:works|is working|worked) as (?P<o>an? [\w -]+)", "job")
    first(rf"{subject}is (?:an? )?(?P<o>(?:[\w-]+ ){{0,2}}(?:{_JOBS}))\b", "job")
    first(rf"{own} (?:job|work|career) is (?:as )?(?P<o>[\w -]+)", "job")
    first(rf"{subject}(?:works|is working) (?:at|for) (?P<o>[\w&.' -]+)", "employer")
    first(rf"{own} (?P<o>(?:[\w-]+ )?[\w-]+) career\b", "career")
    first(
        rf"{subject}(?:opened|runs|owns|launched|has opened|is starting|started|is opening|"
        rf"is running) (?:an? |their own |their |a new )?"
        rf"(?P<o>(?:[\w-]+ ){{0,3}}?(?:{_BUSINESSES}))\b",
        "business",
    )
    first(rf"{own} own (?P<o>(?:[\w-]+ ){{0,2}}?(?:{_BUSINESSES}))\b", "business")
    first(rf"{s}\s+{_LEAD_ADVERBS}(?:lost|quit|left) {own} job as (?P<o>[\w -]+)", "former job")
    first(rf"{s}\s+no longer works as (?:an? )?(?P<o>[\w -]+)", "former job")
    first(rf"{s}\s+no longer works at (?P<o>[\w&.' -]+)", "former employer")
    first(
        rf"{s}\s+{_LEAD_ADVERBS}(?:lost|quit|left) {own} job at (?P<o>[\w&.' -]+)",
        "former employer",
    )
    match = _rx.search(rf"{own} (?P<o>{_PARTNERS}){_NAME_AFTER}", text, flags)
    if match:
        out.append(SlotFill("partner", _with_name(match)))
    elif match := _rx.search(rf"{subject}.*\bwith the (?P<o>wife|husband)\b", text, flags):
        out.append(SlotFill("partner", match["o"].lower()))
    elif _rx.search(rf"{subject}(?:is|got) married\b", text, flags):
        out.append(SlotFill("partner", "married"))
    for match in _rx.finditer(
        rf"{own} (?P<o>{_CHILDREN})\b(?!['’]s? (?:friend|school)){_NAME_AFTER}", text
    ):
        out.append(SlotFill("children", _with_name(match)))
    first(rf"{subject}has (?P<o>{_NUMBERS} (?:{_CHILDREN}))\b", "children")
    for match in _rx.finditer(rf"{own} (?P<o>{_PETS})\b{_NAME_AFTER}", text):
        out.append(SlotFill("pets", _with_name(match)))
    first(
        rf"{subject}(?:has|got|adopted) (?:this |these )?"
        rf"(?P<o>(?:{_NUMBERS} )?(?:\w+ )?(?:{_PETS}))\b",
        "pets",
    )
    first(rf"\b{s} is allergic to (?P<o>.+)", "allergies")
    first(rf"{subject}(?:speaks|is fluent in) (?P<o>[A-Z][\w ]+)", "languages", ignore_case=False)
    for match in _rx.finditer(
        rf"{subject}(?:plays|is learning|learned|started playing|is playing) (?:the )?"
        rf"(?P<o>{_INSTRUMENTS})\b",
        text,
        flags,
    ):
        out.append(SlotFill("instruments", match["o"].lower()))
    match = _rx.search(
        rf"{own} (?:fav(?:o|ou)rite|top pick|go-to)(?: (?P<k>[\w -]{{1,30}}?))? is (?P<o>.+)",
        text,
        flags,
    )
    if match:
        kind = f"favorite {match['k'].lower()}" if match["k"] else "favorite"
        out.append(SlotFill(kind, _clip(match["o"])))
    else:
        match = _rx.search(
            rf"(?:^|[,.!?]\s*(?:but\s+|and\s+)?|\bbut\s+)(?P<o>[\w\"'“” -]{{2,60}}?)"
            rf"(?:'s| is| are)\s+(?:(?:pretty much|really|definitely|totally|always|still|now|"
            rf"also) )?(?:one of )?{own} (?:fav(?:o|ou)rite|fave|top pick|go-to)s?"
            rf"(?: (?P<k>(?!(?:for|to|when|in|on|at|with|of)\b)[a-z]+))?\b",
            text,
            flags,
        )
        if match and not _rx.match(
            r"(?:(?:and|but|so)\s+)?(?:it|this|that|they|these|those)\b", match["o"], flags
        ):
            kind = f"favorite {match['k'].lower()}" if match["k"] else "favorite"
            value = _clip(match["o"])
            first_word, _, rest = value.partition(" ")
            if rest and rest == rest.lower():  # capitalised only as the sentence's start
                value = f"{first_word.lower()} {rest}"
            out.append(SlotFill(kind, value))
    return out


def _with_name(match: re.Match[str]) -> str:
    word = match["o"].lower()
    name = match.groupdict().get("n")
    return f"{word} {name}" if name else word


def _chinese(text: str, name: str) -> list[SlotFill]:
    s = re.escape(name)
    own = rf"{s}(?:的)?"
    out: list[SlotFill] = []

    def first(pattern: str, key: str, value: str | None = None) -> None:
        match = _rx.search(pattern, text)
        if match:
            found = value or _clip(match["o"])
            if found:
                out.append(SlotFill(key, found))

    first(rf"{s}(?:今年)?(?P<o>\d{{1,3}})岁", "age")
    first(rf"{s}(?:现在|目前)?(?:住在|搬到了?|定居在?)(?P<o>[^，。,；;！!\s]{{1,12}})", "residence")
    first(
        rf"{s}(?:来自|是(?P<p>[^，。的]{{1,6}})人)(?P<o>[^，。,；;！!\s]{{0,12}})", "home_country"
    )
    if out and out[-1].key == "home_country" and not out[-1].value:
        out.pop()
    match = _rx.search(rf"{s}是(?P<p>[^，。的]{{1,6}})人", text)
    if match and not any(f.key == "home_country" for f in out):
        out.append(SlotFill("home_country", match["p"]))
    first(rf"{own}老家在(?P<o>[^，。,；;！!\s]{{1,12}})", "home_country")
    first(rf"{s}是(?:一名|一个|一位)?(?P<o>\S{{0,8}}?(?:{_ZH_JOBS}))", "job")
    first(rf"{own}工作是(?P<o>[^，。,；;！!\s]{{1,12}})", "job")
    first(
        rf"{s}(?:开了|经营着?|开着|创办了)(?:一家|一个|自己的)?"
        rf"(?P<o>[^，。,；;！!\s]{{0,8}}?(?:店|公司|工作室|餐厅|咖啡馆))",
        "business",
    )
    first(rf"{s}(?:现在|目前)?在(?P<o>[^，。,；;！!\s]{{1,16}}?)(?:工作|上班)", "employer")
    first(rf"{own}(?P<o>丈夫|妻子|老公|老婆|男朋友|女朋友|爱人|未婚夫|未婚妻)", "partner")
    if not any(f.key == "partner" for f in out):
        first(rf"{s}(?:已经)?(?:结婚了|已婚)", "partner", "已婚")
    first(rf"{s}有(?P<o>[一二两三四五\d]个(?:孩子|儿子|女儿))", "children")
    for match in _rx.finditer(rf"{own}(?P<o>孩子|儿子|女儿)", text):
        out.append(SlotFill("children", match["o"]))
    first(rf"{s}(?:养了|养着|有)(?P<o>[一二两三四五\d]?(?:只|条)?\S{{0,4}}?(?:猫|狗|宠物))", "pets")
    for match in _rx.finditer(
        rf"{own}(?P<o>猫|狗|宠物)(?:叫(?P<n>[^，。,；;！!\s]{{1,6}}))?", text
    ):
        out.append(SlotFill("pets", f"{match['o']}{match['n']}" if match["n"] else match["o"]))
    first(rf"{s}对(?P<o>[^，。,；;！!\s]{{1,12}})过敏", "allergies")
    first(rf"{s}(?:会说|能说|说|讲)(?P<o>[^，。,；;！!\s]{{1,8}}?(?:语|话|文))", "languages")
    first(
        rf"{s}(?:会|在学|学)?(?:弹|拉|吹|打)(?P<o>钢琴|吉他|小提琴|大提琴|长笛|单簧管|鼓|古筝|二胡)",
        "instruments",
    )
    match = _rx.search(rf"{s}最喜欢的(?P<k>\S{{1,6}}?)是(?P<o>[^，。,；;！!]{{1,20}})", text)
    if match:
        out.append(SlotFill(f"favorite {match['k']}", match["o"].strip()))
    return out


_SUBJECT_EN: Final = re.compile(r"^(?:The user|[A-Z][\w'-]*(?: [A-Z][\w'-]*)?)(?=['’]s\b|\s)")
_SUBJECT_ZH: Final = re.compile(
    rf"^(?:用户|[{HAN}]{{1,4}}?)(?=住|搬|来自|是|在|的|有|养|对|会|能|说|讲|最|喜欢|爱|热爱|"
    r"不|很|非常|特别|今年|\d|叫|现在|目前|已经|也|一直|结婚|弹|拉|吹|讨厌|偏好)"
)


def subject_of(text: str) -> str | None:
    """The person a fact names first ("Alice", "The user", "爱丽丝"), for facts whose speaker
    has no name; None when it starts with no name."""
    match = (_SUBJECT_ZH if has_han(text) else _SUBJECT_EN).match(text.strip())
    return match[0] if match else None


_SUBJECTLESS: Final = re.compile(
    r"^(?:(?P<is>allergic|married|fluent|from)|(?P<verb>[a-z]+s))\b", re.IGNORECASE
)


def with_subject(text: str, name: str) -> str:
    """A fact written without its subject ("Prefers short answers", "Allergic to peanuts", as
    a profile or a model often writes them) with ``name`` as its subject."""
    text = text.strip()
    match = _SUBJECTLESS.match(text)
    if match is None or not text[0].isupper() or text.startswith(name):
        return text
    lead = f"{name} is" if match["is"] else name
    return f"{lead} {text[0].lower()}{text[1:]}"


UNNAMED: Final = "The user"
_NOT_A_VALUE: Final = frozenset(
    "it this that they them these those he she him her one something pets pet".split()  # noqa: SIM905
)


def slots_in(text: str, name: str) -> list[SlotFill]:
    """The slots ``text`` fills for the person called ``name``, each value a clean noun
    phrase (:func:`clean_value`; each value once; a pronoun or the slot's own word, "pets",
    is no value)."""
    text = with_subject(text, name)
    found = _chinese(text, name) if has_han(text) else []
    if _rx.search(r"[A-Za-z]{2,}", text.replace(name, "")):  # English, or both in one fact
        found += _english(text, name)
    cleaned = (clean_value(f, name) for f in found)
    return list(dict.fromkeys(f for f in cleaned if f.value.casefold() not in _NOT_A_VALUE))


#: what a speaker says of a thing, not what the thing is: no part of a slot's value
_EVALUATIVE: Final = frozenset(
    "amazing awesome great cute lovely beautiful wonderful incredible fantastic adorable "  # noqa: SIM905
    "gorgeous sweet nice cool super so really very totally absolutely perfect delicious "
    "yummy brilliant stunning fabulous terrific excellent favorite favourite fave".split()
)
_DETERMINERS: Final = frozenset(
    "the a an this that these those their his her my our your its some".split()  # noqa: SIM905
)
#: a favourite whose kind the fact leaves unsaid, when the value says it (a closed class)
_COLOURS: Final = frozenset(
    "red orange yellow green blue purple violet pink brown black white grey gray gold silver "  # noqa: SIM905
    "turquoise teal navy beige maroon lavender cyan magenta indigo".split()
)
#: words after "favorite" that name no kind of thing ("one of their favorites too")
_NOT_A_KIND: Final = frozenset("one ones too also as well ever now all of".split())  # noqa: SIM905
_ZH_LEAD: Final = re.compile(
    r"^(?:(?:这|那|一)(?:个|只|条|家|本|部|首|位|名|件|种|款|道)|(?:她|他|我|它|他们|她们)的|"
    r"(?:非常|特别|超级?|很|最)?(?:可爱|漂亮|好吃|美味|好看|棒|超棒|很棒|美丽|不错)的)"
)


def clean_value(fill: SlotFill, name: str) -> SlotFill:
    """A slot value as a noun phrase naming the thing: it ends at a clause boundary (the
    person's own name starts a new clause: "a theme from a movie Tim [enjoys]"), without
    leading determiners or possessives (the label already says whose and what) nor the
    speaker's appraisal (evaluative adjectives and intensifiers: "this amazing chocolate
    tart" -> "chocolate tart"); numbers and descriptive words stay ("two dogs", "acoustic
    guitar"). A favourite whose kind is unsaid takes it from a closed-class value (a colour:
    "favorite: Blue" -> "favorite color: blue"); a pro-form or an adverb after "favorite"
    ("one", "too") names no kind."""
    key, value = fill.key, fill.value.strip()
    if has_han(value):
        while (trimmed := _ZH_LEAD.sub("", value)) != value and trimmed:
            value = trimmed
        value = value.removeprefix(f"{name}的") or value
        if key == "favorite" and value.endswith("色") and len(value) <= 3:
            key = "favorite 颜色"
        return SlotFill(key, value)
    value = _rx.split(rf"\s+{re.escape(name)}\b", value, maxsplit=1)[0].strip(" ,")
    words = value.split()
    own = {f"{name.casefold()}'s", f"{name.casefold()}’s"}
    while (
        len(words) > 1
        and not (words[0][0].isupper() and words[1][0].isupper())  # a title: "The Hobbit"
        and (
            words[0].casefold() in _DETERMINERS
            or words[0].casefold() in own
            or words[0].casefold() in _EVALUATIVE
        )
    ):
        words = words[1:]
    value = " ".join(words)
    if key.startswith("favorite "):
        kind = " ".join(w for w in key.split()[1:] if w not in _NOT_A_KIND)
        key = f"favorite {kind}" if kind else "favorite"
    if key == "favorite" and value.casefold() in _COLOURS:
        key, value = "favorite color", value.casefold()
    return SlotFill(key, value)


def _stem(word: str) -> str:
    word = word.casefold()
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("es") and word[-3:-2] in ("s", "x", "z", "h") and len(word) > 4:
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _diminutive(short: str, long: str) -> bool:
    """``long`` is ``short``'s diminutive ("pup" / "puppy", "dog" / "doggy")."""
    return len(short) >= 3 and long in (f"{short}y", f"{short}ie", f"{short}{short[-1]}y")


def same_thing(a: str, b: str) -> bool:
    """Whether two values of one slot name the same thing: the same words (plurals aside),
    one more specific than the other with the same head ("guitar" / "acoustic guitar"), or
    a head and its diminutive ("pup" / "puppy"); in Chinese, one containing the other."""
    if has_han(a) or has_han(b):
        return bool(a) and bool(b) and (a in b or b in a)
    left = [_stem(w) for w in re.findall(r"[\w'-]+", a)]
    right = [_stem(w) for w in re.findall(r"[\w'-]+", b)]
    if not left or not right:
        return False
    if left == right:
        return True
    if len(left) == 1 and len(right) == 1:
        return _diminutive(left[0], right[0]) or _diminutive(right[0], left[0])
    short, long = sorted((left, right), key=len)
    if len(short) == 1 and long[0] == short[0] and _is_relation(a if left is short else b):
        return True  # "son" and "son Leo": the relation said, then with the name
    return left[-1] == right[-1] and (set(left) <= set(right) or set(right) <= set(left))


def _is_relation(word: str) -> bool:
    """Whether ``word`` is only the name of a relation ("son", "wife", "sister")."""
    return word.strip().casefold() in lexicon.RELATIONS_EN


@functools.lru_cache(maxsize=65_536)  # wake_up asks again for the same facts at every call
def is_feeling(text: str) -> bool:
    """Whether a preference fact states a feeling or a reaction rather than a preference
    with an object ("The colors make Melanie feel calm", "Melanie is so happy"): it names no
    one first, or what it says of them has no object (:func:`preference_of`)."""
    who = subject_of(text)
    if who is not None and preference_of(text, who) is not None:
        return False
    if preference_of(text, UNNAMED) is not None:  # written without its subject: "Prefers tea"
        return False
    if _PREFER_EN.search(text) or _PREFER_ZH.search(text):
        return True  # a liking with no object it names: a reaction ("Caroline loves it!")
    # said without a verb of liking ("不喝咖啡，只喝绿茶", "周末一般去西湖边跑步"): a preference
    # unless its words are those of a feeling
    return bool(_FEELING_EN.search(text) or _FEELING_ZH.search(text))


#: the words of a feeling or a reaction, in a fact without a verb of liking
_FEELING_EN: Final = re.compile(
    r"\b(?:feel|feels|felt|feeling|happy|glad|thankful|grateful|proud|excited|sad|upset|"
    r"calm|relieved|nervous|anxious|thrilled|touched|inspired|stoked|blessed|amazed|"
    r"overwhelmed)\b",
    re.IGNORECASE,
)
_FEELING_ZH: Final = re.compile(
    r"开心|高兴|难过|伤心|感动|感谢|感激|激动|幸福|骄傲|自豪|兴奋|紧张|焦虑|欣慰|感觉|心情"
)


_PREFER_EN: Final = re.compile(
    r"(?P<v>loves|likes|enjoys|prefers|adores|hates|dislikes|can't stand|doesn't like|"
    r"does not like|is (?:really |so |very )?(?:into|a (?:big |huge )?fan of|passionate about|"
    r"obsessed with|keen on))\s+(?P<o>.+)",
    re.IGNORECASE,
)
_NO_OBJECT: Final = re.compile(
    r"^(?:it|this|that|them|these|those|you|him|her|everything|anything|something|"
    r"the (?:idea|way|feeling|thought)|to (?:hear|see|know))\b",
    re.IGNORECASE,
)
#: an object that points back at something the fact does not say ("these little ones")
_UNRESOLVED: Final = re.compile(r"\b(?:this|these|those|it|them)\b", re.IGNORECASE)
_PREFER_ZH: Final = re.compile(
    r"(?:很|非常|特别|最|更|也|一直)?(?P<v>不喜欢|喜欢|热爱|爱|偏好|讨厌|受不了)(?P<o>[^，。,；;！!？?]{1,24})"
)
_NO_OBJECT_ZH: Final = re.compile(r"^(?:这|那|它|他们|她们|你|上|过|着)")


def preference_of(text: str, name: str) -> str | None:
    """``text`` as a preference with an object, in its shortest form ("Melanie loves camping
    trips with their fam"), or None when it states a feeling, a reaction or no object."""
    text = with_subject(text, name)
    if has_han(text) and not _rx.match(rf"{re.escape(name)}\s+[A-Za-z]", text):
        match = _rx.match(rf"^{re.escape(name)}", text)
        found = _PREFER_ZH.search(text, match.end()) if match else None
        if found is None or found.start() - match.end() > 3 or _NO_OBJECT_ZH.match(found["o"]):  # type: ignore[union-attr]
            return None
        return f"{name}{text[match.end() : found.start()]}{found['v']}{found['o'].strip()}"  # type: ignore[union-attr]
    match = _rx.match(
        rf"^(?:(?:now|also|and|so),?\s+)?{re.escape(name)}\s+{_LEAD_ADVERBS}", text, re.IGNORECASE
    )
    if match is None:
        return None
    found = _PREFER_EN.match(text, match.end())
    if found is None:
        return None
    obj = _clip(found["o"], words=12, colon=False)
    if not obj or _NO_OBJECT.match(obj) or _UNRESOLVED.search(obj) or len(obj) < 3:
        return None
    return f"{name} {found['v']} {obj}"
