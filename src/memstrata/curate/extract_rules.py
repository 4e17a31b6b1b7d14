"""The offline extractor: patterns over first-person sentences, in English and Chinese.

Each turn is split into sentences (never inside one); a sentence's "we" is resolved from the
turn and the turns before it when they name exactly one companion of the speaker
(:mod:`memstrata.curate.referents`); each sentence is cut into the runs of clauses that stand
alone (:mod:`memstrata.curate.discourse`: no reaction, question, listener or
unresolved referent). A run that speaks about its speaker ("I ...", "my ...", "我...") and
matches a pattern becomes a candidate fact of that pattern's category, rewritten in the third
person (:mod:`memstrata.curate.person`: "I love my dog" -> "Melanie loves their dog"). Very
short runs are skipped. What
the patterns cannot judge (truth, importance beyond the category) is left to the guards and,
when configured, to an LLM extractor.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from memstrata.curate.discourse import self_contained
from memstrata.curate.person import DEFAULT_SUBJECT, third_person
from memstrata.curate.referents import companion_in, resolve_we
from memstrata.model import Candidate, Category, Episode, Extraction

__all__ = ["RULES", "Rule", "RuleExtractor", "sentences", "third_person"]

_SENTENCE_RE: Final = re.compile(r"[^.!?。！？；;\n]+(?:[.!?。！？；;]+|$)")
_FIRST_PERSON_EN: Final = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|my|My|me|mine|myself)\b")
_FIRST_PERSON_ZH: Final = re.compile(r"我(?!们)")


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
        0.7,
        _en(
            r"\bI (?:really )?(?:hate|dislike|can't stand|cannot stand|don't like|do not like|"
            r"don't enjoy)\b|我(?:很|非常|特别)?(?:不喜欢|讨厌|受不了|不爱)"
        ),
    ),
    Rule(
        "preference",
        Category.PREFERENCE,
        0.8,
        0.7,
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
        0.7,
        _en(
            r"\b(?:I|we) (?:have |'ve )?(?:decided|chose|chosen|picked|settled on)\b|\bI(?:'m| am) "
            r"going with\b|(?:我|我们)(?:已经)?(?:决定|选择了|定了)"
        ),
    ),
    Rule(
        "plan",
        Category.PLAN,
        0.7,
        0.6,
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
        0.5,
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
        0.5,
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
        0.6,
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
        0.5,
        _en(
            r"\b(?:our|my) (?:team|family|kids|community|group|band|club|company|class|"
            r"friends|partner|parents)\b|我们(?:团队|家|公司|班|小组)"
        ),
    ),
    Rule(
        "attribute",
        Category.PERSONAL,
        0.85,
        0.5,
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
        0.6,
        _en(
            r"\bmy (?:kids?|son|daughter|husband|wife|partner|family|mom|dad|mother|father|"
            r"brother|sister|friends?|dog|cat|pet|home|house)\b|\bI have (?:a|an|two|three|\d+) |"
            r"我(?:的)?(?:孩子|儿子|女儿|丈夫|妻子|老公|老婆|家人|父母|妈妈|爸爸|狗|猫|宠物|家)|我有"
        ),
    ),
)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_RE.findall(text) if s.strip()]


def _worth_it(sentence: str) -> bool:
    cjk = sum(1 for ch in sentence if "\u4e00" <= ch <= "\u9fff")
    words = len(re.findall(r"[A-Za-z0-9']+", sentence))
    return words >= 3 or cjk >= 4


class RuleExtractor:
    """:class:`memstrata.ports.Extractor` by patterns; offline, English and Chinese."""

    def __init__(self, rules: Sequence[Rule] = RULES) -> None:
        self.rules = tuple(rules)

    @property
    def name(self) -> str:
        return "rules"

    def extract(self, episodes: Sequence[Episode]) -> Extraction:
        candidates: list[Candidate] = []
        speakers = {e.speaker for e in episodes if e.speaker not in (None, "user", "assistant")}
        for index, episode in enumerate(episodes):
            if episode.speaker == "assistant":
                continue  # what the assistant said is not a fact about the user
            name = episode.speaker if episode.speaker in speakers else None
            subject = name or DEFAULT_SUBJECT
            listeners = speakers - {episode.speaker}
            earlier = _previous_turns(episodes, index)
            said = sentences(episode.text)
            for position, text in enumerate(said):
                context = [(s, True) for s in reversed(said[:position])] + earlier
                resolved = resolve_we(text, companion_in(context))
                for part in self_contained(resolved, listeners):
                    rule = self._rule_for(part)
                    if rule is not None:
                        candidates.append(_candidate(rule, part, episode, subject))
        return Extraction(tuple(candidates))

    def _rule_for(self, sentence: str) -> Rule | None:
        if not _worth_it(sentence):
            return None
        if not (_FIRST_PERSON_EN.search(sentence) or _FIRST_PERSON_ZH.search(sentence)):
            return None
        return next((r for r in self.rules if r.pattern.search(sentence)), None)


def _candidate(rule: Rule, sentence: str, episode: Episode, subject: str) -> Candidate:
    return Candidate(
        text=third_person(sentence, subject),
        category=rule.category,
        confidence=rule.confidence,
        importance=rule.importance,
        sources=(episode.id,),
        subject=subject,
        rule=rule.name,
    )


def _previous_turns(episodes: Sequence[Episode], index: int) -> list[tuple[str, bool]]:
    """The speaker's previous turn and the listener's, in the same session, nearest first,
    each as ``(text, spoken by the same speaker)``."""
    episode = episodes[index]
    out: list[tuple[str, bool]] = []
    seen_other = False
    for before in reversed(episodes[max(0, index - 2) : index]):
        if before.session_id != episode.session_id:
            break
        own = before.speaker == episode.speaker
        if not own and seen_other:
            break
        seen_other = seen_other or not own
        out.append((before.text, own))
    return out
