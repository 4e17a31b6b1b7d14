"""The health of the people a user looks after, read as the user's own is.

A parent, a carer or a partner says what the people in their care need as often as what
they need themselves: "my daughter Duoduo is allergic to eggs", "Ron takes co-careldopa at
7am", "老周有慢阻肺", "女儿对鸡蛋过敏". Those are safety facts an agent must never lose, and
they are not the speaker's: a frame read here carries ``who`` (the person, by name when the
conversation gave one, else by relation), its slot names them (``allergy:duoduo/eggs``), so
that "I'm only allergic to shrimp" never replaces a child's egg allergy, and its statement
says whose need it is ("The user's daughter Duoduo is allergic to eggs").

The clause is read by the same readers as the speaker's own: its subject, the person, is put
as "I" (and its verb agreed: "is" -> "am", "has" -> "have"), then only the health kinds the
readers find are kept. A person is recognised by a relation ("my husband", "我女儿") or by a
name the conversation has given a person of the user's life before (``people``: name ->
how the user called them, "Ron" -> "husband Ron").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Final

from memstrata.curate import lexicon
from memstrata.curate import patterns as re
from memstrata.curate.frames import PEOPLE, Frame
from memstrata.util.scripts import HAN

#: the kinds read for a person in the user's care
CARED: Final = frozenset(
    {"allergy", "condition", "medication", "avoids", "accessibility", "diet", "restriction"}
)

_REL_EN: Final = "|".join(
    sorted((re.escape(r) for r in lexicon.RELATIONS_EN), key=len, reverse=True)
)
_REL_ZH: Final = "|".join(
    sorted((re.escape(r) for r in lexicon.RELATIONS_ZH), key=len, reverse=True)
)
#: the verbs after the person, and what they are after "I"
_VERB_EN: Final = {
    # what was found out of them: "Sam found out he's allergic to penicillin"
    "found out he's": "'m",
    "found out she's": "'m",
    "found out he is": "am",
    "found out she is": "am",
    "found out he has": "have",
    "found out she has": "have",
    "is": "am",
    "'s got": "'ve got",
    "has got": "have got",
    "'s": "'m",
    "has": "have",
    "takes": "take",
    "uses": "use",
    "needs": "need",
    "gets": "get",
    "carries": "carry",
    "can't": "can't",
    "cannot": "cannot",
    "doesn't": "don't",
    "does not": "do not",
    "was": "was",
    "had": "had",
    "started": "started",
    "stopped": "stopped",
    "switched": "switched",
}
#: kin called by what they are, as a name ("Mum has dementia", "Dad's on warfarin")
_KIN_AS_NAME: Final = r"(?-i:Mum|Mom|Mam|Dad|Nan|Nana|Gran|Granny|Grandma|Grandpa|Grandad)"
#: the same at the very start of a chat's sentence, however it is written ("mam is on warfarin")
KIN_AS_NAMES: Final = "mum|mom|mam|dad|nan|nana|gran|granny|grandma|grandpa|grandad"
_KIN_OPENS: Final = rf"(?i:{KIN_AS_NAMES})"
#: a relation at the very start of a chat's sentence, its "my" left out ("Husband's on
#: warfarin", "Hubby has a shellfish allergy"); said so only there, as the sentence's subject
_KIN_BARE: Final = r"(?-i:Husband|Hubby|Wife|Son|Daughter|Partner|Boyfriend|Girlfriend)"
_VERBS_EN: Final = "|".join(sorted((re.escape(v) for v in _VERB_EN), key=len, reverse=True))
#: a character of a Chinese name (no word of a health clause: 对, 有, 在, 吃...)
_ZH_NAME: Final = rf"(?:(?![对有在吃用得患确查每一不过也要和跟的是])[{HAN}])"
#: what a Chinese health clause says right after its subject
#: the body a Chinese health clause may open with after its subject ("我老伴血压高")
_BODY_ZH: Final = r"血压|血糖|血脂|心脏|胃|腰|膝盖"
_ZH_VERBS: Final = (
    rf"对|有|得了|患有|确诊|查出|在吃|在用|在打|要吃|每天|一直|吃|用|打|坐|戴|需要|不能|过敏|也|怀孕|"
    rf"现在(?:出门|在家)?得?|出门|在家|{_BODY_ZH}|" + lexicon.chinese_words(lexicon.CONDITIONS)
    # a condition named right after the person ("我妈高血压好多年了")
)
#: words that stand where a name may after a relation, and are none
_NOT_NAMES_ZH: Final = frozenset(
    {
        "体检", "检查", "复查", "最近", "今天", "昨天", "前天", "现在", "一直", "平时", "每天",
        "去年", "今年", "上周", "刚刚", "已经", "还是", "自己", "本人", "从小", "小时", "以前",
        "之前", "後来", "后来", "年轻", "晚上", "早上", "一般", "经常", "总是", "好像",
    }
)  # fmt: skip
# "朵朵鸡蛋过敏": what one is allergic to, said before 过敏 (no 对: "阿哲对猫过敏" names 阿哲)
_ZH_NEXT: Final = (
    rf"(?={_ZH_VERBS}|(?:(?!对)[^，。；！？,.;!?\s]){{1,8}}?"
    r"(?:过敏|没事|没问题|没得事|可以吃|能吃))"
)


def people_of(frames: Sequence[Frame]) -> dict[str, str]:
    """The names the frames give people of a life, each with how the user called them
    ("husband Ron" -> {"Ron": "husband Ron"}; "女儿朵朵" -> {"朵朵": "女儿朵朵"})."""
    out: dict[str, str] = {}
    for frame in frames:
        if frame.kind not in PEOPLE or frame.negated:
            continue
        value = frame.value
        name = re.sub(rf"^(?:(?:my|our)\s+)?(?:{_REL_EN})\s+", "", value, flags=re.IGNORECASE)
        if name == value:
            name = re.sub(rf"^(?:{_REL_ZH})", "", value)
        name = name.strip(" ,，")
        if (
            name
            and name != value
            and (
                _is_name_en(name)
                or re.fullmatch(rf"[{HAN}]{{2,3}}", name)
                # a chat's name in lower case ("my boyfriend marcus"), the frame read it as one
                or (re.fullmatch(r"[a-z][a-z'-]{2,}", name) and not lexicon.common(name))
            )
        ):
            out[name] = value
    return out


def _is_name_en(text: str) -> bool:
    return bool(re.fullmatch(r"(?-i:[A-Z][a-z]+)(?: (?-i:[A-Z][a-z]+))?", text))


#: the relations that are a man and a woman, for "he" and "she"
_HE: Final = frozenset(
    "husband boyfriend son father dad brother grandfather grandpa grandad grandson uncle nephew "  # noqa: SIM905
    "老公 丈夫 先生 男朋友 儿子 爸爸 爸 父亲 哥哥 弟弟 爷爷 外公 孙子 外孙 老伴 爱人".split()
)
_SHE: Final = frozenset(
    "wife girlfriend daughter mother mom mum mam sister grandmother grandma granddaughter "  # noqa: SIM905
    "nan nana gran granny aunt niece "
    "老婆 妻子 太太 媳妇 女朋友 女儿 闺女 妈妈 妈 母亲 姐姐 妹妹 "
    "奶奶 外婆 孙女 外孙女 老伴 爱人".split()
)


def _pronoun_person(pronoun: str, turn: str, people: Mapping[str, str]) -> tuple[str, str] | None:
    """The one person of the user's life a turn names whom "he" or "she" (他, 她) can be:
    by name, or by a relation of that sex ("my husband"); None when it names none or several."""
    sex = _HE if pronoun.casefold() in ("he", "he's", "他") else _SHE
    named = [
        (name, label)
        for name, label in people.items()
        if name in turn and any(word in label for word in sex)
    ]
    if not named:
        for rel in sex:
            pattern = (
                # kin called by what they are need no "my" ("speaking of mam. she's 78")
                rf"\b(?:(?:my|our)\s+|(?={_KIN_OPENS}\b)){re.escape(rel)}\b"
                r"(?:\s+(?P<n>(?-i:[A-Z][a-z]+)))?"
                if rel.isascii()
                else rf"我(?:的|家)?{rel}(?P<n>(?!{_BODY_ZH}){_ZH_NAME}{{2,3}})?"
                rf"(?=[，,。！？\s]|$|{_ZH_VERBS})"
            )
            for said in re.finditer(pattern, turn, re.IGNORECASE):
                name = said["n"]
                label = (f"{rel} {name}" if rel.isascii() else f"{rel}{name}") if name else rel
                named.append((name or rel, label))
    people_named = {label for _, label in named}
    if not people_named:
        # one person named in the turn whose sex no word of theirs says ("cian had the allergy
        # tests done … it's kiwi he's allergic to"): the one "he" or "she" can be
        unsexed = [
            (name, label)
            for name, label in people.items()
            if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", turn, re.IGNORECASE)
            and not any(
                re.search(rf"(?<![\w]){re.escape(w)}(?![\w])", label, re.IGNORECASE)
                for w in (*_HE, *_SHE)
            )
        ]
        if len(unsexed) == 1:
            return unsexed[0]
    if not people_named:
        # no one of that sex named in the turn: the one spoken of last ("I look after my mum
        # Joan." … "She's on donepezil"); the people are kept in the order last spoken of
        latest = [
            (name, label)
            for name, label in people.items()
            if any(
                re.search(rf"(?<![\w]){re.escape(w)}(?![\w])", label, re.IGNORECASE) for w in sex
            )
        ]
        return latest[-1] if latest else None
    return named[0] if len(people_named) == 1 else None


#: a person by name at a clause's start, allergic ("Cian's allergic to kiwi", "Maya is
#: severely allergic to peanuts")
_NAMED_ALLERGIC: Final = re.compile(
    r"^(?:(?:and|also|but|plus|oh and|btw|so)\s+)?(?P<n>(?!(?i:he|she|it|they|everyone|"
    r"everybody|nobody|someone|somebody|who|that|this|there|what|one|mine|yours)\b)"
    r"[A-Za-z][a-z]{2,})"
    r"(?P<v>'s|’s|\s+is)\s+(?=(?:(?:also|still|severely|very|really|badly|super|so|quite|"
    r"mildly|only|actually)\s+)*allergic\b)",
)


def cared_for(
    clause: str, people: Mapping[str, str], turn: str = ""
) -> tuple[str, str, str] | None:
    """The person a clause is about, how to call them, and the clause with its subject put
    as the speaker ("my daughter Duoduo is allergic to eggs" -> ("Duoduo", "daughter Duoduo",
    "I am allergic to eggs")); None when the clause is not about a person of the user's life.
    The bool says whether the clause is Chinese."""
    text = clause.strip()
    names = "|".join(sorted((re.escape(n) for n in people), key=len, reverse=True))
    known = f"|(?P<known>{names})" if names else ""
    if match := re.match(
        rf"^(?:(?:and|also|but|plus|oh and|btw)\s+)?(?:(?:my|our)\s+(?P<rel>{_REL_EN})"
        rf"(?:\s+(?P<n>(?-i:[A-Z][a-z]+)))?{known}|(?P<kin>{_KIN_AS_NAME})|"
        rf"(?<![\s\S])(?:(?P<bare>{_KIN_BARE})|(?P<opens>{_KIN_OPENS})))"
        rf"(?:\s*\([^)]{{0,40}}\))?,?(?:\s+|(?=['’]s\b))(?:who\s+|who's\s+)?"
        rf"(?:(?:also|still|now|only|always|"
        rf"just|really)\s+)?(?P<verb>{_VERBS_EN})(?![\w'])",
        text,
        re.IGNORECASE,
    ):
        found = match.groupdict()
        name = found["n"] or found.get("known")
        bare = (found["bare"] or found["opens"] or "").casefold() or None
        rel = found["rel"] or (found["kin"].casefold() if found["kin"] else None)
        rel = rel or ("husband" if bare == "hubby" else bare)
        label = people.get(name or "") or (f"{rel} {name}" if rel and name else rel or name or "")
        verb = _VERB_EN[match["verb"].casefold().replace("’", "'")]
        joined = f"I{verb}" if verb.startswith("'") else f"I {verb}"
        return (name or rel or label), label, joined + text[match.end() :]
    if match := _NAMED_ALLERGIC.match(text):
        # "cian's allergic to strawberries btw": a person the user names, allergic, is one
        # whose meals the user may plan, whatever their relation (said or not)
        name = match["n"]
        if (name[:1].isupper() or not re.search(r"[A-Z]", text)) and not lexicon.common(name):
            label = people.get(name) or name
            return name, label, "I'm " + text[match.end("v") :].lstrip()
    if turn and (
        match := re.match(
            rf"^(?:(?:and|also|but|so|now)\s+)?(?P<p>he|she)(?:\s+(?:also|still|now|only|always|"
            rf"just|really))?(?:\s+|(?=['’]s\b))(?P<verb>{_VERBS_EN})(?![\w'])|"
            r"^(?:(?:医生|大夫)(?:让|叫|要|给)?)?(?P<pz>他|她)(?=有|得了|患有|在吃|在用|对|要吃|每天|吃|用)",
            text,
            re.IGNORECASE,
        )
    ):
        # "he has co-careldopa at 7, 11, 3 and 7", in a turn about "my husband Ron"
        meant = _pronoun_person(match["p"] or match["pz"], turn, people)
        if meant is None:
            return None
        person, label = meant
        if match["pz"]:
            return person, label, "我" + text[match.end() :]
        verb = _VERB_EN[match["verb"].casefold()]
        joined = f"I{verb}" if verb.startswith("'") else f"I {verb}"
        return person, label, joined + text[match.end() :]
    if match := re.match(
        rf"^(?:对了|还有|另外|而且|然后|哦|对)?[，,\s]*(?:我(?:的|家)?)?"
        rf"(?:(?P<rel>{_REL_ZH})(?P<n>{_ZH_NAME}{{2,3}}?)??{known}|"
        rf"(?P<nick>[老小阿](?![时心是了点些的毛样候])[{HAN}])){_ZH_NEXT}",
        text,
    ):
        found = match.groupdict()
        rel = found["rel"]
        if found["nick"]:  # "小雨对花生过敏": someone called by name, the conversation's or not
            found["known"] = found["nick"]
        # "我妈体检查出高血压", "我妈最近在吃降压药": a word of time or of a checkup, no name
        name = (found["n"] if found["n"] not in _NOT_NAMES_ZH else None) or found.get("known")
        if rel is None and name is None:
            return None
        end = match.end()
        if rel is not None and name is None:  # "我儿子乐乐花生过敏": the name the user gave
            given = next(
                (n for n in sorted(people, key=len, reverse=True) if n and text.startswith(n, end)),
                None,
            )
            if given is not None:
                name, end = given, end + len(given)
        label = people.get(name or "") or (f"{rel}{name}" if rel and name else rel or name or "")
        return (name or rel or label), label, "我" + text[end:]
    return None


def their_frames(
    clause: str, people: Mapping[str, str], read: Callable[[str], list[Frame]], turn: str = ""
) -> list[Frame]:
    """The health frames a clause sets for a person of the user's life (see the module);
    ``read`` reads a clause said as the speaker's. An English clause is read part by part (a
    long turn says "I look after my husband Ron who has Parkinson's, he has co-careldopa at 7,
    11, 3 and 7")."""
    out: list[Frame] = []
    last: tuple[str, str] | None = None  # the person the part before spoke of
    for part, at in _parts(clause):
        # "he" is someone named before the part: in the turn, or (a run-on turn) just before
        before = turn if len(turn) <= _BEFORE * 3 else clause[max(0, at - _BEFORE) : at + len(part)]
        about = cared_for(_their_doctor(part, people), people, before)
        if about is None and last is not None and (go_on := _GOES_ON.match(part)):
            # "Dennis has type 2 diabetes and takes metformin": the same person goes on
            verb = _VERB_EN[go_on["verb"].casefold()]
            joined = f"I{verb}" if verb.startswith("'") else f"I {verb}"
            about = (*last, joined + part[go_on.end() :])
        if about is None:
            last = None
            continue
        person, label, as_said = about
        last = (person, label)
        key = person.casefold()
        found = [f for f in read(as_said) if f.kind in CARED]
        out += [replace(f, who=label, key=f"{key}/{f.key or ''}") for f in found]
    return out


#: a part that goes on with the verb of the person the part before spoke of
_GOES_ON: Final = re.compile(
    rf"^(?:(?:also|still|now|then)\s+)?(?P<verb>{_VERBS_EN})(?![\w'])", re.IGNORECASE
)


def _their_doctor(part: str, people: Mapping[str, str]) -> str:
    """ "Dennis's doctor changed his metformin to Jardiance" as Dennis would say it of
    himself ("Dennis switched from metformin to Jardiance"); other parts as they are."""
    names = "|".join(sorted((re.escape(n) for n in people), key=len, reverse=True))
    whose = rf"(?:my|our)\s+(?:{_REL_EN})(?:\s+(?-i:[A-Z][a-z]+))?" + (f"|{names}" if names else "")
    if put := re.match(  # "The GP put her on apixaban": she takes it
        r"^(?:the\s+|her\s+|his\s+)?(?:new\s+)?(?:doctor|gp|consultant|specialist|nurse|hospital|"
        r"neurologist|cardiologist|psychiatrist)\s+(?:has\s+)?(?:also\s+)?(?:put|started)\s+"
        r"(?P<p>her|him)\s+on\s+(?P<x>.+)$",
        part,
        re.IGNORECASE,
    ):
        return f"{'she' if put['p'].casefold() == 'her' else 'he'} takes {put['x']}"
    match = re.match(
        rf"^(?P<who>{whose})'s\s+(?:new\s+)?(?:doctor|gp|consultant|specialist|nurse|"
        r"neurologist|cardiologist|pharmacist)\s+(?:has\s+)?(?:changed|switched|moved)\s+"
        r"(?:him|her)?\s*(?:from\s+|off\s+)?(?:his|her)?\s*(?P<old>[\w-]+)\s+(?:to|onto|for)\s+"
        r"(?P<new>[\w-]+)",
        part,
        re.IGNORECASE,
    )
    if match is None:
        return part
    return f"{match['who']} switched from {match['old']} to {match['new']}"


#: how far before a part of a run-on turn the person "he" or "she" is looked for (characters)
_BEFORE: Final = 400


def _parts(clause: str) -> list[tuple[str, int]]:
    """An English clause cut where another may begin (a comma, "and", "so", "but"), each
    part with where it starts, and each part from a person named in it too ("I look after my
    husband Ron who has Parkinson's" -> "my husband Ron who has Parkinson's"); a Chinese
    clause is read whole."""
    if not re.search(r"[A-Za-z]{2,}", clause):
        return [(clause, 0)]
    out = []
    start = 0
    for cut in [*re.finditer(r",\s*|;\s*|:\s+|\s+(?:and|so|but|because)\s+", clause), None]:
        end = cut.start() if cut is not None else len(clause)
        part = clause[start:end]
        if part:
            out.append((part, start))
            inner = re.search(rf"\b(?:my|our)\s+(?:{_REL_EN})\b", part, re.IGNORECASE)
            if inner and inner.start() > 0:
                out.append((part[inner.start() :], start + inner.start()))
        if cut is not None:
            start = cut.end()
    return out
