"""What L1 states: the best-supported profile slots, preferences and key facts of each person,
the scope's user first, within a token budget.

Every current fact is attributed to the speaker of the turn it rests on (its first source). The
scope's user is, in this order: the speaker a setting or argument names (when they speak in the
scope); else the speaker with the most turns of role ``user`` (ties: who spoke first); an unnamed
user's facts ("The user ...", "用户...") belong to the user. Everyone else who has facts is one
of the people.

For each person, :mod:`memstrata.curate.slots` reads the profile slots the facts state and the
preferences that have an object. Values of a slot that name the same thing
(:func:`memstrata.curate.slots.same_thing`) are one value. A value's support is the number of
distinct sessions whose turns its facts cite; a single-valued slot keeps its best-supported
value (ties: the newest). A key fact is any other fact of importance :data:`KEY_IMPORTANCE` or
more (importance rises with support, :mod:`memstrata.curate.merge`). The budget is filled in
this order, each part best supported first: the user's slots, the user's preferences, the
people's slots, the user's key facts, the people's preferences, the people's key facts; what
does not fit stays in the L2 topic documents. Sections come out as ``Profile``, ``Preferences``,
``Key facts`` (the user's) and ``People: <name>`` for each other person.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from memstrata.curate.slots import (
    ORDER,
    SlotFill,
    label,
    preference_of,
    same_thing,
    slots_in,
    subject_of,
)
from memstrata.model import Category, Episode, Fact, Role, Slot
from memstrata.tokens import TokenCounter

DEFAULT_ESSENTIALS_BUDGET: Final = 400
KEY_IMPORTANCE: Final = 0.85
#: the subject extraction writes for a speaker with no name
UNNAMED: Final = ("The user", "用户")
_MAX_PREFERENCES: Final = 6
_MAX_KEY_FACTS: Final = 5
_MAX_PEOPLE_ITEMS: Final = 3
_UNNAMED_SPEAKERS: Final = frozenset({None, "user", ""})


@dataclass(frozen=True, slots=True)
class Entry:
    """One bullet L1 should hold: its section, text, the facts it stands for and their
    sources, and its support (distinct sessions)."""

    section: str
    text: str
    facts: tuple[str, ...]
    sources: tuple[str, ...]
    support: int


@dataclass(slots=True)
class Person:
    """What the facts say about one speaker."""

    name: str
    slots: dict[str, list[Entry]] = field(default_factory=dict)  # key -> values, best first
    preferences: list[Entry] = field(default_factory=list)
    key_facts: list[Entry] = field(default_factory=list)

    def slot_values(self) -> dict[str, str]:
        """Each filled slot's value(s) as one text."""
        return {
            label(key): "; ".join(_value(e) for e in entries) for key, entries in self.slots.items()
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
) -> Person:
    """A speaker's slots, preferences and key facts; ``name`` None: the speaker has no name,
    and each fact's own subject ("Alice ...", "The user ...") is who it speaks of."""
    subjects = Counter(subject_of(f.text) for f in facts) if name is None else Counter()
    person = Person(name or next((s for s, _ in subjects.most_common() if s), _unnamed(facts)))
    values: dict[str, dict[str, list[Fact]]] = defaultdict(lambda: defaultdict(list))
    liked: dict[str, list[Fact]] = defaultdict(list)
    wording: dict[str, str] = {}
    used: set[str] = set()
    for fact in facts:
        who = name or subject_of(fact.text)
        if who is None:
            continue
        for fill in slots_in(fact.text, who):
            values[fill.key][fill.value.casefold()].append(fact)
            wording.setdefault(f"{label(fill.key)}: {fill.value.casefold()}", fill.value)
            used.add(fact.id)
        short = preference_of(fact.text, who)
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
            else:
                merged[same] = (merged[same][0], merged[same][1] + backing_of)
        ranked = rank(merged, key)
        if SlotFill(key, "").single:
            ranked = ranked[:1]
        told = [wording[f"{label(key)}: {value}"] for value, _ in ranked]
        backing = [f for _, facts_of in ranked for f in dict.fromkeys(facts_of)]
        person.slots[key] = [entry(f"{label(key)}: {'; '.join(told)}", backing)]
    person.preferences = sorted(
        (entry(wording[k], backing) for k, backing in liked.items()),
        key=lambda e: (e.support, len(e.facts)),
        reverse=True,
    )
    person.key_facts = sorted(
        (
            entry(f.text, [f])
            for f in facts
            if f.id not in used
            and f.category != Category.PREFERENCE
            and f.importance >= KEY_IMPORTANCE
        ),
        key=lambda e: (e.support, e.facts),
        reverse=True,
    )
    return person


def select(
    facts: Sequence[Fact],
    episodes: Sequence[Episode],
    *,
    counter: TokenCounter,
    budget: int = DEFAULT_ESSENTIALS_BUDGET,
    user: str | None = None,
) -> Selection:
    """L1 from the current ``facts`` (``episodes``: every turn they cite) within ``budget``
    tokens; ``user`` is the user's speaker (:func:`choose_user`), None when unnamed."""
    by_id = {e.id: e for e in episodes}
    session_of = {e.id: (e.scope.thread, e.session_id) for e in episodes}
    of_speaker: dict[str, list[Fact]] = defaultdict(list)  # "": the unnamed user
    for fact in facts:
        if fact.valid_to is not None:
            continue
        first = next((by_id[s] for s in fact.sources if s in by_id), None)
        if first is None or first.speaker == "assistant":
            continue
        speaker = "" if first.speaker in _UNNAMED_SPEAKERS else str(first.speaker)
        of_speaker[user if user and not speaker else speaker].append(fact)
    mine = user or ""
    people: dict[str, Person] = {}
    me: Person | None = None
    for speaker in sorted(of_speaker, key=lambda n: (n != mine, n)):
        section = "Profile" if speaker == mine else f"People: {speaker}"
        person = _person(speaker or None, section, of_speaker[speaker], session_of)
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
    pass_order: list[list[Entry]] = []
    if me is not None:
        pass_order.append([e for entries in me.slots.values() for e in entries])
        pass_order.append(
            [Entry("Preferences", e.text, e.facts, e.sources, e.support) for e in me.preferences][
                :_MAX_PREFERENCES
            ]
        )
    pass_order.append([e for p in others for entries in p.slots.values() for e in entries])
    if me is not None:
        pass_order.append(
            [Entry("Key facts", e.text, e.facts, e.sources, e.support) for e in me.key_facts][
                :_MAX_KEY_FACTS
            ]
        )
    pass_order.append([e for p in others for e in p.preferences[:_MAX_PEOPLE_ITEMS]])
    pass_order.append([e for p in others for e in p.key_facts[:_MAX_PEOPLE_ITEMS]])
    chosen: list[Entry] = []
    used = 0
    sections: set[str] = set()
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
    order = ["Profile", "Preferences", "Key facts", *(f"People: {p.name}" for p in others)]
    chosen.sort(key=lambda e: order.index(e.section) if e.section in order else len(order))
    profile = (
        {
            label(key): Slot(
                "; ".join(_value(e) for e in entries),
                tuple(dict.fromkeys(s for e in entries for s in e.sources)),
                round(1.0 - 0.5 ** max(1, max(e.support for e in entries)), 3),
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


def _unnamed(facts: Sequence[Fact]) -> str:
    """The subject extraction wrote for an unnamed user (English unless the facts are Chinese)."""
    chinese = any(f.text.startswith(UNNAMED[1]) for f in facts)
    return UNNAMED[1] if chinese else UNNAMED[0]
