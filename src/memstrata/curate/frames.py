"""The states of a life, read from what a person says about themselves: *frames*.

A frame is one state a statement sets for its speaker: where they work (``employer``), what
they do (``job``), where they live (``residence``), who their partner, children, family and
pets are, what they are allergic to, which conditions and medications they have, what they
eat, drink and like, their routines, hobbies, plans, goals and the life events that change
them. Pure functions, English and Chinese (:mod:`memstrata.curate.frames_en`,
:mod:`memstrata.curate.frames_zh`), no model; :func:`memstrata.curate.frame_reader.frames_in`
reads the frames of a clause.

Each frame has a *kind* (:data:`KINDS`) and, for the kinds that hold several values at once
(allergies, children, likes, plans...), a *key* naming which value (``allergy:shrimp``,
``child:小雨``, ``plan:kyoto``); its *slot* is ``kind`` or ``kind:key``. Keys of closed classes
are canonical English (:mod:`memstrata.curate.lexicon`): "shrimp" and "虾" are one key. A
frame's *value* is the complete phrase as the person said it, with the names they gave
("husband 王磊", "battery product lead", "Tencent in Shenzhen"), never cut inside a phrase.

A frame may end a state instead of setting one (``negated``: "I don't drink coffee anymore",
"crab is fine", "I quit my job": :attr:`Frame.ended`), or replace every value of its kind
(``exclusive``: "I'm only allergic to shrimp", "只喝绿茶"). What supersedes what is decided by
:mod:`memstrata.curate.supersede` from these three marks.

What lasts is what a frame's kind says it is (:attr:`Kind.importance`); a plan or an event
said for tonight, in a minute or "soon", an errand, is a passing moment
(:func:`passing`): it is kept in the archive with a low importance and never reaches L1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from memstrata.curate import patterns as re
from memstrata.model import Category
from memstrata.util.scripts import HAN


@dataclass(frozen=True, slots=True)
class Kind:
    """What a kind of state is: its category, how important it is to keep in L1, whether a
    person has one value at a time (``single``), and the L1 section it is shown in."""

    category: Category
    importance: float
    single: bool
    section: str


PROFILE: Final = "Profile"
SAFETY: Final = "Safety"
PREFERENCES: Final = "Preferences"
ROUTINES: Final = "Routines"
PLANS: Final = "Plans"
EVENTS: Final = "Key facts"

KINDS: Final[dict[str, Kind]] = {
    "name": Kind(Category.PROFILE, 0.9, True, PROFILE),
    "age": Kind(Category.PROFILE, 0.8, True, PROFILE),
    "birthday": Kind(Category.PROFILE, 0.8, True, PROFILE),
    "job": Kind(Category.PROFILE, 0.85, True, PROFILE),
    "employer": Kind(Category.PROFILE, 0.85, True, PROFILE),
    "school": Kind(Category.PROFILE, 0.8, True, PROFILE),
    "major": Kind(Category.PROFILE, 0.75, True, PROFILE),
    "residence": Kind(Category.PERSONAL, 0.85, True, PROFILE),
    "hometown": Kind(Category.PERSONAL, 0.75, True, PROFILE),
    "partner": Kind(Category.RELATIONSHIP, 0.85, True, PROFILE),
    "child": Kind(Category.RELATIONSHIP, 0.85, False, PROFILE),
    "family": Kind(Category.RELATIONSHIP, 0.75, False, PROFILE),
    "friend": Kind(Category.RELATIONSHIP, 0.65, False, PROFILE),
    "pet": Kind(Category.PERSONAL, 0.75, False, PROFILE),
    "language": Kind(Category.PROFILE, 0.7, False, PROFILE),
    # where a person gives their time: a shelter, a food bank, a school ("I volunteer at ...")
    "volunteer": Kind(Category.PERSONAL, 0.8, False, PROFILE),
    "allergy": Kind(Category.HEALTH, 0.95, False, SAFETY),
    "condition": Kind(Category.HEALTH, 0.95, False, SAFETY),
    "medication": Kind(Category.HEALTH, 0.95, False, SAFETY),
    "diet": Kind(Category.HEALTH, 0.9, True, SAFETY),
    "avoids": Kind(Category.HEALTH, 0.85, False, SAFETY),
    "accessibility": Kind(Category.HEALTH, 0.95, False, SAFETY),
    # what a doctor or a therapist says the person must not do ("no lifting for six weeks")
    "restriction": Kind(Category.HEALTH, 0.95, False, SAFETY),
    "drink": Kind(Category.PREFERENCE, 0.75, False, PREFERENCES),
    "like": Kind(Category.PREFERENCE, 0.7, False, PREFERENCES),
    "favorite": Kind(Category.PREFERENCE, 0.75, False, PREFERENCES),
    "routine": Kind(Category.PERSONAL, 0.75, False, ROUTINES),
    "hobby": Kind(Category.PERSONAL, 0.7, False, ROUTINES),
    "plan": Kind(Category.PLAN, 0.7, False, PLANS),
    "goal": Kind(Category.PLAN, 0.75, False, PLANS),
    "life": Kind(Category.EVENT, 0.8, False, EVENTS),
    "trip": Kind(Category.EVENT, 0.55, False, EVENTS),
}
#: the importance of a passing moment (kept in the archive, never in L1)
PASSING_IMPORTANCE: Final = 0.2


@dataclass(frozen=True, slots=True)
class Frame:
    """One state a statement sets (or ends) for its speaker."""

    kind: str
    value: str
    key: str | None = None
    negated: bool = False
    exclusive: bool = False
    #: what a negated frame of a single-valued kind ends ("Google" of "I left Google");
    #: None: whatever the value is ("I got laid off", "we broke up")
    target: str | None = None
    #: the person of the user's life whose state it is ("daughter Duoduo"), None for the
    #: speaker's own (:mod:`memstrata.curate.cared_for`)
    who: str | None = None
    #: said plainly, never in the person's words: a state read from a clause that says more
    #: than it ("医生说缺铁性贫血，让我吃铁剂" is "用户有贫血")
    plain: bool = False

    @property
    def ended(self) -> str | None:
        """None when the frame sets a state; the value it ends, or "" for any, when it
        ends one."""
        return (self.target or "") if self.negated else None

    @property
    def slot(self) -> str:
        return f"{self.kind}:{self.key}" if self.key else self.kind

    @property
    def spec(self) -> Kind:
        return KINDS[self.kind]


#: said for the next few hours, or an errand: a passing moment, whatever the verb
_PASSING_EN: Final = re.compile(
    r"\b(?:tonight|this (?:morning|afternoon|evening)|later today|later tonight|today|"
    r"right now|in a (?:bit|minute|sec|second|few minutes|while)|soon|shortly|in an hour|"
    r"head(?:ing)? (?:out|off|home)|grab (?:a |some )?(?:bite|lunch|dinner|coffee|food|drink)|"
    r"pick(?:ing)? up (?:some |the )?(?:groceries|kids|stuff|food)|groceries|laundry|"
    r"go(?:ing)? to bed|hit the (?:sack|hay)|take a nap|nap|shower|"
    r"bring (?:some |a )?snacks?|bring some|have dinner|make dinner|cook dinner|"
    r"do (?:the )?dishes|run (?:some |an )?errands?|watch (?:a|some) (?:movie|tv|show))\b",
    re.IGNORECASE,
)
_PASSING_ZH: Final = re.compile(
    r"今晚|今天|等会|等一下|一会儿|马上|待会|晚点|刚才|现在就|买菜|洗衣服|洗澡|睡觉|午睡|"
    r"吃饭去|去吃饭|取快递|拿快递|出门|下班了|回家了|做饭|"
    # this evening, said without a habit's words ("晚上要去接乐乐"; not "每天晚上", "周日晚上")
    r"(?<![每天日一二三四五六末])晚上(?:要|得|还要|准备|打算)|"
    r"接(?:孩子|娃|小孩|儿子|女儿)|(?:先)?不聊了|(?:先)?不聊啦|先下了|回头聊"
)


def passing(text: str) -> bool:
    """Whether a plan or an event is a passing moment: said for the next few hours (tonight,
    soon, in a minute, 今晚, 马上), or an errand (groceries, laundry, heading out, 买菜)."""
    return bool(_PASSING_EN.search(text) or _PASSING_ZH.search(text))


def importance(frame: Frame, text: str) -> float:
    """The importance of the state ``frame`` sets in ``text``: its kind's, or
    :data:`PASSING_IMPORTANCE` for a plan, a trip or an event that is a passing moment."""
    if frame.kind in _HAPPENINGS and passing(text):
        return PASSING_IMPORTANCE
    return frame.spec.importance


_HAPPENINGS: Final = frozenset({"plan", "life", "trip"})
#: the kinds of the people of a life: read even in a clause about one of them
PEOPLE: Final = frozenset({"partner", "child", "family", "friend", "pet"})


#: a bond said as a state of the speaker, with no partner's name ("engaged", "结婚")
BONDS: Final = frozenset({"engaged", "married", "订婚", "结婚", "已婚"})
#: words no phrase ends in ("works at", "goes to", "product manager at Tencent in")
_OPEN_END: Final = re.compile(
    r"(?:\b(?:at|in|on|of|to|for|with|from|by|about|into|and|or|but|the|a|an|my|our|their|"
    r"his|her|its|your|so|as|than|that|which|who|is|are|was|were|be|been|very|really|just)|"
    r"[在的和与跟把被对从给向于及或])$",
    re.IGNORECASE,
)
#: words that point outside a value: a value holding one cannot stand on its own
_POINTS_AWAY: Final = re.compile(
    r"\b(?:it|its|this|that|them|these|those|they|their|we|us|our|you|your|he|him|his|she|"
    r"her)\b|这个|那个|这些|那些|它|他们|她们|你|那里|这里|那儿|这儿|那边|这边",
    re.IGNORECASE,
)


#: a value that says how many and not of what ("a few", "some", "a couple")
_ONLY_HOW_MANY: Final = re.compile(
    r"^(?:a few|a couple|a couple of|some|several|many|a lot|lots|one|a bunch|more|"
    r"few|plenty)[.!]?$",
    re.IGNORECASE,
)


def complete(value: str) -> bool:
    """Whether a value is a complete phrase that stands on its own: it names something (a
    word of three letters or more, or two Chinese characters), does not end in a word that
    opens a phrase ("at", "to", "的"), and points to nothing outside itself ("it", "their",
    "这个")."""
    text = value.strip()
    if not re.search(rf"[A-Za-z]{{3,}}|\d|[{HAN}]{{2,}}", text):
        return False
    if _ONLY_HOW_MANY.match(text):
        return False  # "planning a few": a few of what the sentence before named
    return not (_OPEN_END.search(text) or _POINTS_AWAY.search(text))
