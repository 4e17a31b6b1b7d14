"""A plain statement of one state, for a sentence that states several at once.

"I'm Lin Wei, a product manager at Tencent in Shenzhen" states a name, a job and an employer;
each becomes its own fact, said plainly in the third person in the sentence's language
("The user's name is Lin Wei", "The user is a product manager", "The user works at Tencent in
Shenzhen"; "用户叫李明", "用户在阿里巴巴工作"). The value is the person's own phrase
(:class:`memstrata.curate.frames.Frame`); nothing is added that they did not say.
"""

from __future__ import annotations

from typing import Final

from memstrata.curate import lexicon
from memstrata.curate import patterns as re
from memstrata.curate.cared_for import KIN_AS_NAMES
from memstrata.curate.frames import Frame
from memstrata.curate.person import DEFAULT_SUBJECT, agree, third_person

_EN: Final[dict[tuple[str, str], str]] = {
    ("name", ""): "{s}'s name is {v}",
    ("age", ""): "{s} is {v} years old",
    ("birthday", ""): "{s}'s birthday is {v}",
    ("job", ""): "{s} is {a}{v}",
    ("job", "not"): "{s} no longer works as {a}{v}",
    ("employer", ""): "{s} works at {v}",
    ("employer", "not"): "{s} no longer works at {v}",
    ("employer", "none"): "{s} is {v}",
    ("school", ""): "{s} studies at {v}",
    ("major", ""): "{s} studies {v}",
    ("residence", ""): "{s} lives in {v}",
    ("hometown", ""): "{s} is from {v}",
    ("partner", ""): "{s}'s partner: {v}",
    ("partner", "not"): "{s}: {v}",
    ("child", ""): "{s}'s child: {v}",
    ("family", ""): "{s}'s family: {v}",
    ("friend", ""): "{s}'s friend: {v}",
    ("pet", ""): "{s}'s pet: {v}",
    ("pet", "not"): "{s}'s pet {v} is gone",
    ("language", ""): "{s} speaks {v}",
    ("volunteer", ""): "{s} volunteers at {v}",
    ("volunteer", "not"): "{s} no longer volunteers at {v}",
    ("allergy", ""): "{s} is allergic to {v}",
    ("allergy", "only"): "{s} is only allergic to {v}",
    ("allergy", "not"): "{s} is not allergic to {v}",
    ("condition", ""): "{s} has {v}",
    ("condition", "not"): "{s} no longer has {v}",
    ("medication", ""): "{s} takes {v}",
    ("medication", "not"): "{s} no longer takes {v}",
    ("diet", ""): "{s} is {v}",
    ("diet", "not"): "{s} is no longer {v}",
    ("avoids", ""): "{s} does not eat {v}",
    ("avoids", "not"): "{s} eats {v} again",
    ("accessibility", ""): "{s} has an accessibility need: {v}",
    ("restriction", ""): "{s}'s restriction: {v}",
    ("restriction", "not"): "{s} may {v} again",
    ("drink", ""): "{s} drinks {v}",
    ("drink", "only"): "{s} only drinks {v}",
    ("drink", "not"): "{s} no longer drinks {v}",
    ("like", ""): "{s} {v}",
    ("like", "not"): "{s} no longer {v}",
    ("favorite", ""): "{s}'s favorite {v}",
    ("routine", ""): "{s} {v}",
    ("routine", "not"): "{s} no longer {v}",
    ("routine", "given up"): "{s} has given up {v}",
    ("hobby", ""): "{s} is learning {v}",
    ("hobby", "not"): "{s} has given up {v}",
    ("plan", ""): "{s} plans: {v}",
    ("plan", "not"): "{s}'s plan is off: {v}",
    ("goal", ""): "{s}'s goal: {v}",
    ("life", ""): "{s}: {v}",
    ("trip", ""): "{s} travelled: {v}",
}
_ZH: Final[dict[tuple[str, str], str]] = {
    ("name", ""): "{s}叫{v}",
    ("age", ""): "{s}{v}",
    ("birthday", ""): "{s}的生日是{v}",
    ("job", ""): "{s}是{v}",
    ("job", "not"): "{s}不再做{v}",
    ("employer", ""): "{s}在{v}工作",
    ("volunteer", ""): "{s}在{v}做志愿者",
    ("volunteer", "not"): "{s}不再在{v}做志愿者",
    ("employer", "not"): "{s}已不在{v}工作",
    ("employer", "none"): "{s}{v}",
    ("school", ""): "{s}在{v}上学",
    ("major", ""): "{s}的专业是{v}",
    ("residence", ""): "{s}住在{v}",
    ("hometown", ""): "{s}来自{v}",
    ("partner", ""): "{s}的{v}",
    ("partner", "not"): "{s}{v}",
    ("child", ""): "{s}的{v}",
    ("family", ""): "{s}的{v}",
    ("friend", ""): "{s}的朋友：{v}",
    ("pet", ""): "{s}养了{v}",
    ("pet", "not"): "{s}的{v}已经不在了",
    ("language", ""): "{s}会说{v}",
    ("allergy", ""): "{s}对{v}过敏",
    ("allergy", "only"): "{s}只对{v}过敏",
    ("allergy", "not"): "{s}对{v}不过敏",
    ("condition", ""): "{s}有{v}",
    ("condition", "not"): "{s}的{v}已经好了",
    ("medication", ""): "{s}在用{v}",
    ("medication", "not"): "{s}停了{v}",
    ("diet", ""): "{s}{v}",
    ("diet", "not"): "{s}不再{v}",
    ("avoids", ""): "{s}不吃{v}",
    ("avoids", "not"): "{s}又吃{v}了",
    ("accessibility", ""): "{s}的无障碍需求：{v}",
    ("restriction", ""): "{s}的医嘱：{v}",
    ("restriction", "not"): "{s}又可以{v}了",
    ("drink", ""): "{s}喝{v}",
    ("drink", "only"): "{s}只喝{v}",
    ("drink", "not"): "{s}不再喝{v}",
    ("like", ""): "{s}{v}",
    ("favorite", ""): "{s}最喜欢的{v}",
    ("routine", ""): "{s}{v}",
    ("routine", "not"): "{s}不再{v}",
    ("routine", "given up"): "{s}停了{v}",
    ("hobby", ""): "{s}在学{v}",
    ("hobby", "not"): "{s}停了{v}",
    ("plan", ""): "{s}打算{v}",
    ("plan", "not"): "{s}的计划取消了：{v}",
    ("goal", ""): "{s}的目标：{v}",
    ("life", ""): "{s}{v}",
    ("trip", ""): "{s}{v}",
}


def _by_name_alone(who: str) -> bool:
    """Whether a person of the user's life is known by their name alone, no relation said
    ("Maya", not "daughter Maya", "mum" or "女儿朵朵")."""
    if not who.isascii() or " " in who:
        return False
    folded = who.casefold()
    return folded not in lexicon.RELATIONS_EN and not re.fullmatch(rf"{KIN_AS_NAMES}|hubby", folded)


def statement(frame: Frame, subject: str, *, chinese: bool) -> str:
    """``frame`` said plainly about ``subject`` ("The user", a speaker's name, or 用户)."""
    mood = "not" if frame.negated else "only" if frame.exclusive else ""
    if frame.negated and frame.target is None and (frame.kind, "none") in _EN:
        mood = "none"
    if frame.negated and frame.kind == "routine" and not _VERB_FIRST.match(frame.value):
        mood = "given up"  # "golf", "the choir", "羽毛球": a thing done, no verb to negate
    table = _ZH if chinese else _EN
    template = table.get((frame.kind, mood)) or table[(frame.kind, "")]
    who = "用户" if chinese and subject == DEFAULT_SUBJECT else subject
    if frame.who and _by_name_alone(frame.who):  # "Maya is allergic to peanuts"
        who = frame.who[:1].upper() + frame.who[1:]
    elif frame.who:  # the need of a person in the user's care: said of them
        who = f"{who}的{frame.who}" if chinese else f"{who}'s {frame.who}"
    value = frame.value
    if frame.kind == "partner" and not frame.negated:
        if bond := re.match(r"^(订婚|结婚|已婚)（(.+)）$", value):  # "结婚（王磊）"
            return f"{who}和{bond[2]}{bond[1].removeprefix('已')}了"
        if re.match(r"(?:engaged|married) to\b", value):
            return f"{who} is {value}"
    if chinese and frame.kind == "condition" and not frame.negated and _STATE_ZH.search(value):
        template = "{s}{v}"  # "胃不好", "血糖高": a state said as one, not a thing one has
    if chinese and frame.kind == "condition" and not frame.negated and value in _BODY_STATES_ZH:
        value = _BODY_STATES_ZH[value]  # "怀孕": one is pregnant, one does not have it
        template = "{s}{v}"
    if not chinese and frame.kind == "condition" and _STATE_EN.fullmatch(value):
        # "pregnant", "diabetic": a state one is, not a thing one has
        template = "{s} is no longer {v}" if frame.negated else "{s} is {v}"
    if (
        chinese and frame.kind == "plan"
    ):  # "日本，改到明年三月", "三亚，取消了": the plan's new state
        obj, sep, change = value.partition("，")
        if sep and change.startswith(("改到", "取消")):
            plan = obj if obj.endswith(("计划", "行程", "旅行", "之行")) else f"{obj}的计划"
            return re.sub(r"(?<![自忘唯])我(?!们)", who, f"{who}{plan}{change}")
    if not chinese and frame.kind in ("like", "routine") and mood != "given up":  # it agrees
        verb, _, rest = value.partition(" ")
        # "passionate about dance", "a big fan of jazz": said with "is", not as a verb
        value = f"is {value}" if verb.casefold() in _BE_HEADS else f"{agree(verb)} {rest}".strip()
    if not chinese and frame.kind in ("life", "trip"):  # said as the person said it
        return third_person(f"I {value}" if frame.kind == "life" else value, who)
    article = (
        "" if re.match(r"(?:an?|the)\b|retired$", frame.value, re.I) else _article(frame.value)
    )
    told = template.format(s=who, v=value, a=article)
    if chinese:
        return re.sub(r"(?<![自忘唯])我(?!们)", who, told)
    # the value is the person's own words: their "my" is the subject's, said once already
    told = re.sub(r"\b[Mm]y\b", "their", told)
    return re.sub(r"\b(?:I|me)\b", who, told)


#: a routine's value that begins with its verb ("go running", "play golf", "打篮球")
_VERB_FIRST: Final = re.compile(
    r"(?:go|goes|do|does|play|plays|run|runs|swim|swims|walk|walks|ride|rides|practi[cs]e|"
    r"train|lift|cook|bake|paint|draw|read|write|volunteer|teach|visit|take|attend|work)\b|"
    r"[打踢练跑游骑爬跳唱弹画做去学看读写上吸抽喝]",
    re.IGNORECASE,
)


#: the first words of a liking said with "to be" ("I'm passionate about", "I'm into")
_BE_HEADS: Final = frozenset({"into", "passionate", "obsessed", "keen", "crazy", "a"})
#: an English condition said as what one is ("pregnant", "diabetic", "breastfeeding")
_STATE_EN: Final = re.compile(
    r"(?:pregnant|breastfeeding|breast-feeding|diabetic|prediabetic|asthmatic|epileptic|"
    r"autistic|lactose intolerant|gluten intolerant)",
    re.IGNORECASE,
)
#: a Chinese condition said as a state of the body ("胃不好", "血压偏高")
_STATE_ZH: Final = re.compile(r"(?:不好|不太好|高|低|偏高|偏低|有点高|不行)$")
#: states of the body said as what one is, not what one has
_BODY_STATES_ZH: Final = {"怀孕": "怀孕了", "怀孕了": "怀孕了", "哺乳期": "在哺乳期"}


def _article(noun: str) -> str:
    if not noun or not noun[0].isascii():
        return ""
    return "an " if noun[0].lower() in "aeiou" else "a "
