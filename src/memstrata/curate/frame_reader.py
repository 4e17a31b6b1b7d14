"""Reading the frames a clause sets for its speaker (:func:`frames_in`): the clause read in
Chinese (:mod:`memstrata.curate.frames_zh`), in English (:mod:`memstrata.curate.frames_en`),
and in both where it mixes them (:mod:`memstrata.curate.code_switch`); the health of the people
it speaks of read as theirs (:mod:`memstrata.curate.cared_for`); then the frames kept that are
complete values of a state's size, one per slot. What a frame is lives in
:mod:`memstrata.curate.frames`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Final

from memstrata.curate import cared_for, code_switch, frames_en, frames_zh, lexicon
from memstrata.curate import patterns as re
from memstrata.curate.frames import BONDS, Frame, complete
from memstrata.util.scripts import has_han


def frames_in(
    clause: str,
    earlier: Sequence[Frame] = (),
    sentence: str = "",
    turn: str = "",
    people: Mapping[str, str] | None = None,
) -> list[Frame]:
    """The frames a clause sets for its speaker; ``earlier``: the frames of the clauses said
    before it in the same turn (an elliptical "crab is fine" after an allergy); ``sentence``:
    the whole sentence the clause is part of, whose words may say what the clause means
    ("虾和螃蟹都不能吃，吃了会过敏" is an allergy); ``turn``: the whole turn, for a clause whose
    subject another sentence of it names ("allergist results!! it's only cashew"); ``people``:
    the names given to the people of the user's life so far, whose health a clause may state
    (:mod:`memstrata.curate.cared_for`)."""
    text = _normal(clause)
    earlier = earlier[-EARLIER:]
    # the words around the clause say what it means; a run-on turn of thousands of characters
    # is read near each clause, so reading it stays linear in its length
    sentence, turn = _near(sentence, clause), _near(turn, clause)
    theirs = (
        cared_for.their_frames(
            text,
            {**people, **cared_for.people_of(earlier[-_RECENT:])},  # those named just before
            lambda said: frames_in(said, earlier, sentence, turn),
            _normal(turn),
        )
        if people is not None
        else []
    )
    found: list[Frame] = []
    if has_han(text):
        found += frames_zh.frames(text, earlier, _normal(sentence) or text)
    if re.search(r"[A-Za-z]{2,}", text):
        found += frames_en.frames(text, earlier, _normal(turn))
        if has_han(text) and (english := code_switch.english_reading(text)) is not None:
            # "我 shellfish allergy", "我做 ICU nurse 在 St Paul's": the speaker's Chinese "I"
            # before English words, read as the English clause it stands for
            found += frames_en.frames(english, earlier, _normal(turn))
    found = [f for f in found if (complete(f.value) or _named(f)) and _bounded(f)]
    if schools := tuple(f.value for f in found if f.kind == "school" and not f.negated):
        found = [  # "我是北京大学大三的学生": where a student studies, not an employer
            f
            for f in found
            if not (f.kind == "employer" and not f.negated and f.value.startswith(schools))
        ]
    if any(f.kind != "life" for f in found):  # "adopted a puppy named Max": the pet says it
        found = [f for f in found if f.kind != "life"]
    left = {f.value.casefold().split()[0] for f in found if f.kind == "employer" and f.negated}
    # "I quit Routefox last week": an employer left, not a routine given up
    found = [
        f
        for f in found
        if not (f.kind == "routine" and f.negated and f.value.casefold().split()[0] in left)
    ]
    if any(f.kind == "partner" and not f.negated and f.value in BONDS for f in found):
        # "we're engaged" read as "the user and their boyfriend are engaged": one bond
        found = [f for f in found if f.kind != "partner" or f.value in BONDS or " " in f.value]
    if any(f.kind == "partner" and f.negated for f in found):
        # "My boyfriend and I broke up": the partner named is the one the clause ends
        found = [f for f in found if f.kind != "partner" or f.negated]
    if theirs:  # the person's needs, not the speaker's; who the person is stays
        found = [f for f in found if f.kind not in cared_for.CARED] + theirs
    return _distinct([_pastime_keyed(f) for f in found])


#: the kinds whose key is a pastime when one is named
_PASTIME_KINDS: Final = frozenset({"routine", "hobby"})


def _pastime_keyed(frame: Frame) -> Frame:
    """A routine or a hobby of a known pastime keyed by it in canonical English, whichever
    language said it: "用户每周二打羽毛球" and "badminton on pause" are one routine."""
    if frame.kind not in _PASTIME_KINDS:
        return frame
    keys = (frame.key and lexicon.canonical(lexicon.PASTIMES, frame.key)) or lexicon.canonical(
        lexicon.PASTIMES, frame.value
    )
    return replace(frame, key=keys[0]) if len(keys) == 1 and keys[0] != frame.key else frame


#: the longest value a frame may have: a longer one is a run of text, not a value
MAX_VALUE: Final = 120


def _bounded(frame: Frame) -> bool:
    """Whether a frame's value and slot are of a size a state has (a run-on turn of thousands
    of characters with no break is no value)."""
    return len(frame.value) <= MAX_VALUE and len(frame.slot) <= 200


#: the kinds whose value may be one word the lexicon knows
_LEXICAL: Final = frozenset({"allergy", "avoids", "drink", "medication", "condition", "diet"})


def _named(frame: Frame) -> bool:
    """Whether a value too short to be a phrase is a word the lexicon knows ("对猫过敏": 猫),
    for a kind whose values the lexicon lists."""
    value = frame.value
    return bool(
        frame.kind in _LEXICAL
        and len(value.strip()) <= 2
        and any(
            lexicon.canonical(table, value)
            for table in (lexicon.FOODS, lexicon.DRINKS, lexicon.MEDICATIONS, lexicon.CONDITIONS)
        )
    )


_QUOTES: Final = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


@lru_cache(maxsize=64)
def _normal(text: str) -> str:
    return " ".join(text.translate(_QUOTES).split())


#: how far around a clause its sentence and turn are read (characters each side)
_AROUND: Final = 400
#: how many of a turn's earlier frames may name the people a clause speaks of
_RECENT: Final = 24
#: how many of a turn's earlier frames a clause is read beside ("crab is fine" after the
#: allergy): the latest, so a run-on turn of thousands of states is read in linear time
EARLIER: Final = 64


def _near(text: str, clause: str) -> str:
    """``text`` within :data:`_AROUND` characters of ``clause`` (all of it when short, or when
    the clause is not in it as said)."""
    if len(text) <= 2 * _AROUND + len(clause):
        return text
    at = text.find(clause.strip()[:40])
    if at < 0:
        return text[: 2 * _AROUND + len(clause)]
    return text[max(0, at - _AROUND) : at + len(clause) + _AROUND]


def _distinct(found: Sequence[Frame]) -> list[Frame]:
    """Each slot once: of two frames for one slot, the one that says more (a name given)."""
    best: dict[tuple[str, bool], Frame] = {}
    for frame in found:
        mark = (frame.slot, frame.negated)
        held = best.get(mark)
        if held is None or len(frame.value) > len(held.value):
            best[mark] = (
                frame
                if held is None
                else replace(frame, exclusive=frame.exclusive or held.exclusive)
            )
    return list(best.values())
