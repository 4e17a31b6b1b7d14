"""Contradictions supersede, never delete.

A fact that sets a state of its subject (the speaker of the turn it cites first) closes the
older current facts that the new state replaces. The older fact gets ``valid_to`` (when the
newer one became valid) and ``superseded_by``; it stays stored and queryable by time ("where
did Alice live in March?"), and the change is in its history as a ``supersede``.

What a new fact replaces is read from its slot (:mod:`memstrata.curate.frames`):

- a kind a person has one value of at a time (employer, job, residence, partner, diet...):
  a new value replaces every older fact of the kind; a statement that ends the state ("I left
  Google") closes the older facts whose value it names, or all of them when it names none
  ("I got laid off"); a job stated in the same turn as the employer it was held at goes
  with that employer, unless the new turn states a job too;
- a kind with several values at once (allergies, children, likes, plans...): a new fact
  replaces the older ones with the same key ("plan:kyoto" postponed, "drink:coffee" stopped);
  one that says it is the only value ("I'm only allergic to shrimp", "只喝绿茶") replaces every
  older value of the kind; a key naming several values ("allergy:crab+shrimp") is replaced only
  by a fact with that same key or an exclusive one, so "crab is fine" does not take the shrimp
  allergy with it;
- a trip made closes the plan to make it (``trip:kyoto`` closes ``plan:kyoto``).

Never a fact said in the same turn, nor one said later. A fact with no slot (written by hand
or by a model without one) supersedes by the older rule: the single-valued slots its text fills
(:func:`slot_of`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from memstrata.curate.frames import KINDS
from memstrata.model import Fact, FactFilter, HistoryOp, Scope
from memstrata.ports import RecordStore

_SUBJECT: Final = r"(?P<s>[^,，。.;；]{1,40}?)"
_SLOTS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    (
        "residence",
        re.compile(
            rf"^{_SUBJECT}\s+(?:now\s+)?(?:lives|is living|resides|moved|relocated)\s+(?:in|to)\s+"
            r"(?P<o>.+)$",
            re.IGNORECASE,
        ),
    ),
    (
        "job",
        re.compile(
            rf"^{_SUBJECT}\s+(?:now\s+)?(?:works|is working)\s+(?:as|at|for)\s+(?P<o>.+)$",
            re.IGNORECASE,
        ),
    ),
    ("name", re.compile(rf"^{_SUBJECT}'s name is (?P<o>.+)$", re.IGNORECASE)),
    ("age", re.compile(rf"^{_SUBJECT} is (?P<o>\d{{1,3}}) years old", re.IGNORECASE)),
    (
        "favorite",
        re.compile(
            rf"^{_SUBJECT}'s fav(?:o|ou)rite (?P<k>[\w -]{{1,30}}?) is (?P<o>.+)$", re.IGNORECASE
        ),
    ),
    ("residence", re.compile(rf"^{_SUBJECT}(?:现在)?(?:住在|搬到了?|定居在?)(?P<o>.+)$")),
    ("job", re.compile(rf"^{_SUBJECT}(?:现在)?在(?P<o>.+?)(?:工作|上班)")),
    ("name", re.compile(rf"^{_SUBJECT}(?:的名字)?叫(?P<o>.+)$")),
    ("age", re.compile(rf"^{_SUBJECT}(?:今年)?(?P<o>\d{{1,3}})岁")),
    ("favorite", re.compile(rf"^{_SUBJECT}最喜欢的(?P<k>\S{{1,10}}?)是(?P<o>.+)$")),
)


@dataclass(frozen=True, slots=True)
class Slot:
    subject: str
    key: str
    value: str


def _norm(text: str) -> str:
    return re.sub(r"[\s.,，。!！]+", " ", text).strip().lower()


def slot_of(text: str) -> Slot | None:
    """The single-valued slot a fact's sentence fills, if it is one the rules know."""
    for key, pattern in _SLOTS:
        match = pattern.match(text.strip())
        if match:
            extra = match.groupdict().get("k")
            name = f"{key}:{_norm(extra)}" if extra else key
            return Slot(_norm(match["s"]), name, _norm(match["o"]))
    return None


@dataclass(frozen=True, slots=True)
class Change:
    """How a new fact changes its slot's state (from its extraction): whether it ends the
    state it names (``ended``: the value it ends, "" for none in particular) and whether it
    replaces every value of its kind (``exclusive``)."""

    ended: str | None = None
    exclusive: bool = False


def same_value(a: str | None, b: str | None) -> bool:
    """Whether two values name the same thing: equal once case and spacing are set aside, or
    one held in the other ("Tencent" / "Tencent in Shenzhen", "王磊" / "老公王磊")."""
    if not a or not b:
        return False
    x, y = _norm(a), _norm(b)
    return x == y or (len(x) >= 2 and x in y) or (len(y) >= 2 and y in x)


def _keys(slot: str) -> frozenset[str]:
    return frozenset(slot.partition(":")[2].split("+")) - {""}


def supersede_older(
    store: RecordStore,
    scope: Scope,
    fact: Fact,
    *,
    now: datetime,
    change: Change | None = None,
    with_it: Sequence[Fact] = (),
) -> list[Fact]:
    """Close the current facts of ``fact``'s scope that the new fact replaces; ``with_it``:
    the other facts stored from the same turn (a job stated with a new employer)."""
    if fact.slot is None:
        return _by_text(store, scope, fact, now=now)
    change = change or Change()
    kind = fact.slot.partition(":")[0]
    olds = [
        f
        for f in store.iter_facts(scope, FactFilter(current_only=True, slot_kind=kind))
        if f.id != fact.id
    ]
    if kind in ("trip", "residence"):  # a trip made, a home moved to, closes the plan for it
        olds += list(store.iter_facts(scope, FactFilter(current_only=True, slot_kind="plan")))
    for akin in _AKIN.get(kind, ()):  # golf given up as a routine ends golf as a hobby
        olds += list(store.iter_facts(scope, FactFilter(current_only=True, slot_kind=akin)))
    ended_too = _ended_with(store, scope, fact, kind) if change.ended is None else []
    olds += ended_too
    olds = [
        f
        for f in {f.id: f for f in olds}.values()  # each once: a kind akin, a state ended
        if f.scope == fact.scope
        and f.valid_from <= fact.valid_from
        and not set(f.sources) & set(fact.sources)
    ]
    if not olds:
        return []
    speaker = _speakers(store, scope, [fact, *olds])
    olds = [f for f in olds if speaker.get(f.id) == speaker.get(fact.id)]
    closing = [f for f in olds if f in ended_too or _replaces(fact, f, kind, change)]
    partner = _POSITION.get(kind)  # a job and its employer said together are one position
    if partner is not None and closing and not any(f.slot == partner for f in with_it):
        gone = {s for f in closing for s in f.sources}
        held = [
            f
            for f in store.iter_facts(scope, FactFilter(current_only=True, slot=partner))
            if f.scope == fact.scope and set(f.sources) & gone and f not in closing
        ]
        who = _speakers(store, scope, held) if held else {}
        closing += [f for f in held if who.get(f.id) == speaker.get(fact.id)]
    return [_close(store, scope, old, fact, now) for old in closing]


#: states another one ends: breastfeeding, the pregnancy before it; a disease diagnosed, the
#: "pre-" state that led to it
_ENDS: Final[dict[str | None, tuple[str, ...]]] = {
    "condition:breastfeeding": ("condition:pregnancy",),
    "condition:diabetes": ("condition:prediabetes",),
}
#: the words of a birth, in the turn a child is named in
_BIRTH: Final = re.compile(
    r"\b(?:was|were|is|got)\s+born\b|\bgave birth\b|\bdelivered\b|\barrived\b|出生|生了|降生|诞生|"
    r"(?:宝宝|baby|孩子)(?:来了|到了)",
    re.IGNORECASE,
)


def _ended_with(store: RecordStore, scope: Scope, fact: Fact, kind: str) -> list[Fact]:
    """The current facts of another kind the new state ends (:data:`_ENDS`, of the same
    person for the needs of someone in the user's care), and a current pregnancy a child's
    birth ends (the user's or their partner's): the turn the child fact cites is read only
    when there is a pregnancy to end."""

    def current(slot: str) -> list[Fact]:
        found = store.iter_facts(scope, FactFilter(current_only=True, slot=slot))
        return [f for f in found if f.id != fact.id]

    # a state of a person in the user's care ends the same state of theirs:
    # "condition:meera/breastfeeding" ends "condition:meera/pregnancy"
    key = (fact.slot or "").partition(":")[2]
    person, _, own = key.rpartition("/")
    base = f"{kind}:{own}" if person else fact.slot
    ended = [
        f
        for slot in _ENDS.get(base, ())
        for f in current(slot if not person else slot.replace(":", f":{person}/", 1))
    ]
    if kind == "child" and fact.sources and (pregnant := _pregnancies(store, scope)):
        turns = store.get_episodes(scope, [fact.sources[0]])
        if any(_BIRTH.search(turn.text) for turn in turns):  # a baby born ends the pregnancy
            ended += pregnant
    return ended


def _pregnancies(store: RecordStore, scope: Scope) -> list[Fact]:
    """The current pregnancies of the scope, the user's and those of the people in their
    care: a child born in the household ends them."""
    found = store.iter_facts(scope, FactFilter(current_only=True, slot_kind="condition"))
    return [
        f for f in found if f.slot and f.slot.partition(":")[2].rpartition("/")[2] == "pregnancy"
    ]


#: the words of a move to come, in a plan's value or key
_MOVE: Final = re.compile(r"\b(?:mov(?:e|ing)|relocat\w*)\b|搬|移居", re.IGNORECASE)


def _a_move_to(plan: Fact, home: str | None) -> bool:
    """Whether a plan is the move to ``home`` (its value or key names a move and the place)."""
    if not home:
        return False
    said = f"{plan.value or ''} {plan.slot or ''}"
    place = " ".join(home.casefold().split())
    return bool(_MOVE.search(said)) and len(place) >= 2 and place in said.casefold()


#: the other half of a position: a job stated with its employer ends when a new employer
#: is said without a role; a new role said alone leaves the employer, as a promotion or a
#: move inside the same place does ("I got it. Clinical nurse educator, start March 16",
#: after "ICU nurse at the Royal Melbourne")
_POSITION: Final = {"employer": "job"}
#: kinds that hold the same things: what one of them ends, the other held too
_AKIN: Final = {"routine": ("hobby",), "hobby": ("routine",)}
#: kinds whose values are what a person does or takes, named again in fewer words when they
#: end ("I gave up golf" of "I play golf on Saturdays with Frank"; "停了羽毛球" of
#: "每周三晚上打羽毛球")
_ENDED_BY_NAME: Final = frozenset(
    {"routine", "hobby", "drink", "like", "medication", "restriction"}
)


def _replaces(new: Fact, old: Fact, kind: str, change: Change) -> bool:
    assert new.slot is not None
    if old.slot is None:
        return False
    old_kind = old.slot.partition(":")[0]
    if kind == "residence" and old_kind == "plan":
        # "moving to Tucson", "下个月搬去杭州", then living there: the move is made
        return change.ended is None and _a_move_to(old, new.value)
    if kind == "trip":
        if old_kind != "plan":
            return False
        return bool(_keys(new.slot) & _keys(old.slot)) or any(
            same_value(a, b) for a in _keys(new.slot) for b in _keys(old.slot)
        )
    if _person(new.slot) != _person(old.slot):
        return False  # a child's egg allergy is not the user's, nor ended by theirs
    spec = KINDS.get(kind)
    single = spec.single if spec is not None else ":" not in new.slot
    if single:
        if change.ended is None:
            return True  # a new value replaces every older one of the kind
        # a statement that ends the state: the facts of the value it names, or all of them
        return not change.ended or same_value(change.ended, old.value) or old.value is None
    if change.exclusive and change.ended is None:
        return old_kind == kind
    if old.slot.partition(":")[2] == new.slot.partition(":")[2]:
        return True  # the same key, of this kind or one akin to it
    # a plan named again by what it is ("the trip" of "a trip to Lisbon") is that plan; an
    # activity or a medicine that ends, named again in fewer words, is that one
    if kind in ("plan", "goal"):
        return _names(new.slot, old.value)
    if change.ended is not None and kind in _ENDED_BY_NAME:  # in its value or its words
        return _names(new.slot, old.value) or _names(new.slot, old.text)
    return False


def _person(slot: str) -> str:
    """Whose state a slot is: the person of ``kind:person/key`` (a need of someone in the
    user's care, :mod:`memstrata.curate.cared_for`), "" for the subject's own."""
    qualifier = slot.partition(":")[2]
    return qualifier.partition("/")[0] if "/" in qualifier else ""


def _names(slot: str, value: str | None) -> bool:
    """Whether every word of a plan's key is a word of another plan's value ("trip" of "trip
    to Lisbon"; "大理" of "去大理玩几天")."""
    key = slot.partition(":")[2].rpartition("/")[2].casefold()
    if not key or not value:
        return False
    said = value.casefold()
    if not key.isascii():
        return key in said
    words = set(re.findall(r"[\w']+", said))
    return all(w in words for w in key.split())


def _speakers(store: RecordStore, scope: Scope, facts: Sequence[Fact]) -> dict[str, str | None]:
    """Who each fact is about: the speaker of the turn it cites first."""
    firsts = {f.id: f.sources[0] for f in facts if f.sources}
    turns = {e.id: e for e in store.get_episodes(scope, sorted(set(firsts.values())))}
    out: dict[str, str | None] = {}
    for fact_id, source in firsts.items():
        turn = turns.get(source)
        out[fact_id] = None if turn is None else turn.speaker
    return out


def _close(store: RecordStore, scope: Scope, old: Fact, new: Fact, now: datetime) -> Fact:
    ended = max(new.valid_from, old.valid_from)
    return store.update_fact(
        scope,
        old.evolve(valid_to=ended, superseded_by=new.id, updated_at=now),
        expected_version=old.version,
        op=HistoryOp.SUPERSEDE.value,
    )


def _by_text(store: RecordStore, scope: Scope, fact: Fact, *, now: datetime) -> list[Fact]:
    """The older rule, for a fact without a slot: the single-valued slot its text fills."""
    slot = slot_of(fact.text)
    if slot is None:
        return []
    closed = []
    for old in list(store.iter_facts(scope, FactFilter(current_only=True))):
        if old.id == fact.id or old.scope != fact.scope:
            continue
        other = slot_of(old.text)
        if other is None or (other.subject, other.key) != (slot.subject, slot.key):
            continue
        if other.value == slot.value:
            continue
        closed.append(_close(store, scope, old, fact, now))
    return closed
