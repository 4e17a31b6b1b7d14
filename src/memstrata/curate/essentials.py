"""What L1 states: each person's safety facts first, then their best-supported profile slots,
preferences, routines, plans and key facts, the scope's user first, within a token budget.

Every current fact is attributed to the speaker of the turn it rests on (its first source). The
scope's user is, in this order: the speaker a setting or argument names (when they speak in the
scope); else the speaker with the most turns of role ``user`` (ties: who spoke first); an unnamed
user's facts ("The user ...", "用户...") belong to the user. Everyone else who has facts is one
of the people.

A fact that carries a slot (:mod:`memstrata.curate.frames`: extraction read the state it sets)
is placed by its kind: an allergy, condition, medication, diet or accessibility need in
``Safety``, which comes before everything and is never cut for the budget; a profile kind
(job, employer, residence, partner, children, pets...) as a profile slot, its value as the
person said it, dated where it changes (:func:`memstrata.curate.dating.since`: "CATL (as of
2026-05-20)"); a drink, a like or a favourite in ``Preferences``; a routine or hobby in
``Routines``; a plan or goal in ``Plans`` (not one whose time has passed, nor one called off,
nor a passing moment); a life event or a trip in ``Key facts``; each with its date
(:func:`memstrata.curate.dating.dated`). A fact that ends a state of a single-valued kind
("between jobs") is a key fact. For a fact without a slot, :mod:`memstrata.curate.slots` reads
the profile slots its text states and the preferences that have an object. Values of a slot
that name the same thing (:func:`memstrata.curate.slots.same_thing`) are one value. A value's
support is the number of distinct sessions whose turns its facts cite; a single-valued slot
keeps its best-supported value (ties: the newest). A key fact is any other fact of importance
:data:`KEY_IMPORTANCE` or more (importance rises with support, :mod:`memstrata.curate.merge`).
Every safety fact comes first, outside the budget; the budget is then filled in this order, each
part best supported first: the user's slots, preferences, routines and plans, the people's
slots, the user's key facts, the people's preferences, the people's key facts; what does not
fit stays in the L2 topic documents. Sections come out as ``Safety``, ``Profile``,
``Preferences``, ``Routines``, ``Plans``, ``Key facts`` (the user's) and ``People: <name>`` for
each other person.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Final

from memstrata.curate import frames, lexicon
from memstrata.curate.dating import dated, since
from memstrata.curate.slots import (
    ORDER,
    SlotFill,
    label,
    preference_of,
    same_thing,
    slots_in,
    subject_of,
)
from memstrata.curate.supersede import same_value, slot_of
from memstrata.model import Category, Episode, Fact, FactFilter, Role, Scope, Slot
from memstrata.ports import RecordStore
from memstrata.tokens import TokenCounter
from memstrata.util.scripts import HAN

DEFAULT_ESSENTIALS_BUDGET: Final = 400
KEY_IMPORTANCE: Final = 0.85
#: the subject extraction writes for a speaker with no name
UNNAMED: Final = ("The user", "用户")
_MAX_PREFERENCES: Final = 6
_MAX_ROUTINES: Final = 4
_MAX_PLANS: Final = 4
_MAX_KEY_FACTS: Final = 5
_MAX_PEOPLE_ITEMS: Final = 3
#: at most this many of the user's health notes (:attr:`Person.health_notes`)
_MAX_HEALTH_NOTES: Final = 6
#: a fact under this importance is a passing moment (0.2) or a reaction (0.3): it stays in the
#: archive; an event (0.4) and everything that lasts may be in L1
PASSING: Final = 0.4


def lasting(fact: Fact) -> bool:
    """Whether L1 may hold a fact by its importance: not a passing moment nor a reaction."""
    return fact.importance >= PASSING


#: the profile slot each profile kind of :mod:`memstrata.curate.frames` fills
PROFILE_SLOTS: Final[dict[str, str]] = {
    "name": "name",
    "age": "age",
    "birthday": "birthday",
    "job": "job",
    "employer": "employer",
    "school": "school",
    "major": "major",
    "residence": "residence",
    "hometown": "home_country",
    "partner": "partner",
    "child": "children",
    "family": "family",
    "friend": "friends",
    "pet": "pets",
    "language": "languages",
    "volunteer": "volunteering",
}
#: profile kinds whose value changes over a life: shown with since when it holds
_CHANGING: Final = frozenset({"age", "job", "employer", "school", "major", "residence", "partner"})
_UNNAMED_SPEAKERS: Final = frozenset({None, "user", ""})
_NOT_PEOPLE: Final = frozenset({Role.ASSISTANT, Role.SYSTEM, Role.TOOL})


@dataclass(frozen=True, slots=True)
class Entry:
    """One bullet L1 should hold: its section, text, the facts it stands for and their
    sources, and its support (distinct sessions)."""

    section: str
    text: str
    facts: tuple[str, ...]
    sources: tuple[str, ...]
    support: int
    as_of: str | None = None  # since or as of when a changing profile value holds

    @property
    def bullet(self) -> str:
        """The entry as a bullet of the essentials: its text with its date, if it has one."""
        return f"{self.text} ({self.as_of})" if self.as_of else self.text


@dataclass(slots=True)
class Person:
    """What the facts say about one speaker."""

    name: str
    slots: dict[str, list[Entry]] = field(default_factory=dict)  # key -> values, best first
    preferences: list[Entry] = field(default_factory=list)
    key_facts: list[Entry] = field(default_factory=list)
    safety: list[Entry] = field(default_factory=list)
    #: health matters said in words no state was read from: in the Safety section, first of
    #: what the budget holds, after the safety states that are taken whatever the budget
    health_notes: list[Entry] = field(default_factory=list)
    routines: list[Entry] = field(default_factory=list)
    plans: list[Entry] = field(default_factory=list)
    #: the values of the person's safety facts by kind ("allergy" -> ["cockroaches"]), which
    #: L1 states in its Safety section
    needs: dict[str, list[str]] = field(default_factory=dict)

    def slot_values(self) -> dict[str, str]:
        """Each filled slot's value(s) as one text, the needs of the Safety section included
        ("allergies: cockroaches; most reptiles")."""
        values = {
            label(key): "; ".join(_value(e) for e in entries) for key, entries in self.slots.items()
        }
        for kind, said in self.needs.items():
            values.setdefault(_NEED_LABELS.get(kind, kind), "; ".join(dict.fromkeys(said)))
        return values


#: how a kind of need is named as a slot
_NEED_LABELS: Final = {
    "allergy": "allergies",
    "condition": "conditions",
    "medication": "medications",
    "avoids": "avoids",
    "accessibility": "accessibility",
    "restriction": "restrictions",
    "diet": "diet",
}


@dataclass(slots=True)
class Selection:
    user: str | None
    people: dict[str, Person]  # by name, the user first
    entries: list[Entry]  # what fits the budget, in section order
    profile: dict[str, Slot]  # the user's slots for the profile document
    profile_facts: dict[str, tuple[str, ...]] = field(default_factory=dict)  # slot -> its facts


def _value(entry: Entry) -> str:
    return entry.text.split(": ", 1)[-1]


def choose_user(episodes: Iterable[Episode], named: str | None = None) -> str | None:
    """The scope's user among the speakers of ``episodes`` (see the module's rule); None when
    the user has no name."""
    turns: Counter[str] = Counter()
    first: dict[str, int] = {}
    speakers: set[str] = set()
    for i, episode in enumerate(episodes):
        if episode.speaker in _UNNAMED_SPEAKERS or episode.speaker == "assistant":
            continue
        speakers.add(str(episode.speaker))
        if episode.role == Role.USER:
            turns[str(episode.speaker)] += 1
            first.setdefault(str(episode.speaker), i)
    if named and named in speakers:
        return named
    if not turns:
        return None
    return min(turns, key=lambda s: (-turns[s], first[s]))


def _sessions(facts: Iterable[Fact], session_of: dict[str, tuple[str | None, str]]) -> int:
    return len({session_of[s] for f in facts for s in f.sources if s in session_of})


def _sources(facts: Iterable[Fact]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(s for f in facts for s in f.sources))


def _person(
    name: str | None,
    section: str,
    facts: Sequence[Fact],
    session_of: dict[str, tuple[str | None, str]],
    now: datetime | None = None,
    closed: Mapping[str, datetime] | None = None,
) -> Person:
    """A speaker's safety facts, slots, preferences, routines, plans and key facts; ``name``
    None: the speaker has no name, and each fact's own subject ("Alice ...", "The user ...")
    is who it speaks of; ``now``: plans whose time has passed by then are left out;
    ``closed``: the health states closed since (:func:`closed_states`), whose notes leave L1."""
    subjects = Counter(subject_of(f.text) for f in facts) if name is None else Counter()
    person = Person(name or next((s for s, _ in subjects.most_common() if s), _unnamed(facts)))
    values: dict[str, dict[str, list[Fact]]] = defaultdict(lambda: defaultdict(list))
    liked: dict[str, list[Fact]] = defaultdict(list)
    wording: dict[str, str] = {}
    used: set[str] = set()
    placed: dict[str, list[Fact]] = defaultdict(list)  # section -> slotted facts placed there
    notes: list[Fact] = []  # health facts without a slot
    latest_of: dict[str, Fact] = {}  # single-valued profile kind -> its newest current fact
    for fact in facts:
        kind = fact.slot.partition(":")[0] if fact.slot else None
        spec = frames.KINDS.get(kind) if kind else None
        if spec is not None and kind is not None:
            used.add(fact.id)
            interest = _interest(kind, fact)
            if interest:
                values["interests"][interest.casefold()].append(fact)
                wording.setdefault(f"interests: {interest.casefold()}", interest)
            who = name or subject_of(fact.text)
            for fill in slots_in(fact.text, who) if who else ():  # what the frames do not read
                if fill.key not in _FRAMED:
                    values[fill.key][fill.value.casefold()].append(fact)
                    wording.setdefault(f"{label(fill.key)}: {fill.value.casefold()}", fill.value)
            if kind in PROFILE_SLOTS and fact.value:
                if spec.single:
                    held = latest_of.get(kind)
                    if held is None or (fact.valid_from, fact.id) > (held.valid_from, held.id):
                        latest_of[kind] = fact
                else:
                    key = PROFILE_SLOTS[kind]
                    values[key][fact.value.casefold()].append(fact)
                    wording.setdefault(f"{label(key)}: {fact.value.casefold()}", fact.value)
            elif kind in PROFILE_SLOTS:
                placed[frames.EVENTS].append(fact)  # a state ended ("between jobs")
            elif _shown(fact, spec, now):
                placed[spec.section].append(fact)
            continue
        if fact.category == Category.HEALTH and lasting(fact):
            used.add(fact.id)  # a health matter without a slot: a note of the Safety section
            notes.append(fact)
            continue
        who = name or subject_of(fact.text)
        if who is None:
            continue
        for fill in slots_in(fact.text, who):
            values[fill.key][fill.value.casefold()].append(fact)
            wording.setdefault(f"{label(fill.key)}: {fill.value.casefold()}", fill.value)
            used.add(fact.id)
        short = preference_of(fact.text, who)
        if short is not None and of_a_moment(fact):
            short = None  # "今天早上…虾饺真好吃": a moment enjoyed, no lasting liking
        if short is not None:
            liked[short.casefold()].append(fact)
            wording.setdefault(short.casefold(), short)
            used.add(fact.id)

    def entry(text: str, backing: Sequence[Fact]) -> Entry:
        return Entry(
            section,
            text,
            tuple(f.id for f in backing),
            _sources(backing),
            _sessions(backing, session_of),
        )

    as_of: dict[str, str] = {}  # profile slot -> since or as of when its value holds
    for kind, fact in latest_of.items():
        key = PROFILE_SLOTS[kind]
        value = fact.value or ""
        values[key][value.casefold()].append(fact)
        wording.setdefault(f"{label(key)}: {value.casefold()}", value)
        if kind in _CHANGING:
            as_of[key] = since(fact)

    def newest(backing: Sequence[Fact]) -> tuple[str, str]:
        latest = max(backing, key=lambda f: (f.valid_from, f.id))
        return (latest.valid_from.isoformat(), latest.id)

    keys = sorted(values, key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k))

    def rank(groups: Iterable[tuple[str, list[Fact]]], key: str) -> list[tuple[str, list[Fact]]]:
        return sorted(  # best supported, a specific word before the slot's own name, newest
            groups,
            key=lambda kv: (_sessions(kv[1], session_of), kv[0] != key, newest(kv[1])),
            reverse=True,
        )

    for key in keys:
        merged: list[tuple[str, list[Fact]]] = []  # near-duplicates are one value
        for value, backing_of in rank(values[key].items(), key):
            same = next((i for i, (kept, _) in enumerate(merged) if same_thing(kept, value)), None)
            if same is None:
                merged.append((value, list(backing_of)))
            else:  # one value: said with the more words ("son Leo" of "son")
                kept = merged[same][0]
                fuller = value if len(value.split()) > len(kept.split()) else kept
                merged[same] = (fuller, merged[same][1] + backing_of)
        ranked = rank(merged, key)
        if SlotFill(key, "").single:
            ranked = ranked[:1]
        elif key == "interests":
            ranked = ranked[:_MAX_INTERESTS]
        told = [wording[f"{label(key)}: {value}"] for value, _ in ranked]
        backing = [f for _, facts_of in ranked for f in dict.fromkeys(facts_of)]
        made = entry(f"{label(key)}: {'; '.join(told)}", backing)
        person.slots[key] = [replace(made, as_of=as_of.get(key))]
    person.preferences = sorted(
        (entry(wording[k], backing) for k, backing in liked.items()),
        key=lambda e: (e.support, len(e.facts)),
        reverse=True,
    )
    person.key_facts = sorted(
        (
            entry(dated(f), [f])
            for f in facts
            if f.id not in used
            and f.category != Category.PREFERENCE
            and f.importance >= KEY_IMPORTANCE
            and not expired(f, now)
            and not outdated(f, latest_of)
        ),
        key=lambda e: (e.support, e.facts),
        reverse=True,
    )

    def by_support(section_facts: Sequence[Fact]) -> list[Entry]:
        """Best supported first, then the newest."""
        best = sorted(
            section_facts,
            key=lambda f: (_sessions([f], session_of), f.importance, f.valid_from, f.id),
            reverse=True,
        )
        return [entry(dated(f), [f]) for f in best]

    person.safety = by_support(placed[frames.SAFETY])
    stopped = ended_or_closed(facts, closed or {})
    person.health_notes = by_support([n for n in notes if not ended_since(n, stopped)])
    for fact in placed[frames.SAFETY]:
        if fact.slot and fact.value:
            person.needs.setdefault(fact.slot.partition(":")[0], []).append(fact.value)
    person.preferences = by_support(placed[frames.PREFERENCES]) + person.preferences
    person.routines = by_support(placed[frames.ROUTINES])
    person.plans = by_support(placed[frames.PLANS])
    person.key_facts = by_support(placed[frames.EVENTS]) + person.key_facts
    return person


#: the profile slots the frames fill: the text's own reading of them is not taken
_FRAMED: Final = frozenset({*PROFILE_SLOTS.values(), "allergies", "interests"})
#: at most this many interests are listed
_MAX_INTERESTS: Final = 5


def _interest(kind: str, fact: Fact) -> str | None:
    """The activity a hobby, a routine or a liked activity names ("surfing", "跑步"), for the
    ``interests`` profile slot; None for any other fact, or one that ends the state."""
    if fact.slot is None or fact.value is None:
        return None
    key = fact.slot.partition(":")[2]
    if kind == "hobby":
        return _activity(fact.value, gerund=False)
    if kind == "routine":
        if key in lexicon.PASTIMES:  # the pastime in the words said ("太极拳", "golf")
            said = fact.value.casefold()
            return next((w for w in lexicon.PASTIMES[key] if w in said), key)
        return _activity(key, gerund=False) if not key.isascii() else _activity(fact.value)
    if kind == "like":
        if re.search(
            r"\b(?:hates?|dislikes?|can't stand|not)\b|讨厌|不喜欢|受不了", fact.text, re.I
        ):
            return None
        return _activity(fact.value)
    return None


#: words before what is liked ("love", "a big fan of"), and words that end an activity
_LIKING: Final = re.compile(
    r"^(?:\w+\s+)?(?:love|like|enjoy|prefer|adore|into|a (?:big |huge )?fan of|fan of|"
    r"passionate about|obsessed with|keen on|crazy about)\s+|"
    r"^(?:喜欢|爱|热爱|偏好|钟爱|迷上了|爱上了)",
    re.I,
)
_ACTIVITY_END: Final = re.compile(
    r"\s+(?:with|and|or|in|on|at|for|to|about|of|from|by|when|because|while|as|like|than|"
    r"so|but|around|into|every|all|whenever|lately|recently|now|too|again|these)\b.*$",
    re.I,
)


def _activity(liked: str, *, gerund: bool = True) -> str | None:
    """The activity a liked thing, a hobby or a routine names, when it names one: a phrase
    cut before its complements ("camping trips with my fam" -> "camping trips"; with
    ``gerund``, only one that opens with a gerund: "coffee" and "the ocean" are no activity),
    or a short Chinese verb phrase ("爬山"); not a bare verb of no content ("being",
    "playing")."""
    obj = _LIKING.sub("", liked.strip())
    if re.match(rf"[{HAN}]+$", obj):
        return obj if 2 <= len(obj) <= 6 else None
    whole = obj
    obj = _ACTIVITY_END.sub("", obj).strip(" ,")
    if re.match(r"\s*(?:and|or)\b", whole[len(obj) :].lstrip(" ,")) and re.search(
        r"\b(?:a|an|the)\s+\w+$", obj, re.I
    ):
        return None  # "creating a safe and inclusive space": cut inside its noun phrase
    # "writing some", "writing another one": what is done, without its stand-in object
    obj = re.sub(
        r"\s+(?:some|another(?: one)?|one|more|it|them|this|that|stuff|things|a lot|lots)$",
        "",
        obj,
        flags=re.I,
    )
    obj = re.sub(r"^(?:go|goes|do|does|to)\s+", "", obj, flags=re.I)
    words = obj.split()
    if not words or len(words) > 3 or (gerund and not words[0].casefold().endswith("ing")):
        return None
    if len(words) == 1 and words[0].casefold() in _NO_CONTENT:
        return None
    if obj.casefold() in _NO_CONTENT_PHRASES or _NO_OBJECT.match(obj):
        return None  # "spending time", "helping out", "curling up": no activity named
    return obj if frames.complete(obj) else None


_NO_CONTENT_PHRASES: Final = frozenset(
    {"spending time", "having fun", "doing stuff", "doing things", "relaxing", "chilling",
     "experimenting"}
)  # fmt: skip
#: a verb with its particle and no object ("helping out", "curling up", "getting lost")
_NO_OBJECT: Final = re.compile(
    r"^\w+ing\s+(?:up|out|down|off|around|about|away|in|over|back|lost|immersed|busy|together)$",
    re.I,
)
_NO_CONTENT: Final = frozenset(
    "being playing learning doing getting having making going trying working spending "  # noqa: SIM905
    "practicing practising taking using seeing".split()
)


def expired(fact: Fact, now: datetime | None) -> bool:
    """Whether a fact spoke of a time to come that has passed by ``now`` ("an allergist
    appointment next week", said in February): what it said is no longer ahead, so L1 leaves
    it to the archive (a plan, an event, an appointment; a state is never expired)."""
    if now is None or fact.when is None or fact.category not in _HAPPENINGS:
        return False
    return fact.when.start > fact.valid_from and fact.when.end <= now


_HAPPENINGS: Final = frozenset({Category.PLAN, Category.EVENT, Category.PERSONAL, Category.OTHER})


#: under this importance, a happening no frame read is an anecdote (one said in a second session
#: is raised above it by the support it gained)
ANECDOTE: Final = 0.45


def anecdote(fact: Fact) -> bool:
    """Whether a fact tells a moment of the past and sets no state ("the user made way too
    much rice again", "a possum got into the roof"): the archive keeps it, L1 does not; a
    happening still to come (its time after the day it was said) is no anecdote."""
    if fact.slot is not None or fact.category != Category.EVENT or fact.importance >= ANECDOTE:
        return False
    if _STATE_CUE.search(fact.text):
        return False  # it tells of a state begun, changed or kept, or of health
    return fact.when is None or fact.when.start <= fact.valid_from


#: words that tell of a state, not of a moment: one begun, changed, given up or kept, a habit,
#: health, a bond or a position ("has joined a watercolour group", "开始跑步了，每周跑三次")
_STATE_CUE: Final = re.compile(
    r"\b(?:start(?:s|ed|ing)?|began|begun|join(?:s|ed)|switch(?:ed)?|gone over to|took up|"
    r"taken up|quit|stopped|gave up|given up|now|every|each|weekly|daily|anymore|no longer|"
    r"allerg\w*|diagnos\w*|medic\w*|prescri\w*|pregnan\w*|propos\w*|engaged|married|"
    r"divorced|offer|hired|promoted|moved|adopted|born)\b|"
    r"开始|现在|每周|每天|每个月|不再|戒了|停了|过敏|确诊|诊断|药|怀孕|求婚|订婚|结婚|离婚|offer|入职|"
    r"搬|领养|出生",
    re.IGNORECASE,
)


def of_a_moment(fact: Fact) -> bool:
    """Whether a fact speaks of a moment: said for the next few hours or as an errand
    (:func:`memstrata.curate.frames.passing`), or dated the very day it was said ("今天早上…
    虾饺真好吃", whose words of time the fact's text may no longer hold)."""
    if frames.passing(fact.text):
        return True
    when = fact.when
    return bool(
        when is not None
        and when.end - when.start <= timedelta(days=1)
        and when.start.date() == fact.valid_from.date()
    )


def restriction_over(fact: Fact, now: datetime | None) -> bool:
    """Whether a restriction said for a while ("no running for 6 weeks") has run its time."""
    return bool(
        now is not None
        and (fact.slot or "").startswith("restriction")
        and fact.when is not None
        and fact.when.end <= now
    )


def _shown(fact: Fact, spec: frames.Kind, now: datetime | None) -> bool:
    """Whether L1 shows a slotted fact in its section: not a passing moment, not a plan
    called off or whose time has passed."""
    if not lasting(fact):
        return False
    if restriction_over(fact, now):
        return False  # "no running for 6 weeks", said in February: over by April
    if spec.section == frames.PLANS:
        if fact.value is None:
            return False  # called off
        if now is not None and fact.when is not None and fact.when.end <= now:
            return False
    return True


def select(
    facts: Sequence[Fact],
    episodes: Sequence[Episode],
    *,
    counter: TokenCounter,
    budget: int = DEFAULT_ESSENTIALS_BUDGET,
    user: str | None = None,
    now: datetime | None = None,
    closed: Mapping[str, datetime] | None = None,
) -> Selection:
    """L1 from the current ``facts`` (``episodes``: every turn they cite) within ``budget``
    tokens; ``user`` is the user's speaker (:func:`choose_user`), None when unnamed; ``now``:
    plans whose time has passed by then are left out; ``closed``: the health states closed
    since (:func:`closed_states`). The safety facts are all taken first, whatever the
    budget."""
    by_id = {e.id: e for e in episodes}
    session_of = {e.id: (e.scope.thread, e.session_id) for e in episodes}
    of_speaker: dict[str, list[Fact]] = defaultdict(list)  # "": the unnamed user
    for fact in facts:
        if fact.valid_to is not None:
            continue
        first = next((by_id[s] for s in fact.sources if s in by_id), None)
        if first is None or first.speaker == "assistant" or first.role in _NOT_PEOPLE:
            continue
        speaker = "" if first.speaker in _UNNAMED_SPEAKERS else str(first.speaker)
        of_speaker[user if user and not speaker else speaker].append(fact)
    mine = user or ""
    people: dict[str, Person] = {}
    me: Person | None = None
    for speaker in sorted(of_speaker, key=lambda n: (n != mine, n)):
        section = "Profile" if speaker == mine else f"People: {speaker}"
        person = _person(speaker or None, section, of_speaker[speaker], session_of, now, closed)
        people[person.name] = person
        if speaker == mine:
            me = person
    if user:
        first_turn = next((e for e in episodes if e.speaker == user), None)
        if first_turn is not None:
            me = me or people.setdefault(user, Person(user))
            name_entry = Entry("Profile", f"name: {user}", (), (first_turn.id,), 1)
            me.slots = {"name": [name_entry], **me.slots}
            people = {user: me, **{k: v for k, v in people.items() if k != user}}
    others = [p for p in people.values() if p is not me]
    for person in people.values():
        if person is not me:
            person.preferences = [
                Entry(f"People: {person.name}", e.text, e.facts, e.sources, e.support)
                for e in person.preferences
            ]
    for person in people.values():
        if person is not me:
            person.safety = [
                Entry(f"People: {person.name}", e.text, e.facts, e.sources, e.support)
                for e in person.safety
            ]
            person.health_notes = [
                Entry(f"People: {person.name}", e.text, e.facts, e.sources, e.support)
                for e in person.health_notes
            ]

    def as_section(entries: Sequence[Entry], section: str, most: int) -> list[Entry]:
        return [Entry(section, e.text, e.facts, e.sources, e.support) for e in entries][:most]

    # every safety fact, the user's and the people's, is taken ahead of any budget cut
    safety = as_section(me.safety, frames.SAFETY, len(me.safety)) if me is not None else []
    safety += [e for p in others for e in p.safety]
    pass_order: list[list[Entry]] = []
    if me is not None:  # who the user is, then the health notes, first of the budget
        pass_order.append([e for entries in me.slots.values() for e in entries])
        pass_order.append(as_section(me.health_notes, frames.SAFETY, _MAX_HEALTH_NOTES))
    pass_order.append([e for p in others for e in p.health_notes[:_MAX_PEOPLE_ITEMS]])
    if me is not None:
        pass_order.append(as_section(me.preferences, "Preferences", _MAX_PREFERENCES))
        pass_order.append(as_section(me.routines, frames.ROUTINES, _MAX_ROUTINES))
        pass_order.append(as_section(me.plans, frames.PLANS, _MAX_PLANS))
    pass_order.append([e for p in others for entries in p.slots.values() for e in entries])
    if me is not None:
        pass_order.append(as_section(me.key_facts, "Key facts", _MAX_KEY_FACTS))
    pass_order.append([e for p in others for e in p.preferences[:_MAX_PEOPLE_ITEMS]])
    pass_order.append([e for p in others for e in p.key_facts[:_MAX_PEOPLE_ITEMS]])
    chosen: list[Entry] = list(safety)  # ahead of any budget cut
    used = sum(counter.count(e.text) + 2 for e in safety)
    sections: set[str] = {e.section for e in safety}
    used += sum(counter.count(section) + 2 for section in sections)
    for entries in pass_order:
        for entry in entries:
            cost = counter.count(entry.text) + 2
            if entry.section not in sections:
                cost += counter.count(entry.section) + 2
            if used + cost > budget:
                continue
            chosen.append(entry)
            sections.add(entry.section)
            used += cost
    order = [
        frames.SAFETY,
        "Profile",
        "Preferences",
        frames.ROUTINES,
        frames.PLANS,
        "Key facts",
        *(f"People: {p.name}" for p in others),
    ]
    chosen.sort(key=lambda e: order.index(e.section) if e.section in order else len(order))
    profile = (
        {
            label(key): Slot(
                "; ".join(_value(e) for e in entries),
                tuple(dict.fromkeys(s for e in entries for s in e.sources)),
                round(1.0 - 0.5 ** max(1, max(e.support for e in entries)), 3),
                next((e.as_of for e in entries if e.as_of), None),
            )
            for key, entries in me.slots.items()
        }
        if me is not None
        else {}
    )
    profile_facts = (
        {
            label(key): tuple(dict.fromkeys(f for e in entries for f in e.facts))
            for key, entries in me.slots.items()
        }
        if me is not None
        else {}
    )
    return Selection(user, people, chosen, profile, profile_facts)


def ended_states(facts: Iterable[Fact]) -> dict[str, datetime]:
    """When each thing a state ended names was last ended (its key without the person:
    "medication:老周/tiotropium" -> "tiotropium"), read once for :func:`ended_since`."""
    ended: dict[str, datetime] = {}
    for f in facts:
        if f.slot is not None and f.value is None:
            key = f.slot.partition(":")[2].rpartition("/")[2]
            if key not in ended or f.valid_from > ended[key]:
                ended[key] = f.valid_from
    return ended


#: the kinds of health state a note names, whose history :func:`closed_states` reads
_HEALTH_STATE_KINDS: Final = ("condition", "medication")


def closed_states(store: RecordStore, scope: Scope) -> dict[str, datetime]:
    """When each thing a health state of ``scope`` held was closed with nothing of it held
    since, read from its condition and medicine facts, current and closed: a pregnancy a
    child's birth closed, a medicine a switch closed (its key without the person, as
    :func:`ended_states`). Consolidation and wake_up read it alike."""
    history = (
        f
        for kind in _HEALTH_STATE_KINDS
        for f in store.iter_facts(scope, FactFilter(slot_kind=kind))
    )
    held: set[str] = set()
    closed: dict[str, datetime] = {}
    for f in history:
        if f.slot is None or f.value is None:
            continue
        key = f.slot.partition(":")[2].rpartition("/")[2]
        if f.valid_to is None:
            held.add(key)
        elif key not in closed or f.valid_to > closed[key]:
            closed[key] = f.valid_to
    return {key: when for key, when in closed.items() if key not in held}


def ended_or_closed(facts: Iterable[Fact], closed: Mapping[str, datetime]) -> dict[str, datetime]:
    """:func:`ended_states` of ``facts`` with the states ``closed`` (:func:`closed_states`),
    the later of the two for a thing both name."""
    ended = ended_states(facts)
    for key, when in closed.items():
        if key not in ended or when > ended[key]:
            ended[key] = when
    return ended


def ended_since(note: Fact, ended: Mapping[str, datetime]) -> bool:
    """Whether every medicine and condition a health note names has been ended by a later
    state (``ended``: :func:`ended_states`; "他每天早上吸一次思力华", then "停了思力华"): L1
    keeps the note out, the archive keeps it; a note that also names one still held stays."""
    named = {
        *lexicon.canonical(lexicon.MEDICATIONS, note.text),
        *lexicon.canonical(lexicon.CONDITIONS, note.text),
    }
    # every thing it names: one still held keeps it
    return bool(named) and all(k in ended and ended[k] > note.valid_from for k in named)


#: the slotted kinds a fact without a slot may state by its words (:func:`supersede.slot_of`)
_TOLD_KINDS: Final[dict[str, tuple[str, ...]]] = {
    "residence": ("residence",),
    "job": ("job", "employer"),
}


def latest_states(facts: Iterable[Fact]) -> dict[str, Fact]:
    """The newest current fact of each single-valued kind that :data:`_TOLD_KINDS` names,
    for :func:`outdated`."""
    kinds = {k for ks in _TOLD_KINDS.values() for k in ks}
    latest: dict[str, Fact] = {}
    for fact in facts:
        kind = fact.slot.partition(":")[0] if fact.slot else None
        if kind in kinds and fact.value and fact.valid_to is None:
            held = latest.get(kind)
            if held is None or (fact.valid_from, fact.id) > (held.valid_from, held.id):
                latest[kind] = fact
    return latest


def outdated(fact: Fact, latest_of: Mapping[str, Fact]) -> bool:
    """Whether a fact without a slot states, in its words, a home or a job the person has a
    newer value of ("The user lives in a flatshare in Brixton" after "residence: Peckham"):
    L1 serves the current value, never the old one beside it as a key fact."""
    if fact.slot is not None:
        return False
    told = slot_of(fact.text)
    if told is None:
        return False
    for kind in _TOLD_KINDS.get(told.key, ()):
        held = latest_of.get(kind)
        if (
            held is not None
            and held.valid_from > fact.valid_from
            and not same_value(held.value, told.value)
            and " ".join(held.text.casefold().split()).startswith(told.subject)  # same person
        ):
            return True
    return False


def _unnamed(facts: Sequence[Fact]) -> str:
    """The subject extraction wrote for an unnamed user (English unless the facts are Chinese)."""
    chinese = any(f.text.startswith(UNNAMED[1]) for f in facts)
    return UNNAMED[1] if chinese else UNNAMED[0]
