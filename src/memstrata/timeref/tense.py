"""Whether the words around a time expression speak of the past or of the future.

A bare "on Friday", "in May" or "十月" names a past or a coming occurrence depending on the
sentence: "we went to Kyoto in October" and "我们打算十月去京都". :func:`infer` reads the
markers of the clause holding the expression (then of its sentence):

- a plan's verb right before it ("postponed to", "moved to", "改到", "推迟到") makes it future;
- otherwise the nearest tense marker: English past forms, "ago", "did", a perfect, Chinese
  了/过/已经 for the past; "will", "going to", "plan", the present ("is", "I'm free", "ends",
  "starts": a bare day in the present tense is the coming one), 打算/计划/准备/要/将/会/必须 for
  the future. An English expression looks
  for its verb before it first, a Chinese one after it first (the time comes before the verb
  in Chinese: "十月去了京都").

Nothing is inferred when the clause and the sentence have no marker.
"""

from __future__ import annotations

import bisect
import re
from typing import Final

from memstrata.timeref.periods import Tense
from memstrata.util.scripts import HAN_RE, HAN_SPACE, han_count

_WINDOW: Final = 240
"""How far from the expression a clause or sentence is looked for (keeps a long text linear)."""

_SENTENCE_BREAK: Final = re.compile(r"[.!?。！？;；\n]")
_CLAUSE_BREAK: Final = re.compile(
    r"[.!?。！？;；\n,，、:：]|(?<![A-Za-z])(?:but|and|so|because|while|although|though|whereas)"
    r"(?![A-Za-z])|但是|可是|然后|所以|因为|不过|"
    rf"{HAN_SPACE}"  # a chat's pause: "房子定了 三月底交房"
)

_IRREGULAR_PAST: Final = (
    "went|was|were|had|did|saw|met|came|got|took|made|said|told|bought|left|ate|gave|found|"
    "thought|flew|drove|ran|began|became|brought|felt|kept|lost|paid|sent|sat|spent|stood|won|"
    "wrote|spoke|sold|taught|caught|fell|forgot|knew|heard|held|led|meant|rode|rang|sang|swam|"
    "threw|understood|woke|wore|broke|chose|drew|drank|grew|hid|slept|built|dealt|fought|"
    "froze|shook|stole|struck|swore|tore|wept|withdrew|overslept|quit"
)
_EN_FUTURE: Final = (
    r"will|shall|won'?t|won’t|gonna|going to|plan(?:s|ning|ned)?|intend(?:s|ing)?|"
    r"hop(?:e|es|ing) to|wants? to|wanna|would like|about to|looking forward|"
    r"can'?t wait|can’t wait|let'?s|let’s|need to|have to|has to|must|should|upcoming|"
    r"scheduled|booked|arranged|reserved|(?<!was )(?<!were )due|deadline|expect(?:s|ing)?|"
    r"postponed|delayed|rescheduled|starting|beginning|appt|appointment|"
    r"starts|begins|ends|opens|closes|expires|arrives|departs|leaves|am|is|are"
)
_EN_FUTURE_CONTRACTED: Final = r"['’](?:ll|d like|m|re)"
_PARTICIPLE: Final = r"(?: \w+)? (?:been|\w+ed|\w+en|gone|done|seen|had|met|got|made|known)"
_EN_PAST: Final = (
    rf"ago|didn'?t|didn’t|wasn'?t|wasn’t|weren'?t|weren’t|hadn'?t|hadn’t|used to|yesterday|"
    # "last" of a time gone by ("last week I …"), not the last of a series ("my last day is
    # the 15th", "last shift 是 12月20")
    rf"last(?!\s+(?:day|days|shift|shifts|one|few|minute|chance|stop|call|step|round|name|"
    rf"exam|class|lesson|session|appointment|dose|payment|train|bus|flight)\b)|"
    rf"(?:have|has|haven'?t|hasn'?t){_PARTICIPLE}|{_IRREGULAR_PAST}|[a-z]{{2,}}ed"
)
_EN_PAST_CONTRACTED: Final = rf"['’]ve{_PARTICIPLE}"
_NOT_PAST: Final = frozenset(
    (
        *("excited", "interested", "tired", "bored", "scared", "worried", "supposed", "need"),
        *("needed", "feed", "seed", "speed", "indeed", "bed", "red", "shed", "hundred"),
        *("concerned", "based", "wed", "sled", "proceed", "exceed", "succeed", "breed", "bleed"),
        *("creed", "greed", "weed", "deed", "reed", "married", "engaged", "pleased"),
        *("surprised", "amazed", "obsessed", "stressed"),
    )
)
"""Words ending in -ed that are not a past tense (adjectives, nouns)."""
_ZH_FUTURE: Final = (
    r"打算|计划|准备|将要|即将|快要|就要|希望|争取|预计|下次|必须|务必|不成(?=了)|"
    r"(?<![重主只需不])要(?![求是紧])|(?<![开机社学一宴聚约晚])会(?![议员场])|"
    r"(?<![思理感])想(?!念)|将(?!军)"
)
_ZH_PAST: Final = (
    r"已经|曾经|刚才|刚刚|上次|当时|那时|那会儿|曾|刚|"
    r"(?<![为除罢不得])了(?!解|不起)|(?<![不难超通经路])过(?![年节来日生去])"
)
_MARKERS: Final = re.compile(
    rf"(?P<future>(?<![A-Za-z'’])(?:{_EN_FUTURE})(?![A-Za-z])|{_EN_FUTURE_CONTRACTED}(?![A-Za-z])"
    rf"|{_ZH_FUTURE})"
    rf"|(?P<past>(?<![A-Za-z'’])(?:{_EN_PAST})(?![A-Za-z])|{_EN_PAST_CONTRACTED}(?![A-Za-z])"
    rf"|{_ZH_PAST})",
    re.IGNORECASE,
)
_DIRECT_FUTURE: Final = re.compile(
    r"(?:(?<![A-Za-z])(?:postponed|delayed|pushed(?: back)?|moved|rescheduled|changed|put off|"
    r"bumped|shifted|brought forward|scheduled|planned|booked|set|slated)(?: (?:it|this|that))?"
    r" (?:to|until|till|for)(?: the)? ?"
    r"|(?:改到|改在|改成|推迟到|推迟至|推到|延期到|延期至|延到|延至|挪到|定在|定到|安排在|约在|约到)了?\s*)$",
    re.IGNORECASE,
)


class Reader:
    """The clauses, sentences and tense markers of one text, each found in one pass when
    first asked for, so that reading the tense around every expression stays linear."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._breaks: dict[re.Pattern[str], tuple[list[int], list[int]]] = {}
        self._marker_starts: list[int] = []
        self._marker_list: list[tuple[int, int, Tense]] | None = None

    def _bounds(self, start: int, end: int, pattern: re.Pattern[str]) -> tuple[int, int]:
        if pattern not in self._breaks:
            spans = [m.span() for m in pattern.finditer(self.text)]
            self._breaks[pattern] = ([s for s, _ in spans], [e for _, e in spans])
        starts, ends = self._breaks[pattern]
        i = bisect.bisect_right(ends, start)  # breaks that end by start
        a = ends[i - 1] if i else 0
        j = bisect.bisect_left(starts, end)  # the first break from end on
        b = starts[j] if j < len(starts) else len(self.text)
        return max(a, start - _WINDOW), min(b, end + _WINDOW)

    def clause(self, start: int, end: int) -> tuple[int, int]:
        """The clause holding ``text[start:end]``: between commas, conjunctions and stops."""
        return self._bounds(start, end, _CLAUSE_BREAK)

    def sentence(self, start: int, end: int) -> tuple[int, int]:
        return self._bounds(start, end, _SENTENCE_BREAK)

    def markers(self, a: int, b: int, start: int, end: int) -> list[tuple[int, Tense]]:
        """The tense markers in ``text[a:b]`` outside ``text[start:end]``, in order."""
        if self._marker_list is None:
            found: list[tuple[int, int, Tense]] = []
            for m in _MARKERS.finditer(self.text):
                if m.group("future"):
                    found.append((m.start(), m.end(), "future"))
                elif m.group().lower() not in _NOT_PAST:
                    found.append((m.start(), m.end(), "past"))
            self._marker_list = found
            self._marker_starts = [f[0] for f in found]
        starts, found_all = self._marker_starts, self._marker_list
        out: list[tuple[int, Tense]] = []
        for i in range(bisect.bisect_left(starts, a), bisect.bisect_left(starts, b)):
            m_start, m_end, which = found_all[i]
            if m_end <= b and not (m_start < end and start < m_end):
                out.append((m_start, which))
        return out

    def infer(self, start: int, end: int) -> Tense | None:
        """The tense of the clause (else the sentence) holding ``text[start:end]``, or None."""
        if direct_future(self.text, start) or _progressive_before(self.text, start):
            return "future"
        after_first = HAN_RE.search(self.text, start, end) is not None
        for a, b in (self.clause(start, end), self.sentence(start, end)):
            found = self.markers(a, b, start, end)
            if found:
                return _nearest(found, start, end, after_first)
            if after_first and _own_predicate(self.text, a, b, start, end):
                return None  # "房子定了 三月底交房": its clause says its own, the nearest one
        return None


def _own_predicate(text: str, a: int, b: int, start: int, end: int) -> bool:
    """Whether the Chinese clause ``text[a:b]`` says something of its own beside the time in
    it (two characters or more): the tense of other clauses is not its."""
    rest = text[a:start] + text[end:b]
    return han_count(rest) >= 2


def _nearest(found: list[tuple[int, Tense]], start: int, end: int, after_first: bool) -> Tense:
    before = [f for f in found if f[0] < start]
    after = [f for f in found if f[0] >= end]
    first, second = (after, before[::-1]) if after_first else (before[::-1], after)
    return (first or second)[0][1]


#: a verb in -ing right before a time, with no past auxiliary: the present progressive of a
#: plan ("moving the last week of May", "flying out on the 5th", "we're leaving in June")
_PROGRESSIVE: Final = re.compile(
    r"(?<![A-Za-z'’])(?:(?P<aux>was|were|been|wasn't|weren't)\s+)?(?P<v>[a-z]{2,}ing)"
    r"(?:\s+(?:out|in|back|off|over|up|down|home|away|there))?(?:\s+(?:on|in|at|by|around|for))?"
    r"\s*$",
    re.IGNORECASE,
)
_NOT_PROGRESSIVE: Final = frozenset(
    (
        *("morning", "evening", "during", "thing", "nothing", "something", "anything"),
        *("everything", "spring", "string", "ring", "king", "wedding", "building", "ceiling"),
        *("feeling", "sibling", "darling", "bring", "wing", "sing", "swing", "sting", "meeting"),
        *("earring", "pudding", "stuffing", "clothing", "ending", "beginning"),
    )
)


def _progressive_before(text: str, start: int) -> bool:
    """Whether a present progressive stands right before ``start`` ("moving the last week of")."""
    before = re.sub(r"\s*\bthe\s*$", "", text[max(0, start - 40) : start], flags=re.IGNORECASE)
    found = _PROGRESSIVE.search(before)
    return bool(found and not found["aux"] and found["v"].casefold() not in _NOT_PROGRESSIVE)


def direct_future(text: str, start: int) -> bool:
    """Whether a plan's verb stands right before ``start`` ("postponed to", "改到")."""
    return _DIRECT_FUTURE.search(text, max(0, start - 40), start) is not None


def infer(text: str, start: int, end: int) -> Tense | None:
    """The tense of the clause (else the sentence) holding ``text[start:end]``, or None."""
    return Reader(text).infer(start, end)
