"""The offline extractor: the states a person states about themselves, then patterns over
first-person sentences, in English and Chinese.

Only what a human said is read: a turn of role assistant, system or tool is never a fact
about the user (its echo "Noted, no shellfish" is not evidence of an allergy). Each turn is
split into sentences (never inside one); a sentence's "we" is resolved from the turn and the
turns before it when they name exactly one companion of the speaker
(:mod:`memstrata.curate.referents`).

A sentence that states a state of the speaker's life (:mod:`memstrata.curate.frames`: their
job, home, family, allergies, diet, routines, plans...) becomes one candidate per state,
carrying its slot, its value, whether it ends the state or replaces every value of its kind,
and the importance of its kind: the sentence rewritten in the third person when it states one
state, a plain statement of each when it states several ("I'm Lin Wei, a product manager at
Tencent" -> "The user's name is Lin Wei", "The user is a product manager", "The user works at
Tencent"). Questions and hypotheticals ("if I ever move to Canada") state nothing.

Any other sentence is cut into the runs of clauses that stand alone
(:mod:`memstrata.curate.discourse`: no reaction, question, listener or unresolved referent);
a run that speaks about its speaker ("I ...", "my ...", "我...") and matches a pattern becomes
a candidate of that pattern's category, rewritten in the third person
(:mod:`memstrata.curate.person`). Its importance is the pattern's, or that of a passing
moment (:func:`memstrata.curate.frames.passing`: tonight, soon, an errand) whatever the
pattern, so that it stays in the archive and out of L1.

Every candidate carries the time its sentence names (:mod:`memstrata.timeref`: "last Friday",
"下个月", "in May"), resolved against the turn's own date, with the words as said.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Final

from memstrata import timeref
from memstrata.curate import cared_for as cared
from memstrata.curate import ellipsis, lexicon
from memstrata.curate import frames as framing
from memstrata.curate import patterns as re
from memstrata.curate.cared_for import people_of
from memstrata.curate.discourse import (
    is_question,
    restore_subject,
    self_contained,
    statement_before_question,
    strip_markers,
    verbless,
)
from memstrata.curate.frame_reader import EARLIER, frames_in
from memstrata.curate.frames import Frame
from memstrata.curate.hanzi import as_read
from memstrata.curate.merge import terms
from memstrata.curate.person import DEFAULT_SUBJECT, third_person
from memstrata.curate.quality import addresses_listener, assess
from memstrata.curate.referents import companion_in, resolve_we
from memstrata.curate.safety_net import health_matter
from memstrata.curate.statements import statement
from memstrata.model import Candidate, Category, Episode, Extraction, Role, When
from memstrata.timeref.tables import chinese_number, english_number
from memstrata.timeref.tense import direct_future
from memstrata.util.scripts import HAN, HAN_SPACE, han_count, has_han

__all__ = ["RULES", "Rule", "RuleExtractor", "chat_spelling", "sentences", "third_person"]

_SENTENCE_RE: Final = re.compile(r"[^.!?。！？；;\n]+(?:[.!?。！？；;]+|$)")
#: points that end no sentence: a title or an abbreviation ("Dr. Patel", "e.g."), a decimal
_NOT_AN_END: Final = re.compile(
    r"\b(?:Dr|Mr|Mrs|Ms|Prof|St|Jr|Sr|Mt|vs|etc|approx|No)\.(?=\s)|\b(?:e\.g|i\.e)\.|(?<=\d)\.(?=\d)"
)
_KEPT_POINT: Final = "\ue000"  # a private-use character stands for such a point meanwhile
_FIRST_PERSON_EN: Final = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|my|My|me|mine|myself)\b")
_FIRST_PERSON_ZH: Final = re.compile(r"我(?!们)")


def _first_person(text: str) -> bool:
    """Whether ``text`` speaks of its speaker ("I", "my", 我 but not 我们)."""
    return bool(_FIRST_PERSON_EN.search(text) or _FIRST_PERSON_ZH.search(text))


@dataclass(frozen=True, slots=True)
class Rule:
    name: str
    category: Category
    confidence: float
    importance: float
    pattern: re.Pattern[str]


def _en(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_PAST: Final = (
    r"(?:\w{2,}(?<!e)ed|went|got|made|took|saw|met|ran|began|bought|had|did|found|gave|won|"
    r"lost|read|wrote|built|left|came|felt|became|brought|taught|sold|spent|sang|"
    r"drew|flew|drove|swam|grew|heard|kept|knew|paid|put|sent|sat|stood|told|"
    r"thought|understood|wore)"
)

# When a plan is for: what makes "I'll ..." a plan rather than a promise ("I'll do my best").
_WHEN: Final = (
    r"\b(?:next|this|coming) (?:week|weekend|month|year|summer|winter|spring|fall|autumn|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|season|semester)\b|"
    r"\b(?:tomorrow|tonight|soon|later today|later this|in (?:a|an|two|three|a few|\d+) "
    r"(?:days?|weeks?|months?|years?))\b|\bon (?:monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday)\b"
)

RULES: Final[tuple[Rule, ...]] = (
    Rule("name", Category.PROFILE, 0.9, 0.9, _en(r"\bmy name is\b|\bcall me\b|我叫|我的名字是")),
    Rule(
        "health",
        Category.PERSONAL,
        0.85,
        0.9,
        _en(
            r"\bI(?:'m| am) allergic to\b|\bI have (?:an? )?(?:allerg\w+|asthma|diabetes|"
            r"celiac|coeliac)\b|\bI can't eat\b|"
            r"我对\S{1,10}过敏|我(?:有|得了)\S{0,6}(?:过敏|哮喘|糖尿病)"
        ),
    ),
    Rule(
        "residence",
        Category.PERSONAL,
        0.85,
        0.7,
        _en(
            r"\bI (?:now |currently )?(?:live|moved|relocated) (?:in|to)\b|\bI(?:'m| am) from\b|"
            r"我(?:现在)?(?:住在|搬到|来自|定居在)"
        ),
    ),
    Rule(
        "role",
        Category.PROFILE,
        0.85,
        0.8,
        _en(
            r"\bI(?:'m| am) (?:a|an) (?:\w+ ){0,3}(?:engineer|developer|teacher|nurse|doctor|"
            r"student|designer|manager|artist|writer|counselor|scientist|lawyer|chef|musician|"
            r"researcher|painter|photographer|mom|dad|mother|father|parent)\b|"
            r"\bI work (?:as|at|for|in)\b|\bmy (?:job|work|career|profession)\b|"
            r"我是(?:一名|一个|一位)?\S{0,8}"
            r"(?:工程师|老师|教师|医生|护士|学生|设计师|经理|程序员|律师|厨师|研究员)|我在\S{1,12}工作"
        ),
    ),
    Rule(
        "expertise",
        Category.EXPERTISE,
        0.75,
        0.6,
        _en(
            r"\bI(?:'m| am) (?:good at|skilled|an expert|experienced|fluent)\b|"
            r"\bI(?:'ve| have) been \w+ing (?:for|since)\b|\bI know how to\b|"
            r"我擅长|我精通|我学了\S{0,6}年"
        ),
    ),
    Rule(
        "dislike",
        Category.PREFERENCE,
        0.8,
        0.6,
        _en(
            r"\bI (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like|"
            r"don't enjoy)\b|我(?:很|非常|特别)?(?:不喜欢|讨厌|受不了|不爱)"
        ),
    ),
    Rule(
        "preference",
        Category.PREFERENCE,
        0.8,
        0.6,
        _en(
            r"\bI (?:really |absolutely |just |totally |also |still |always |especially |"
            r"genuinely |definitely )?(?:love|like|enjoy|prefer|adore)\b|"
            r"\bmy fav(?:o|ou)rite\b|"
            r"\bI(?:'m| am) (?:really )?"
            r"(?:into|a (?:big |huge |total )?fan of|passionate about|obsessed with|inspired by)\b|"
            r"我(?:也|还|一直|都)?(?:很|非常|特别|最|更)?(?:喜欢|爱|偏好|钟爱)|我最喜欢的"
        ),
    ),
    Rule(
        "decision",
        Category.DECISION,
        0.8,
        0.6,
        _en(
            r"\b(?:I|we) (?:have |'ve )?(?:decided|chose|chosen|picked|settled on)\b|\bI(?:'m| am) "
            r"going with\b|(?:我|我们)(?:已经)?(?:决定|选择了|定了)"
        ),
    ),
    Rule(
        "plan",
        Category.PLAN,
        0.7,
        0.5,
        _en(
            r"\b(?:I|we)(?:'m| am|'re| are) (?:(?:planning|going|hoping|thinking about|about) to|"
            r"gonna|off to)\b(?! (?:\w+ )?keep\b)|"
            r"\b(?:I|we) (?:plan|intend|want|hope|aim) to\b|"
            rf"\b(?:I|we)(?:'ll| will) (?=.*(?:{_WHEN}))"
            r"|\bnext (?:week|month|year|summer|weekend)\b"
            r"|(?:我|我们)(?:打算|计划|准备|想要|将要|要去|会去)|下(?:周|个月|星期|次)"
        ),
    ),
    Rule(
        "event",
        Category.EVENT,
        0.65,
        0.4,
        _en(
            rf"\b(?:I|we) (?:just |recently |finally |also |actually |even |then |once |first )?"
            rf"{_PAST}\b(?!')|"
            r"\b(?:I|we)(?:'ve| have|'d| had) (?:just |recently |finally |already |also |even |"
            r"never |always )?(?:been|\w{2,}(?<!e)ed|\w+en|got|done|gone|made|found|met|had|"
            r"bought|built|won|lost|run|left|kept|taught|heard|felt|read)\b|"
            r"\b(?:invited|asked|taught|told|gave|sent|showed|took|brought|called|visited|hired|"
            r"offered) me\b|"
            r"\b(?:yesterday|last (?:week|weekend|month|year|night|summer))\b|"
            r"(?:我|我们)\S{0,12}(?:了|过)"
        ),
    ),
    Rule(
        "activity",
        Category.EVENT,
        0.65,
        0.45,
        _en(
            r"\b(?:I|we)(?:'m| am|'re| are) (?:currently |now |still |also |really |finally )?"
            r"(?!going to)\w+ing\b|\b(?:I|we) (?:usually |often |also |sometimes |still |"
            r"regularly |always |really |even |just |now )?(?:use|play|read|write|practice|"
            r"volunteer|train|cook|paint|teach|study|collect|attend|visit|mentor|coach|bake|run|own|manage|"
            r"host|lead|organize|donate|meditate|walk|hike|swim|dance|sing|draw|knit|garden|"
            r"cherish|value|make|work out|go to|take|keep|stay|spend|listen to|watch|grow|"
            r"believe in|care about)\b|"
            r"(?:我|我们)(?:也|还|一直)?(?:正在|在|经常|常常|每天|每周)\S{1,12}"
        ),
    ),
    Rule(
        "attitude",
        Category.OTHER,
        0.7,
        0.3,
        _en(
            r"\b(?:inspire[sd]?|motivate[sd]?|calm(?:s|ed)?|relax(?:es|ed)?|help(?:s|ed)?|keeps?|kept|"
            r"gets?|got|makes?|made|brings?|brought|gives?|gave|fills?|filled|reminds?|reminded|"
            r"taught|teaches|showed|shows) (?:me|us)\b|\b(?:matters?|means? a lot) to me\b|"
            r"\bI(?:'m| am) (?:so |really |very |super |totally )?(?:thrilled|stoked|determined|"
            r"eager|keen|ready|excited) (?:to|about|for)\b|"
            r"\b(?:important|special|meaningful|interesting) to me\b|\bI(?:'m| am) "
            r"(?:so |really |very )?(?:grateful|thankful|proud|excited|passionate|happy|glad) "
            r"(?:for|of|about|that)\b|(?:让|使)我(?:很|非常|特别)?\S{0,4}|我(?:很|非常)?(?:感激|自豪|骄傲)"
        ),
    ),
    Rule(
        "group",
        Category.RELATIONSHIP,
        0.7,
        0.45,
        _en(
            r"\b(?:our|my) (?:team|family|kids|community|group|band|club|company|class|"
            r"friends|partner|parents)\b|我们(?:团队|家|公司|班|小组)"
        ),
    ),
    Rule(
        "attribute",
        Category.PERSONAL,
        0.85,
        0.45,
        _en(
            r"^(?:my|our) [\w' -]{2,30}? (?:is|are|was|were|has|have|had)\b|"
            r"^(?!(?:it|this|that|these|those|they|there|what|which|who)\b)[\w' -]{3,40}? "
            r"(?:is|are|was|were|'s|has been|have been)(?: \w+)? (?:one of )?my\b|"
            r"^我的\S{1,8}(?:是|在|叫|有)|^\S{1,10}是我的"
        ),
    ),
    Rule(
        "personal",
        Category.PERSONAL,
        0.85,
        0.5,
        _en(
            r"\bmy (?:kids?|son|daughter|husband|wife|partner|family|mom|dad|mother|father|"
            r"brother|sister|friends?|dog|cat|pet|home|house)\b|\bI have (?:a|an|two|three|\d+) |"
            r"我(?:的)?(?:孩子|儿子|女儿|丈夫|妻子|老公|老婆|家人|父母|妈妈|爸爸|狗|猫|宠物|家)|我有"
        ),
    ),
)


def sentences(text: str) -> list[str]:
    """The sentences of a text, never cut at the point of a title, an abbreviation or a
    decimal ("Dr. Patel", "e.g.", "3.5")."""
    guarded = text
    if _KEPT_POINT not in text:
        guarded = _NOT_AN_END.sub(lambda m: m[0].replace(".", _KEPT_POINT), text)
    found = (s.strip().replace(_KEPT_POINT, ".") for s in _SENTENCE_RE.findall(guarded))
    return [s for s in found if s]


def _worth_it(sentence: str) -> bool:
    cjk = han_count(sentence)
    words = len(re.findall(r"[A-Za-z0-9']+", sentence))
    return words >= 3 or cjk >= 4


#: roles whose turns are not a person speaking about themselves
NOT_A_PERSON: Final = frozenset({Role.ASSISTANT, Role.SYSTEM, Role.TOOL})
#: what makes a sentence say what is not (yet) so: a condition, a wish, a counterfactual
_HYPOTHETICAL: Final = re.compile(
    r"\b(?:if I|if we|if only|I wish|I'd love to|I would love to|would be|would have|"
    r"imagine|suppose|in case|someday|one day I|maybe one day|hypothetically|unless)\b|"
    rf"\bif\s*(?=[{HAN}])|"
    r"如果|(?<![主需只就还都])要是|假如|万一|假设|但愿|希望有一天|(?<![那])哪天",
    re.IGNORECASE,
)
#: someone other than the speaker opening a Chinese clause (他, 她, 我妹妹, 朋友...); the 他 of
#: a drug's name is no one ("阿托伐他汀", "氯雷他定", "他克莫司")
_SOMEONE_ELSE_ZH: Final = re.compile(
    r"^(?:[^，。；！？]{0,4})(?:他(?![汀定克莫达司唑])|她|他们|她们|朋友|同事|邻居|室友|同学|老板|"
    r"我(?:的|家)?(?:老公|丈夫|老婆|老伴|妻子|男朋友|女朋友|儿子|女儿|孩子|妈妈|爸爸|父母|哥哥|姐姐|弟弟|"
    r"妹妹|奶奶|爷爷|外婆|外公|婆婆|公公|闺蜜|朋友|闺女|老妈|老爸|妈|爸))(?!们?的)"
)
#: the confidence of a state read by the frames (a health state: kept unless refused)
FRAME_CONFIDENCE: Final = 0.85
_TENSE_FUTURE: Final = frozenset({"plan", "goal"})


class RuleExtractor:
    """:class:`memstrata.ports.Extractor` by patterns; offline, English and Chinese."""

    def __init__(self, rules: Sequence[Rule] = RULES) -> None:
        self.rules = tuple(rules)

    @property
    def name(self) -> str:
        return "rules"

    def extract(self, episodes: Sequence[Episode]) -> Extraction:
        candidates: list[Candidate] = []
        people = [e for e in episodes if not _not_a_person(e)]
        speakers = {e.speaker for e in people if e.speaker not in (None, "user")}
        cared_by: dict[str | None, dict[str, str]] = {}
        # each turn as the rules read it, once: traditional characters and written Cantonese
        # as simplified Mandarin (a turn is read again as the context of the next ones)
        read = [as_read(e.text) for e in episodes]
        # each speaker's last statement a state was read from, for a fragment that adds one
        # more thing to it ("Sulfa too."): (session, turn index, statement, its states)
        last: dict[str | None, tuple[str | None, int, str, list[Frame]]] = {}
        for index, episode in enumerate(episodes):
            if _not_a_person(episode):
                continue  # what the assistant said is not a fact about the user
            name = episode.speaker if episode.speaker in speakers else None
            subject = name or DEFAULT_SUBJECT
            listeners = speakers - {episode.speaker}
            earlier = _previous_turns(episodes, read, index)
            said_text = chat_spelling(read[index])
            said = [part for sentence in sentences(said_text) for part in _uncleft(sentence)]
            stated: list[Frame] = []  # the turn's states so far ("crab is fine" after them)
            for position, text in enumerate(said):
                text = _said_again(text, last.get(episode.speaker), episode, index)
                text = _goes_on_about(text, said[position - 1] if position else "")
                context = [(s, True) for s in reversed(said[:position])] + earlier
                # of a question, what it states before the clause that asks ("I'm celiac,
                # so what pasta brands are safe?"), read by every reader below once
                resolved = _stated(resolve_we(text, companion_in(context)))
                known = cared_by.setdefault(episode.speaker, {})  # the speaker's own people
                found = [
                    _partner_named(f, known) for f in _frames_of(resolved, stated, said_text, known)
                ]
                if any(f.kind == "partner" and f.value.split()[0] in framing.BONDS for f in stated):
                    # "… proposed! we're engaged": the partner the bond names, said once
                    found = [f for f in found if not _bare_partner(f)]
                stated += found
                _spoken_of(known, found)
                if found:
                    last[episode.speaker] = (episode.session_id, index, resolved, found)
                # a clause no state was read from may still say something of the speaker
                # ("I work at Klook and I volunteer at the food bank on Tuesdays"); then each
                # state is told in its own clause
                others = [
                    _candidate(rule, part, episode, subject)
                    for part in (_unread_clauses(resolved, found, listeners) if found else [])
                    if (rule := self._rule_for(part)) is not None
                ]
                made = _frame_candidates(
                    found, resolved, episode, subject, listeners, whole_told=not others
                )
                if made or (found and all(f.kind == "name" for f in found)):
                    made += others  # a name that is the speaker's own says no more
                else:
                    made = [
                        _candidate(rule, part, episode, subject)
                        for part in self_contained(resolved, listeners)
                        if (rule := self._rule_for(part)) is not None
                    ]
                # "Is it normal that my asthma…?", "Can I drink on my Lexapro?": a condition
                # or a medicine the speaker calls theirs is theirs, asked about or not
                # (its words are not what the sentence says: a health note may still keep them)
                owned_made: list[Candidate] = []
                for owned in presupposed(text):
                    held = _frames_of(owned, stated, said_text, known)
                    if any(f.key and f.key in {m.key for m in found} for f in held):
                        continue  # read already from what the sentence says
                    stated += held
                    found += held
                    owned_made += _frame_candidates(held, owned, episode, subject, listeners)
                # a health matter the frames did not read is kept whole, never lost: the
                # sentence, or its clause that names what no health state read said
                health_read = [
                    said
                    for c in made
                    if c.category == Category.HEALTH or c.rule == "health"
                    for said in (c.value or c.ended, c.text)
                    if said
                ]
                kept = _health_said(
                    resolved,
                    episode,
                    subject,
                    known,
                    health_read,
                    before=said[position - 1] if position else "",
                )
                if kept is not None:
                    made = _health_kept(kept, made)
                candidates += made + owned_made
        return Extraction(tuple(candidates))

    def _rule_for(self, sentence: str) -> Rule | None:
        if not _worth_it(sentence):
            return None
        if _HYPOTHETICAL.search(sentence):
            return None  # "If I ever win the lottery I'm buying a narrowboat": nothing so
        if not _first_person(sentence):
            return None
        return next((r for r in self.rules if r.pattern.search(sentence)), None)


def capital_i(text: str) -> str:
    """``text`` with the pronoun "i" of a chat in lower case written "I" ("i'm vegan, i have a
    nut allergy"), so that it reads as the first person; "i.e." and words stay as they are.
    "im" and "ive", which are no English words, are "I'm" and "I've" written without the
    apostrophe ("im allergic to sesame"); "ill" and "id" are words and stay."""
    text = re.sub(r"(?<![\w'.-])[Ii](m|ve)(?![\w'.-])", lambda m: f"I'{m[1]}", text)
    return re.sub(r"(?<![\w'.-])i(?=(?:'(?:m|ve|ll|d|s))?(?![\w.-]))", "I", text)


#: contractions a chat writes without the apostrophe, none of them an English word as written
#: ("dont", "thats", "its only"; "its" only before words its possessive never precedes)
_BARE_CONTRACTION: Final = re.compile(
    r"(?<![\w'’-])(?:(?P<nt>do|does|did|is|was|are|were|ca|could|would|should|have|has|wo)nt"
    r"|(?P<s>that|what|there|he|she|it(?=s (?:only|just|not|so|really|actually|gonna|been|all|"
    r"a|an|the|my|fine|ok|okay|over|done|official|back|time)\b)|let)s"
    r"|(?P<re>they|you)re)(?![\w'’-])",
    re.IGNORECASE,
)


def chat_spelling(text: str) -> str:
    """``text`` with the contractions a chat writes without their apostrophe spelled out
    ("turns out its only sesame" -> "it's only", "dont", "thats"), and its lower-case "i" as
    "I" (:func:`capital_i`), so that the rules read it as they read any other sentence."""

    def spelled(m: re.Match[str]) -> str:
        word = m.group()
        if m["nt"] is not None:
            return f"{m['nt']}n't"  # "cant" -> "can't", "wont" -> "won't"
        return f"{word[:-1]}'s" if m["s"] is not None else f"{word[:-2]}'re"

    return capital_i(_BARE_CONTRACTION.sub(spelled, text))


#: the relations a partner is called by
_PARTNER_WORDS: Final = re.compile(
    r"\b(?:boyfriend|girlfriend|partner|fianc[ée]e?|husband|wife)\b|男朋友|女朋友|未婚夫|未婚妻|老公|老婆|对象",
    re.IGNORECASE,
)


def _bare_partner(frame: Frame) -> bool:
    """A partner said by the relation alone ("boyfriend"), no name, no bond."""
    return frame.kind == "partner" and not frame.negated and " " not in frame.value.strip()


def _partner_named(frame: Frame, known: Mapping[str, str]) -> Frame:
    """A bond said without a name, with the name of the one partner the speaker has named
    ("my boyfriend marcus" … "we're engaged": "engaged to marcus")."""
    if frame.kind != "partner" or frame.negated or frame.value not in framing.BONDS:
        return frame
    partners = {
        name for name, label in known.items() if _PARTNER_WORDS.search(label) and name != label
    }
    if len(partners) != 1:
        return frame
    name = next(iter(partners))
    value = f"{frame.value} to {name}" if frame.value.isascii() else f"{frame.value}（{name}）"
    return replace(frame, value=value)


def _spoken_of(known: dict[str, str], found: Sequence[Frame]) -> None:
    """Keep ``known`` (name -> how the user calls them) in the order its people were last
    spoken of: the people ``found`` names, and those whose needs it states, go last ("she" of
    a later turn is the one spoken of last)."""
    for name, label in people_of(found).items():
        known.pop(name, None)
        known[name] = label
    for frame in found:
        if frame.who is None:
            continue
        name = next((n for n, label in known.items() if label == frame.who), frame.who)
        known[name] = known.pop(name, frame.who)


def _stated(text: str) -> str:
    """What ``text`` says as so: the whole of a statement; of a question, the clauses before
    the one that asks, when they state something ("Since I'm allergic to penicillin, what else
    can I take?" -> "Since I'm allergic to penicillin"); else nothing."""
    if not text or not is_question(text):
        return text
    before = statement_before_question(text)
    if not before or is_question(before):
        return ""
    return _SINCE.sub("", before)  # "Since I'm allergic to penicillin": what is so


#: what may stand between "my" and a condition or a medicine the speaker calls theirs
_OWNED_EN: Final = re.compile(
    r"\bmy\s+(?:(?:bad|chronic|mild|severe|stupid|damn|annoying|usual|daily|morning|night)\s+)*",
    re.IGNORECASE,
)
_OWNED_ZH: Final = re.compile(rf"我的?(?:这个|这|那个)?(?=[{HAN}])")
#: a condition or a medicine one had once, not now
_NOT_NOW: Final = re.compile(
    r"\b(?:used to|no longer|anymore|any more|gone|went away|cured|grew out|outgrew|former|"
    r"old|ex|off|stopped|quit|switched|changed|replaced|no more)\b|以前|曾经|好了|没了|不再|停了|"
    r"不吃了|换了|换成|改成",
    re.IGNORECASE,
)


#: the longest name of a condition or a medicine read after "my" (the lexicon's are shorter)
_LONGEST_NAME: Final = 60
#: words for a medicine of any kind: "my inhaler" names none in particular
_ANY_MEDICINE: Final = frozenset(
    {"inhaler", "inhalers", "medication", "medications", "meds", "medicine", "pills", "tablets"}
)


def presupposed(sentence: str) -> list[str]:
    """What ``sentence`` takes as so of its speaker by calling a condition or a medicine
    theirs ("Is it normal that my asthma gets worse in spring?", "Can I drink on my
    Lexapro?", "我的哮喘春天会不会加重？"): each as a plain statement ("I have asthma", "I
    take Lexapro", "我有哮喘", "我在吃…"), for the state readers. Only the lexicon's words right
    after "my"/我的, so "my mom's asthma" or "my old inhaler" says nothing of the speaker; none
    in a sentence that says it is over."""
    if _NOT_NOW.search(sentence):
        return []
    out: list[str] = []
    for pattern, chinese in ((_OWNED_EN, False), (_OWNED_ZH, True)):
        for owner in pattern.finditer(sentence):
            rest = sentence[owner.end() : owner.end() + _LONGEST_NAME].casefold()
            for table, said in (
                (lexicon.CONDITIONS, "我有{}" if chinese else "I have {}"),
                (lexicon.MEDICATIONS, "我在吃{}" if chinese else "I take {}"),
            ):
                word = lexicon.said_first(table, rest)
                if word is not None and word not in _ANY_MEDICINE:
                    # as the speaker wrote it ("ADHD", "Lexapro")
                    out.append(said.format(sentence[owner.end() : owner.end() + len(word)]))
                    break
    return list(dict.fromkeys(out))


#: a reason a question gives for itself before what it states ("since", "as", "given that")
_SINCE: Final = re.compile(
    r"^(?:since|as|because|given that|now that|seeing as)\s+(?=(?:I|I'm|my|we|our)\b)", re.I
)


#: a sentence that opens with a person of the speaker's life, "he" or "she" ("she's 78",
#: "mam is on warfarin", "my husband Ron has Parkinson's"): its subject, said again
_WHO_EN: Final = rf"(?P<who>(?:my|our)\s+(?!own\b)[a-z]+|he|she|{cared.KIN_AS_NAMES})"
_PERSON_OPENS_EN: Final = re.compile(
    rf"^\s*(?:(?:and|also|so|but)\s+)?{_WHO_EN}(?:\s+[A-Z][a-z]+)?"
    r"(?:'s\b|\s+(?:is|has|lives|takes|needs|uses|was|had|can't|cannot)\b)",
    re.IGNORECASE,
)
#: a sentence that opens with a person of the speaker's life, whatever it says of them
_OTHER_PERSON_EN: Final = re.compile(
    rf"^\s*(?:(?:and|also|so|but|speaking of)\s+)?{_WHO_EN}\b", re.IGNORECASE
)
#: a word that names someone other than the speaker ("for her heart")
_THIRD_PERSON_EN: Final = re.compile(r"\b(?:her|his|him|she|he)\b", re.IGNORECASE)
#: a fragment that says how someone is, without its verb ("on warfarin for her heart")
_STATE_FIRST_EN: Final = re.compile(
    r"^(?:(?:still|also|now|just)\s+)*(?:on|off|allergic|intolerant|diabetic|asthmatic|"
    r"pregnant|in a wheelchair|deaf|blind)\b",
    re.IGNORECASE,
)
#: a fragment that opens with what someone does ("takes metformin", "needs big print")
_DOES_FIRST_EN: Final = re.compile(
    r"^(?:(?:still|also|now|just)\s+)*(?:takes|has|needs|uses|gets|can't|cannot|won't)\b",
    re.IGNORECASE,
)


#: an allergy said with its allergen put first ("it's actually kiwi he's allergic to, not
#: strawberries", "turns out it's cashews I'm allergic to")
_CLEFT_ALLERGY: Final = re.compile(
    r"\b(?i:it(?:'s| is))\s+(?i:(?:actually|really|only|just)\s+)*"
    r"(?P<x>(?!(?i:my|his|her|our|their|the)\b)[A-Za-z][\w' -]{1,30}?)\s+(?i:that\s+)?"
    r"(?P<s>(?i:I'm|I am|he's|she's|he is|she is)|[A-Z][a-z]+(?:'s| is))\s+"
    r"(?P<a>(?i:(?:only\s+|actually\s+)?allergic to))\b"
    r"(?:,?\s+(?i:not)\s+(?P<y>[A-Za-z][\w' -]{1,30}?))?\s*(?:[,.;!]|$)"
)


def _uncleft(text: str) -> list[str]:
    """``text``, or its allergy said with the person first when it puts the allergen first,
    and what it says the allergen is not, apart: "it's actually kiwi he's allergic to, not
    strawberries" -> "he's allergic to kiwi", "he's not allergic to strawberries" (what the
    frames read)."""
    match = _CLEFT_ALLERGY.search(text)
    if match is None:
        return [text]
    who, allergic = match["s"], match["a"]
    out = [f"{who} {allergic} {match['x']}."]
    if match["y"]:
        out.append(f"{who} not {allergic} {match['y']}.")
    rest = text[match.end() :].strip()
    return [*out, rest] if rest else out


def _goes_on_about(text: str, before: str) -> str:
    """``text``, or when it is an English fragment that names a health matter and leaves its
    subject out right after a sentence about a person of the speaker's life ("she's 78,
    lives on her own. on warfarin for her heart, the afib."), ``text`` with that subject:
    the fragment goes on about them, and is read as theirs."""
    if not before or has_han(text) or health_matter(text) is None:
        return text
    opens = _PERSON_OPENS_EN.match(before)
    if opens is None and _THIRD_PERSON_EN.search(text):
        opens = _OTHER_PERSON_EN.match(before)
    if opens is None:
        return text  # "My sister called. Still on the sertraline": the speaker's, as said
    who = opens["who"]
    said = text[:1].lower() + text[1:]
    if _STATE_FIRST_EN.match(text):
        return f"{who} is {said}"
    if _DOES_FIRST_EN.match(text):
        return f"{who} {said}"
    return text


#: how many turns back a fragment's statement may be: the speaker's previous turn, with
#: the listener's reply between them ("Penicillin." / "Noted, anything else?" / "Sulfa too.")
_FRAGMENT_REACH: Final = 2


def _said_again(
    text: str,
    statement: tuple[str | None, int, str, list[Frame]] | None,
    episode: Episode,
    index: int,
) -> str:
    """``text``, or when it only adds one more thing to the speaker's last statement
    (:mod:`memstrata.curate.ellipsis`: "Sulfa too.", "还有芒果。"), that statement said of it,
    when it sets a state of the same kind for that thing: the frames read it as said."""
    thing = ellipsis.added(text)
    if thing is None or statement is None:
        return text
    session, at, said, frames = statement
    if session != episode.session_id or index - at > _FRAGMENT_REACH:
        return text
    for frame in reversed(frames):  # the state said last, nearest the fragment
        again = ellipsis.said_again(said, frame.value, thing)
        if again is None:
            continue
        read = _frames_of(again, [])
        if any(f.kind == frame.kind and thing.casefold() in f.value.casefold() for f in read):
            return again
        return text
    return text


def _not_a_person(episode: Episode) -> bool:
    return episode.role in NOT_A_PERSON or episode.speaker == "assistant"


def _frames_of(
    sentence: str,
    earlier: Sequence[Frame],
    turn: str = "",
    people: Mapping[str, str] | None = None,
) -> list[Frame]:
    """The states ``sentence`` (what a sentence states, :func:`_stated`: of a question, the
    clauses before the one that asks) sets for its speaker: none for a hypothetical, or a
    Chinese clause about someone else; where "we" is still unresolved ("we went to the beach
    together"), only a state a household shares (a home, a pet, a child, a plan)."""
    text = restore_subject(strip_markers(sentence))
    if not text:
        return []
    if wish := _HYPOTHETICAL.search(text):
        # what is not (yet) so is said from its "if" on; what comes before it is said as so
        # ("我在成都住了一辈子 … 要是去三亚就得把店转出去", "she uses a wheelchair if we go out")
        text = _before(text, wish.start())
        if not _worth_it(text):
            return []
    said = f"{sentence} {text}" if sentence != text else text  # its cues ("actually", 其实) too
    if _WE.search(text) and not _SINGULAR.search(text):
        return [  # what a household shares, and the needs of the people it looks after
            f
            for f in _frames_in_clauses(text, earlier, turn, said, people)
            if f.kind in _SHARED or f.who is not None
        ]
    return _frames_in_clauses(text, earlier, turn, said, people)


def _before(text: str, at: int) -> str:
    """``text`` before ``text[at]``, without the words that only joined it to what follows
    ("I live in Paris, but" -> "I live in Paris")."""
    head = text[:at].rstrip()
    return re.sub(r"(?:[\s,，;；—-]|\b(?:but|and|so|or|then|which|that)\b)+$", "", head, flags=re.I)


#: where a clause of Chinese or mixed text ends: a Chinese comma or semicolon, a Latin one
#: beside Chinese (not inside an English run, "I'm Lucas, ICU nurse at the Royal Melbourne,
#: 做夜班 mostly" keeps its English clause whole), or a pause a chat writes as a space
#: between two characters ("还行吧 异地太累了")
_CJK_CLAUSE: Final = re.compile(
    rf"(?<=[，；])|(?<=[{HAN}）)][,;])|(?<=[,;])(?=\s*[{HAN}])|"
    rf"{HAN_SPACE}"
)
#: "we" left unresolved, and a first person singular beside it
_WE: Final = re.compile(r"\b(?:[Ww]e|[Uu]s|[Oo]ur)\b|我们|咱们")
_SINGULAR: Final = re.compile(r"\b(?:I|I'm|I've|[Mm]y|[Mm]e)\b|我(?!们)")
#: the states a household shares, said with "we"
_SHARED: Final = frozenset({"residence", "pet", "child", "plan", "partner"})


def _frames_in_clauses(
    text: str,
    earlier: Sequence[Frame],
    turn: str,
    said: str = "",
    people: Mapping[str, str] | None = None,
) -> list[Frame]:
    clauses = _CJK_CLAUSE.split(text) if has_han(text) else [text]
    for i in range(len(clauses) - 1, 0, -1):  # "我养了一只猫，叫咪咪": the name is the pet's
        if re.match(r"[，,；;\s]*(?:叫|名字叫|取名叫|起名叫)", clauses[i]):
            clauses[i - 1 : i + 1] = [
                clauses[i - 1].rstrip("，,；; ") + clauses[i].lstrip("，,；; ")
            ]
    found: list[Frame] = []
    whose: str | None = None  # the person the clause before spoke of, in Chinese
    about_other = False  # whether the clause before spoke of someone else
    other: str | None = None  # and who, when it was one of the speaker's own ("我妈")
    for clause in clauses:
        before = [*earlier[-EARLIER:], *found[-EARLIER:]]
        read = frames_in(clause, before, said or text, turn, people)
        bare = clause.lstrip("，,；; ")
        if has_han(clause) and _ASKS_LISTENER_ZH.search(bare):
            # "昆明那边你得帮我找能推轮椅的地方": what the listener is asked to do sets no
            # state; who the people it names are stays
            read = [f for f in read if f.kind in framing.PEOPLE]
        someone_else = has_han(clause) and bool(
            _SOMEONE_ELSE_ZH.match(bare)
            or any(name and bare.startswith(name) for name in people or ())  # "乐乐转到了…"
        )
        if someone_else or (about_other and has_han(clause) and _SUBJECTLESS_ZH.match(bare)):
            # who they are, and what they need, not the speaker's state; a clause without its
            # subject goes on about them ("我妈今年九十了 想重外孙想得不行"), and what it says
            # of their health is theirs ("我妈上个月又摔了一下 还好没骨折 现在出门得坐轮椅了")
            theirs = (
                [
                    f
                    for f in frames_in(f"我{other}{bare}", before, said or text, turn, people)
                    if f.who is not None
                ]
                if not someone_else and other is not None
                else []
            )
            read = [f for f in read if f.kind in framing.PEOPLE or f.who is not None] + theirs
            if someone_else:
                mine = _OPENS_WITH_MINE_ZH.match(bare)
                other = mine["rel"] if mine else None
            about_other = True
        else:
            about_other, other = False, None
        speaks_of_me = bool(_FIRST_PERSON_ZH.search(bare))
        allergic = any(f.kind == "allergy" and f.who is None for f in read)
        if (
            not someone_else
            and whose is not None
            and (_GOES_ON_ZH.match(bare) or (allergic and not speaks_of_me))
        ):
            # "我妈有糖尿病，在打胰岛素", "乐乐不是花生过敏，过敏原检测出来是腰果，花生没事": a
            # clause without its subject goes on with the person the clause before spoke of
            theirs = [
                f
                for f in frames_in(f"我{whose}{bare}", before, said or text, turn, people)
                if f.who
            ]
            if theirs:
                read = [f for f in read if f.kind not in cared.CARED] + theirs
        whos = {f.who for f in read if f.who}
        whose = next(iter(whos)) if len(whos) == 1 and not next(iter(whos)).isascii() else None
        if whose is None and has_han(clause) and _OPENS_WITH_MINE_ZH.match(bare):
            # "我儿子乐乐今年七岁，花生过敏": the clause is about the person it opens with, and
            # the next one without a subject goes on about them
            named = [f.value for f in read if f.kind in framing.PEOPLE and not f.negated]
            whose = named[0] if len(named) == 1 else None
        found += read
    return _theirs_throughout(text, found)


def _theirs_throughout(text: str, found: list[Frame]) -> list[Frame]:
    """``found``, with the health states of a Chinese sentence that opens with a person of the
    speaker's and never speaks of the speaker again made theirs: "我妈的药换了 上周三带她去复查
    医生说硝苯地平让她脚脖子肿 换成氨氯地平了" is the mother's switch, every clause of it."""
    bare = text.lstrip("，,；; ")
    opens = _OPENS_WITH_MINE_ZH.match(bare) or (
        _OPENS_WITH_KIN_MIXED.match(bare) if has_han(bare) else None
    )
    if opens is None or re.search(r"我(?![们家])|\b(?:I|my|me)\b", text[opens.end() :]):
        return found
    rel = opens["rel"].casefold()
    return [
        replace(f, who=rel, key=f"{rel}/{f.key or ''}")
        if f.kind in cared.CARED and f.who is None
        else f
        for f in found
    ]


#: a Chinese clause that opens with a person of the speaker's ("我儿子乐乐…", "我老公王磊…")
_OPENS_WITH_MINE_ZH: Final = re.compile(
    r"^(?:我|我的|我家)(?:的)?(?P<rel>儿子|女儿|闺女|老公|老婆|丈夫|妻子|老伴|爸爸|妈妈|爸|妈|"
    r"哥哥|姐姐|弟弟|妹妹|孩子|宝宝|爷爷|奶奶|外公|外婆)"
)
#: mixed text that opens with the speaker's person in English ("Mom 的 cardiologist 把她…")
_OPENS_WITH_KIN_MIXED: Final = re.compile(
    r"^(?:(?i:my)\s+)?(?P<rel>(?i:mom|mum|mam|dad|mother|father|husband|wife|son|daughter|"
    r"grandma|grandpa))\b"
)
#: a Chinese clause that asks the listener to do something ("你得帮我找", "帮我看下高铁票")
_ASKS_LISTENER_ZH: Final = re.compile(
    r"你(?:得|要|帮|给|能不能|可以|再)|(?:^|[^我])帮我|麻烦你|请你|给我(?:找|查|看|弄|想|排|写)"
)
#: a Chinese clause that opens with its verb or an adverb, its subject left out
_SUBJECTLESS_ZH: Final = re.compile(
    r"^(?:也|还|都|就|又|一直|每天|现在|已经|刚|正在|在|想|要|打算|准备|觉得|说|去|来|回|吃|喝|住|做|"
    # a time said first ("今年78了"), or a condition named first ("高血压好多年了")
    r"今年|去年|前年|这几年|这些年|最近|平时|从小|"
    + lexicon.chinese_words(lexicon.CONDITIONS)
    + ")"
)
#: a Chinese clause that says what someone does, without saying who ("在打胰岛素")
_GOES_ON_ZH: Final = re.compile(
    r"^(?:也|还|都|一直|每天|现在|平时|正在|在|要|得)*(?:吃|打|用|服用|戴|坐|带|做)"
)


def _mostly_chinese(text: str) -> bool:
    """Whether a sentence is said in Chinese more than in English (its characters against
    its Latin words)."""
    return han_count(text) > len(re.findall(r"[A-Za-z]+", text))


#: the longest a state is kept in the person's own words (characters); a longer clause of a
#: run-on turn ("I drink far too much tea, builder's, six cups a day, the GP said ...") is
#: said plainly, and the turn it cites keeps every word
_LONGEST_TOLD: Final = 120
#: a pronoun for a thing in a told clause: what it stands for may be outside the clause
_IT_TOLD: Final = re.compile(
    r"\b(?:stopped|quit|started|took|take|takes|switched)\s+(?:it|them)\b", re.I
)
#: the kinds whose ending is said plainly ("The user no longer takes Ventolin")
_SAID_PLAINLY_ENDED: Final = frozenset({"routine", "hobby", "drink", "medication"})
#: verbs of a change of state: the time beside one is when a state began ("moved last week")
#: a move still to come, whose date is read forward
_MOVE_TO_COME: Final = re.compile(
    r"\b(?:I|we)(?:'re| are|'m| am)\s+(?:\w+\s+)?(?:moving|relocating)\b|"
    r"下个月.{0,6}搬|要搬|准备搬",
    re.IGNORECASE,
)
_CHANGE: Final = re.compile(
    r"\b(?:moved|moving|relocated|started|starting|start|joined|joining|began|hired|promoted|"
    r"married|engaged|divorced|broke up|split|adopted|got|left|quit|retired|became|switched|"
    r"born|since|ago|last day|for (?:\w+ )?(?:years?|months?|weeks?)|new)\b|"
    r"搬|入职|加入|开始|结婚|订婚|离婚|分手|领养|养了|辞职|离职|退休|升职|出生|以来|从|了",
    re.IGNORECASE,
)


#: how far from a person's value the time of their state is looked for (characters)
_NEAR: Final = 40


def _around(sentence: str, value: str) -> str:
    """The words of ``sentence`` near ``value``: where the time of a state of one's life is
    said ("my husband Ron who has Parkinson's, he was diagnosed four years ago" dates the
    illness, not the marriage); the whole sentence when the value is not in it as said."""
    at = sentence.casefold().find(value.casefold())
    if at < 0:
        return sentence
    return sentence[max(0, at - _NEAR) : at + len(value) + _NEAR]


@lru_cache(maxsize=256)
def _when(text: str, said_at: datetime, future: bool) -> When | None:
    """The time ``text`` names, resolved against the turn's date (the first such time); the
    states of one sentence share it, so it is read once per sentence, not once per state."""
    found = timeref.mentions(text, said_at, tense="future" if future else None)
    if not found:
        return None
    chosen = _the_time(text, found)
    return When(chosen.text, chosen.start, chosen.end)


#: how long a restriction is said to hold ("for 6 weeks", "三个月别提重物")
_FOR_A_WHILE: Final = re.compile(
    r"\bfor\s+(?:the\s+next\s+)?(?P<n>\d+|a couple of|a few|[a-z]+(?:-[a-z]+)?)\s+"
    r"(?P<u>days?|weeks?|months?)\b|"
    r"(?P<zn>[一二两三四五六七八九十\d]+)(?:个)?(?P<zu>天|周|星期|礼拜|月)(?:内|之内)?(?:别|不要|不能)",
    re.IGNORECASE,
)
#: counts said in words the time grammar does not read as one
_LOOSE_COUNTS: Final = {"a couple of": 2, "a few": 3}
#: days in each unit of :data:`_FOR_A_WHILE`, by its first character
_UNIT_DAYS: Final = {"d": 1, "w": 7, "m": 30, "天": 1, "周": 7, "星": 7, "礼": 7, "月": 30}


def _for_a_while(text: str, said_at: datetime) -> When | None:
    """The span a restriction is said to hold for, from the day it was said; None when it
    names none (or a count too large to be one)."""
    match = _FOR_A_WHILE.search(text)
    if match is None:
        return None
    if match["n"]:
        said = match["n"].casefold()
        count = _LOOSE_COUNTS.get(said) or english_number(said)
    else:
        count = chinese_number(match["zn"])
    if not count or count > 104:
        return None
    days = _UNIT_DAYS[(match["u"] or match["zu"]).casefold()[0]] * count
    start = said_at.replace(hour=0, minute=0, second=0, microsecond=0)
    words = re.sub(r"(?:内|之内)?(?:别|不要|不能)$", "", match[0])
    return When(words, start, start + timedelta(days=days + 1))


def _the_time(text: str, found: Sequence[timeref.TimeMention]) -> timeref.TimeMention:
    """Which of a clause's times dates it: the one a change puts it at ("下周出差 改到4月9号",
    "moved to the 24th"); else the first, said more precisely when a later time lies inside it
    ("下下周小雯生日 三月十号": the day, not its week)."""
    for mention in found:
        if direct_future(text, mention.span[0]):
            return mention
    first = found[0]
    inside = [
        m
        for m in found[1:]
        if first.start <= m.start
        and m.end <= first.end
        and m.end - m.start < first.end - first.start
    ]
    return min(inside, key=lambda m: m.end - m.start) if inside else first


def _frame_candidates(
    found: Sequence[Frame],
    sentence: str,
    episode: Episode,
    subject: str,
    listeners: Collection[str],
    *,
    whole_told: bool = True,
) -> list[Candidate]:
    """One candidate per state, in the person's words (the sentence, or its clause that says
    the state, in the third person) when they stand alone and say it; else a plain statement
    of the state. A sentence that names the speaker ("I'm Lin Wei, a product manager at
    Tencent") is said plainly, state by state, never as "Lin Wei is Lin Wei, ..."; a name that
    is the speaker's own is no fact. ``whole_told``: False when another clause of the sentence
    says something else, so each state is told in its own clause."""
    parts = self_contained(sentence, {n for n in listeners if n})
    whole = parts[0] if len(parts) == 1 else None
    if any(f.kind == "name" for f in found):
        whole = None
    # a state said twice in one sentence is one state (a run-on paste repeats itself)
    found = list(dict.fromkeys(f for f in found if not (f.kind == "name" and f.value == subject)))
    chinese = _mostly_chinese(sentence)
    parts_of_sentence = _parts_of(sentence)
    out = []
    # each clause says one state, the one whose words cover most of it ("I love hiking with my
    # dog Quillon": the liking, not the dog); another state said there is said plainly
    clause_of: dict[int, str | None] = {}
    taken: set[str] = set()
    clauses = _Clauses(whole, alone=len(found) == 1 and whole_told) if whole else None
    for i in sorted(range(len(found)), key=lambda i: -len(found[i].value)):
        said = clauses.holding(found[i].value) if clauses else None
        clause_of[i] = None if said in taken else said
        if said is not None:
            taken.add(said)
    for i, frame in enumerate(found):
        said = clause_of[i]
        # an activity, a drink or a medicine given up is said plainly, with its "no longer":
        # the person's own words ("had to give up the Oxfam Saturdays") read as a state
        plain = frame.negated and frame.kind in _SAID_PLAINLY_ENDED
        plain = plain or frame.who is not None or frame.plain  # whose need: said at its head
        text = _told(said, subject) if said and not plain else None
        if text is not None and len(text) > _LONGEST_TOLD:
            text = None  # a run-on clause is no line to scan: the state said plainly
        if text is not None and _IT_TOLD.search(text):
            text = None  # "… stopped it and now takes Jardiance": "it" needs the clause before
        if text is None or assess(text, subject).any:
            text = statement(frame, subject, chinese=chinese)
        if assess(text, subject).any:
            continue  # a fact must stand on its own: the turn stays in the archive
        # the time of a state is said in its clause (or a short one before it: "Last week, I
        # moved"), not anywhere in the sentence ("我老婆怀孕了，预产期是六月，她对芒果过敏")
        # a home moved to on a date said to come ("we're moving to Boulder in June")
        future = frame.kind in _TENSE_FUTURE or (
            frame.kind == "residence" and bool(_MOVE_TO_COME.search(sentence))
        )
        clause = _clause_of(sentence, parts_of_sentence, frame.value)
        when = _when(clause, episode.time, future)
        if when is None:
            clause = _without_others_dates(sentence)  # said beside it ("分手了 上周的事")
            when = _when(clause, episode.time, future)
        near = clause
        if frame.spec.section == framing.PROFILE:  # the time beside the value, not elsewhere
            near = _around(clause, frame.value)
            when = _when(near, episode.time, future) if near != clause else when
        if when is not None and frame.spec.section == framing.PROFILE and not _CHANGE.search(near):
            when = None  # "my boyfriend says I'm crazy for running in january": not his date
        if frame.kind == "restriction" and (lasts := _for_a_while(sentence, episode.time)):
            when = lasts  # "no running for 6 weeks": from the day said, for six weeks
        spec = frame.spec
        out.append(
            Candidate(
                text=text,
                category=spec.category,
                confidence=FRAME_CONFIDENCE,
                importance=framing.importance(frame, sentence),
                sources=(episode.id,),
                subject=subject,
                rule=f"frame:{frame.kind}",
                slot=frame.slot,
                value=frame.value,
                ended=frame.ended,
                exclusive=frame.exclusive,
                when=when,
            )
        )
    return out


#: where a long sentence breaks into clauses (", but", "; ", " - ", ", and I", " because")
_CLAUSES: Final = re.compile(
    r"\s*[;；]\s*|\s+[-–—]+\s+|,?\s+(?=(?:but|because|'cause|cause|so|since|while|although|"
    r"though|and (?:I|I'm|I've|my|we|then|it|that|this))\b)|"
    r"[，,]\s*(?=(?:但|但是|不过|因为|所以|而且|然后|可是|结果|医生|后来))|"
    rf"{HAN_SPACE}"
)
#: where a sentence that states several states breaks: its clauses, commas included
_SEVERAL: Final = re.compile(rf"{_CLAUSES.pattern}|\s*[，,]\s*|{HAN_SPACE}")
#: words (or Chinese characters) past which a sentence is long: one clause of it is the fact
LONG_SENTENCE: Final = 18


class _Clauses:
    """The parts of one sentence a state may be told in, split once for all its states: the
    whole sentence when it is short and states only one thing (``alone``), else its clauses
    that speak of their speaker (a run-on turn of thousands of clauses is read once, not once
    per state)."""

    def __init__(self, sentence: str, *, alone: bool) -> None:
        size = len(re.findall(r"[A-Za-z0-9']+", sentence)) + han_count(sentence) // 2
        self.parts: list[tuple[str, str]] = []  # (clause, its casefold)
        if size <= LONG_SENTENCE and alone:
            self.parts.append((sentence, sentence.casefold()))
            return
        for clause in (_SEVERAL if not alone else _CLAUSES).split(sentence):
            clause = _FOR_A_REASON.sub(
                "", re.sub(r"^(?:and|but|so|then|also)\s+", "", clause.strip(" ,，"), flags=re.I)
            )
            if _first_person(clause):
                self.parts.append((clause, clause.casefold()))

    def holding(self, value: str) -> str | None:
        """The first part that says every word of ``value`` (every character, in Chinese)."""
        words = _words_of(value)
        for clause, folded in self.parts:
            if all(w in folded for w in words) and not _ADVISED.search(
                folded[: folded.find(words[0])] if words else ""
            ):
                return clause
        return None


#: someone else's advice to the speaker, right before what it names ("闺女让我喝菊花茶"): a
#: clause that does not tell the speaker's own state
_ADVISED: Final = re.compile(r"(?:让|叫|劝|建议|要求)我\S{0,2}$")


#: what a clause gives the date of when it dates something else: its time dates no state
#: beside it ("预产期是六月", "her birthday is in May")
_OTHERS_DATE: Final = re.compile(
    r"预产期|生日|截止|纪念日|周年|due date|birthday|deadline|anniversary", re.IGNORECASE
)


def _without_others_dates(sentence: str) -> str:
    """``sentence`` without its clauses that date something else (one pass: linear)."""
    if not _OTHERS_DATE.search(sentence):
        return sentence
    parts = re.split(r"(?<=[，,。；;])", sentence)
    return "".join(p for p in parts if not _OTHERS_DATE.search(p))


def _parts_of(sentence: str) -> list[str]:
    """The clauses of a sentence, commas included: split once for all its states."""
    return [p for p in _SEVERAL.split(sentence) if p and p.strip(" ,，")]


#: the longest clause before a state's that may be its time said first ("Last Friday", "上周五")
_LEAD_CLAUSE: Final = 14


def _clause_of(sentence: str, parts: Sequence[str], value: str) -> str:
    """The clause of ``sentence`` (split into ``parts`` by :func:`_parts_of`) that says
    ``value``, with the clause before it when that is short (a time said first); the whole
    sentence when no one clause says it."""
    if len(parts) <= 1:
        return sentence
    words = _words_of(value)
    for i, part in enumerate(parts):
        folded = part.casefold()
        if words and all(w in folded for w in words):
            lead = parts[i - 1] if i > 0 and _only_a_time(parts[i - 1]) else ""
            return f"{lead}, {part}" if lead else part
    return sentence


#: what may stand beside a time said first ("On Friday", "就在上周五")
_TIME_LEAD_WORDS: Final = re.compile(
    r"\b(?:on|in|at|last|this|back|so|and|but)\b|[在就那是，,\s]", re.I
)


def _only_a_time(clause: str) -> bool:
    """Whether a short clause says a time and nothing else ("Last Friday", "上周五"): one
    that says something of its own ("预产期是六月") dates that, not the next clause."""
    text = clause.strip()
    if len(text) > _LEAD_CLAUSE:
        return False
    found = timeref.mentions(text, _ANY_DAY)
    if not found:
        return False
    rest = text
    for mention in reversed(found):
        rest = rest[: mention.span[0]] + rest[mention.span[1] :]
    return not _TIME_LEAD_WORDS.sub("", rest).strip()


#: a day to read a clause's time words against: only where they stand is asked
_ANY_DAY: Final = datetime(2026, 1, 1, tzinfo=UTC)


#: a clause that opens on what the clause before named ("and this series…", "那个…")
_POINTS_BACK: Final = re.compile(
    r"^(?:(?:and|but|so|also|plus)\s+)?(?:this|that|these|those|it|they|there)\b|^(?:这|那|它)",
    re.IGNORECASE,
)


def _unread_clauses(sentence: str, found: Sequence[Frame], listeners: Collection[str]) -> list[str]:
    """The clauses of a sentence that states were read from that hold none of them, each as
    it can stand alone (:func:`self_contained`); none when the sentence is one clause."""
    clauses = [c.strip(" ,，") for c in _CLAUSES.split(sentence)]
    clauses = [c for c in clauses if c]
    if len(clauses) <= 1:
        return []
    values = [_words_of(f.value) for f in found]
    out: list[str] = []
    for clause in clauses:
        folded = clause.casefold()
        if any(words and all(w in folded for w in words) for words in values):
            continue
        if _POINTS_BACK.match(clause):
            continue  # "and this series is one of my favorites": about the clause before
        if _LEANS_ON.match(clause):
            continue  # "since I lost my job": a time or a condition of the clause before
        clause = _FOR_A_REASON.sub("", clause)  # "'cause I'm passionate about dancing"
        out += self_contained(clause, {n for n in listeners if n})
    return out


#: a clause that only says when, or on what condition, the clause before holds
_LEANS_ON: Final = re.compile(
    r"^(?:since|when|whenever|after|before|while|until|till|although|though|once|as soon as|"
    r"unless)\b",
    re.IGNORECASE,
)
#: the word that gives a clause as a reason: what follows it stands as said
_FOR_A_REASON: Final = re.compile(r"^(?:'cause|cause|because|coz|cos)\s+", re.IGNORECASE)


def _words_of(value: str) -> list[str]:
    return re.findall(rf"[a-z0-9']+|[{HAN}]", value.casefold())


def _told(part: str, subject: str) -> str | None:
    """``part`` in the third person, when it names who it is about: a first person rewritten,
    a Chinese clause with its subject left out given the subject, else None."""
    if _first_person(part):
        return third_person(part, subject)
    if has_han(part) and not re.match(r"[A-Za-z]", part):
        if re.match(r"是", part):
            return None  # "宝宝出生啦！是个女儿": the baby is the girl, not the user
        who = "用户" if subject == DEFAULT_SUBJECT else subject
        return who + part
    if match := re.match(r"(?:The|Our|My)\s+", part):
        return f"{subject}'s {part[match.end() :]}"
    return None


#: the importance of a health matter kept whole: a safety fact's, ahead of every other kind
_HEALTH_SAID_IMPORTANCE: Final = 0.9
#: a sentence about someone the speaker does not look after ("my colleague had surgery"):
#: their health is not a need of this household
_NOT_THEIRS_EN: Final = re.compile(
    r"\b(?:my |our |a )?(?:friend|friend's|colleague|coworker|co-worker|boss|manager|"
    r"neighbou?r|roommate|flatmate|classmate|teammate|client|patient|student)s?\b",
    re.IGNORECASE,
)
_NOT_THEIRS_ZH: Final = re.compile(r"朋友|同事|老板|领导|邻居|室友|同学|客户|病人|学生|队友")


#: the speaker's household said without a first person: a parent by the word a child calls
#: them ("Mum 最近 memory 好差"), or "we" and "our" of a home or a family ("We keep kosher at
#: home", "our son has reflux")
_HOUSEHOLD_EN: Final = re.compile(
    r"\b(?:mum|mom|mummy|mommy|dad|daddy|grandma|grandpa|granny|nana)\b|"
    r"\b(?:we|our)\b[^.!?]{0,80}?\b(?:at home|in our (?:house|home|family)|family|household)\b|"
    r"\bour\s+(?:baby|son|daughter|kids?|children|boy|girl|family|household)\b",
    re.IGNORECASE,
)


#: a clause that opens with its verb, its subject left out ("can't go near it", "still
#: can't eat shellfish", "always carry my inhaler")
_VERB_FIRST_EN: Final = re.compile(
    r"(?:^|[,;:.!–—-]\s*)(?:(?:still|also|just|now|always|never|obviously|btw|so)\s+)*"
    r"(?:can't|cannot|can not|don't|won't|shouldn't|mustn't|never|can|must|have to|need to)\b",
    re.IGNORECASE,
)


#: a sentence that opens with someone other than the speaker ("My sister called.", "Tom's
#: back from hospital"): a fragment after it may go on about them
_OTHER_OPENS_EN: Final = re.compile(
    r"\s*(?:(?:my|our)\s+(?!own\b)[a-z]+|(?-i:[A-Z][a-z]+)(?:'s)?\s|he\b|she\b|they\b)",
    re.IGNORECASE,
)


def _subjectless_en(text: str) -> bool:
    """Whether ``text`` is an English chat fragment with its subject, the speaker, left out
    ("Pregnant! 12 weeks today.", "Still on the sertraline, 50mg.", "Penicillin - can't go
    near it."): no clause names a subject and a verb for it; a sentence with a subject of
    its own ("Penicillin is great for infections") is none."""
    if has_han(text) or not re.search(r"[A-Za-z]", text):
        return False
    if _VERB_FIRST_EN.search(text):
        return not re.search(
            r"\b(?:he|she|they|it|we|you)\s+(?:can't|cannot|don't|won't)\b", text, re.I
        )
    return verbless(text)


#: what links a sentence to the one before, at its start: no part of a note
_OPENER: Final = re.compile(
    r"^(?:(?:and|also|plus|oh and|oh|btw|anyway|anyways|ok so|okay so|"
    r"(?:and |oh and )?one more(?: \w+)? thing|another thing)\b[\s,:]*)+(?=\w)",
    re.IGNORECASE,
)
#: the fewest words (an English word, a Chinese character) a note says: fewer name a matter
#: and say nothing of it ("allergy update!!")
_FEWEST_WORDS: Final = 3


def _health_said(
    sentence: str,
    episode: Episode,
    subject: str,
    known: Mapping[str, str],
    read: Sequence[str] = (),
    *,
    before: str = "",
) -> Candidate | None:
    """The sentence kept as a health fact (:mod:`memstrata.curate.safety_net`) when it names
    a health matter of the speaker or of someone they look after (a first person, a Chinese
    clause without another subject, or a person they have named), said as so: no question
    (``sentence`` is what it states, :func:`_stated`), no hypothetical, no request to the
    listener. The person's own words: the whole sentence
    when short, else its clause that names the matter (with the next one, where a doctor's
    words go on: "医生说半月板有点磨损 叫我别蹦别爬山"); a first person in the third person,
    anyone else as said. ``read``: the values of the health states read from the sentence: a
    clause that holds one is no note, and a sentence whose every health clause does gives
    none."""
    text = restore_subject(strip_markers(sentence))
    if not text or _HYPOTHETICAL.search(text):
        return None
    if health_matter(text) is None:
        return None
    if _NOT_THEIRS_EN.search(text) or _NOT_THEIRS_ZH.search(text):
        return None
    own = _first_person(text)
    home = _HOUSEHOLD_EN.search(text) is not None  # "We keep kosher at home", "Mum 最近..."
    named = any(name and re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text) for name in known)
    bare = _subjectless_en(text) and not _OTHER_OPENS_EN.match(before)
    if not (own or home or named or bare or (has_han(text) and not re.match(r"[A-Za-z]", text))):
        return None
    said = _note_of(text, read)
    if said is None:
        return None
    said = _OPENER.sub("", said)  # "And my GP switched my inhaler": the note, not its link
    if len(re.findall(rf"[A-Za-z']+|[{HAN}]", said)) < _FEWEST_WORDS:
        return None  # "allergy update!!": a matter named, nothing said of it
    told = third_person(said, subject) if own and _first_person(said) else said
    flaws = assess(told, subject)
    if flaws.listener or flaws.question:
        return None  # "你帮我给老周写个用药的单子": a request, not a state
    return Candidate(
        text=told,
        category=Category.HEALTH,
        confidence=FRAME_CONFIDENCE,
        importance=_HEALTH_SAID_IMPORTANCE,
        sources=(episode.id,),
        subject=subject,
        rule="health-said",
        when=_when(said, episode.time, False),
    )


def _health_kept(kept: Candidate, made: list[Candidate]) -> list[Candidate]:
    """``made`` with the health note ``kept`` said once: a health state that already says it
    says it; a plain event or statement that says it ("I had knee surgery in June", "我去年做
    了心脏支架手术", "医生说我有轻度抑郁") is that note, a health fact with the note's
    importance, for its words name a health matter a session must be handed; else (said by
    no line, or only by a state of another kind, "用户女儿 peanut allergy，学校要备 EpiPen" as
    the daughter named) the note is added."""
    says = [kept.text.casefold() in c.text.casefold() for c in made]
    if not any(
        holds and (c.slot is None or c.category == Category.HEALTH)
        for c, holds in zip(made, says, strict=True)
    ):
        return [*made, kept]
    return [
        replace(
            c,
            category=Category.HEALTH,
            importance=max(c.importance, kept.importance),
            rule=kept.rule,
        )
        if holds and c.slot is None and c.category != Category.HEALTH
        else c
        for c, holds in zip(made, says, strict=True)
    ]


#: a Chinese clause that asks ("制氧机能不能带上飞机嘛", "是不是要停药"): no note of its own
_ASKS_ZH: Final = re.compile(r"([能可要会是])不\1|[吗嘛呢][~～]*$")
#: a clause that asks something of the listener ("帮我想想行程", "can you add it to his list")
_REQUEST: Final = re.compile(
    r"^(?:帮我|你帮我|麻烦你?|请你?帮)|\b(?:can|could|would|will) you\b|^please\b", re.IGNORECASE
)
#: the health matters that are a detail of a state read beside them (a dose, an allergy's
#: test or its EpiPen, an intolerance, a diagnosis), not a matter of their own
_DETAILS: Final = frozenset({"medicine", "allergy", "intolerance", "diagnosis"})
#: the share of a clause's words a state read from the sentence must say for the clause to be
#: read already
_HELD_SHARE: Final = 0.7
#: the longest note, in characters: Chinese says in one character what English says in a word
_LONGEST_NOTE: Final = {"en": 160, "zh": 40}


def _note_of(text: str, read: Sequence[str] = ()) -> str | None:
    """What a health note keeps of ``text``: the whole of it when it is short, else the
    clause that names the health matter and asks nothing (with the next one, where a doctor's
    words go on), and one clause beside it that asks nothing of the listener while the note
    stays short (the one before, which names whose it is, else the one after); None when
    every clause that names it asks."""
    longest = _LONGEST_NOTE["zh" if _mostly_chinese(text) else "en"]
    parts = _parts_of(text)
    spans: list[tuple[int, int]] = []
    start = 0
    for part in parts:
        at = text.find(part, start)
        at = start if at < 0 else at
        spans.append((at, at + len(part)))
        start = at + len(part)
    asks = [  # a clause that asks, or speaks to the listener ("I told you"), is left out
        bool(_ASKS_ZH.search(p.strip(" ，,")) or _REQUEST.search(p.strip(" ，,")))
        or is_question(p)
        or addresses_listener(p)
        for p in parts
    ]
    held = [v.casefold() for v in read if v]
    told = [terms(v) for v in held]

    def read_already(part: str) -> bool:  # a state read from it says it, or its words
        words = terms(part)
        return any(v in part.casefold() for v in held) or any(
            words and len(words & t) >= _HELD_SHARE * len(words) for t in told
        )

    covered = [read_already(p) for p in parts]

    matters = [health_matter(p) for p in parts]  # each clause's health matter, read once
    # beside a state read from the sentence, a dose, a test or an EpiPen is that state's
    # detail ("… losartan, 5mg"); a thing named, a doctor's words or care are their own
    named = [
        i
        for i, m in enumerate(matters)
        if m is not None and not asks[i] and not covered[i] and (not held or m not in _DETAILS)
    ]
    if not named:
        return None if any(asks) or held or not parts else text
    if len(text) <= longest and not any(asks) and not held:
        return text
    first = last = named[0]
    if matters[first] == "said" and last + 1 < len(parts) and not asks[last + 1]:
        last += 1  # what the doctor said goes on in the next clause
    for i in (first - 1, last + 1):  # one clause more: the one before, else the one after
        if not 0 <= i < len(parts) or asks[i] or covered[i]:
            continue
        lo, hi = min(first, i), max(last, i)
        if spans[hi][1] - spans[lo][0] <= longest:
            first, last = lo, hi
            break
    return text[spans[first][0] : spans[last][1]].strip(" ,，;；")


def _candidate(rule: Rule, sentence: str, episode: Episode, subject: str) -> Candidate:
    passing = rule.category in (Category.PLAN, Category.EVENT) and framing.passing(sentence)
    return Candidate(
        text=third_person(sentence, subject),
        category=rule.category,
        confidence=rule.confidence,
        importance=framing.PASSING_IMPORTANCE if passing else rule.importance,
        sources=(episode.id,),
        subject=subject,
        rule=rule.name,
        when=_when(sentence, episode.time, rule.category == Category.PLAN),
    )


def _previous_turns(
    episodes: Sequence[Episode], read: Sequence[str], index: int
) -> list[tuple[str, bool]]:
    """The speaker's previous turn and the listener's, in the same session, nearest first,
    each as ``(text as read, spoken by the same speaker)``; ``read``: each turn's text as the
    rules read it."""
    episode = episodes[index]
    out: list[tuple[str, bool]] = []
    seen_other = False
    for at in range(index - 1, max(0, index - 2) - 1, -1):
        before = episodes[at]
        if before.session_id != episode.session_id:
            break
        own = before.speaker == episode.speaker
        if not own and seen_other:
            break
        seen_other = seen_other or not own
        out.append((read[at], own))
    return out
