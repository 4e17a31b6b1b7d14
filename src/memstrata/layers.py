"""Serving memory to an agent in the fewest tokens that carry what matters.

``wake_up`` assembles L0 and L1: the identity; the safety facts (allergies, conditions,
medications, diet and accessibility needs: the essentials document's ``Safety`` section and any
current health fact it does not hold yet, a state or one filed since the last consolidation),
before everything else so that no budget cut reaches them (a health note consolidation read
and left out of the essentials is ranked with the facts below); the profile and its
preferences; the essentials document as curated (minus what the profile already says); and
the most important current facts it does not state (by confidence x importance x recency; a
"preference" that only states a feeling, a passing moment and a plan whose time has passed are
left to the archive), grouped by topic, each with its date (:mod:`memstrata.curate.dating`),
within a token budget. It trims by priority (profile, then preferences, then essentials, then
facts, least important first) and says so, and how to get more, when it had to leave something
out. A thread with no memory of its own falls back to its user's memory (switchable).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

import numpy as np

from memstrata.curate.dating import dated
from memstrata.curate.decay import DecayPolicy
from memstrata.curate.essentials import (
    anecdote,
    closed_states,
    ended_or_closed,
    ended_since,
    expired,
    lasting,
    latest_states,
    of_a_moment,
    outdated,
    restriction_over,
)
from memstrata.curate.frames import SAFETY
from memstrata.curate.slots import is_feeling
from memstrata.document.coverage import (
    consolidated_through,
    coverage,
    filed_in_topic,
    readable,
    topic_key,
)
from memstrata.document.format import Document as CuratedDocument
from memstrata.document.service import ESSENTIALS_KEY, topic_slug
from memstrata.errors import InvalidInputError
from memstrata.model import (
    Category,
    Document,
    DocumentKind,
    Fact,
    FactFilter,
    Identity,
    Profile,
    Scope,
)
from memstrata.ports import RecordStore
from memstrata.render import BLOCK_FRAME, escape, memory_block
from memstrata.tokens import HeuristicTokenCounter, TokenCounter

DEFAULT_BUDGET: Final = 800
DEFAULT_RECALL_BUDGET: Final = 1200
_NOTE_RESERVE: Final = 40
_MIN_FACT_TOKENS: Final = 6
_MAX_MISSES: Final = 50


@dataclass(slots=True)
class WakeUp:
    text: str
    tokens: int
    budget: int
    scope: Scope
    facts_included: list[str] = field(default_factory=list)
    left_out: dict[str, int] = field(default_factory=dict)  # part -> items not shown

    @property
    def trimmed(self) -> bool:
        return any(self.left_out.values())


def _facts(store: RecordStore, scope: Scope) -> list[Fact]:
    return list(store.iter_facts(scope, FactFilter(current_only=True)))


def serving_scope(
    store: RecordStore, scope: Scope, *, fall_back_to_user: bool, turns_count: bool
) -> Scope:
    """The scope to serve from: a thread's own, or its user's (with the thread's agent, if it
    names one) when the thread holds no memory of its own. For wake_up (``turns_count``
    off), a thread's own memory is a profile or an essentials document of its own: its facts
    are curated where the user's memory is (automatic curation consolidates there), so a
    thread with facts but no curated documents is served the user's whole L1, which holds
    them. With ``turns_count`` its facts, turns and any document count too (for context).
    Each check is one indexed query that stops at the first row."""
    if not fall_back_to_user or scope.thread is None:
        return scope
    home = Scope(scope.user, agent=scope.agent)
    if turns_count and store.list_facts(scope, FactFilter(current_only=True), limit=1):
        return scope
    if store.get_document(scope, DocumentKind.PROFILE, "profile") is not None:
        return scope
    if store.get_document(scope, DocumentKind.ESSENTIALS, ESSENTIALS_KEY) is not None:
        return scope
    if turns_count and (store.list_episodes(scope, limit=1) or store.list_documents(scope)):
        return scope
    if home != scope and (
        store.get_document(home, DocumentKind.ESSENTIALS, ESSENTIALS_KEY) is not None
        or store.get_document(home, DocumentKind.PROFILE, "profile") is not None
    ):
        return home
    return scope.user_scope()


class FactCache:
    """Current facts per scope, reused while the user's change feed has not moved."""

    def __init__(self, store: RecordStore) -> None:
        self.store = store
        self._entries: dict[Scope, tuple[int, list[Fact]]] = {}

    def facts(self, scope: Scope) -> list[Fact]:
        head = self.store.generation(scope.user)
        cached = self._entries.get(scope)
        if cached is None or cached[0] != head:
            cached = (head, _facts(self.store, scope))
            self._entries[scope] = cached
        return cached[1]


def rank_facts(facts: Sequence[Fact], now: datetime, policy: DecayPolicy) -> list[Fact]:
    """Facts by confidence x importance x recency x use, best first (vectorised)."""
    if not facts:
        return []
    confidence = np.array([f.confidence for f in facts])
    importance = np.array([f.importance for f in facts])
    age_days = np.array([max(0.0, (now - f.valid_from).total_seconds() / 86_400.0) for f in facts])
    uses = np.array([f.access_count for f in facts], dtype=float)
    score = (
        confidence * importance * 0.5 ** (age_days / policy.half_life_days) * (1.0 + np.log1p(uses))
    )
    return [facts[i] for i in np.argsort(-score, kind="stable")]


#: a date in a text already ("(2026-05-15)", "week of 2026-05-11", "2026年5月")
_DATED: Final = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b|\d{4}年\d{1,2}月")


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _people_named(facts: Sequence[Fact]) -> frozenset[str]:
    """The names the current facts give the people and pets of a life (``child:Ethan``,
    ``pet:Hamish``), casefolded."""
    names = set()
    for fact in facts:
        kind, _, key = (fact.slot or "").partition(":")
        if kind in ("child", "pet", "family", "friend", "partner") and key and key[:1].isupper():
            names.add(key.casefold())
        elif kind in ("child", "pet", "family", "friend") and key and not key.isascii():
            names.add(key)
    return frozenset(names)


def _names_one_of(fact: Fact, names: frozenset[str]) -> bool:
    words = set(re.findall(r"[A-Za-z]+", fact.text.casefold()))
    return any(n in words if n.isascii() else n in fact.text for n in names)


def _lasting(fact: Fact, now: datetime) -> bool:
    """Whether a current fact belongs in L1: not a passing moment (importance under
    :data:`memstrata.curate.essentials.PASSING`), not a plan called off or whose time has
    passed."""
    if not lasting(fact) or restriction_over(fact, now):
        return False
    if fact.category == Category.PLAN or (fact.slot or "").startswith(("plan", "goal")):
        if fact.slot is not None and fact.value is None:
            return False  # called off
        if fact.when is not None and fact.when.end <= now:
            return False
    return not expired(fact, now)


def wake_up(
    store: RecordStore,
    scope: Scope,
    *,
    now: datetime,
    budget: int = DEFAULT_BUDGET,
    counter: TokenCounter | None = None,
    fall_back_to_user: bool = True,
    cache: FactCache | None = None,
) -> WakeUp:
    if budget < 2 * _NOTE_RESERVE:
        raise InvalidInputError(f"a wake-up budget needs at least {2 * _NOTE_RESERVE} tokens")
    counter = counter or HeuristicTokenCounter()
    scope = serving_scope(store, scope, fall_back_to_user=fall_back_to_user, turns_count=False)
    identity_doc = store.get_document(scope, DocumentKind.IDENTITY, "identity")
    identity = Identity.from_document(identity_doc) if identity_doc else Identity("")
    essentials_doc = store.get_document(scope, DocumentKind.ESSENTIALS, ESSENTIALS_KEY)
    essentials = readable(essentials_doc) if essentials_doc else None
    profile_doc = store.get_document(scope, DocumentKind.PROFILE, "profile")
    profile = Profile.from_document(profile_doc) if profile_doc else Profile()
    current = cache.facts(scope) if cache is not None else _facts(store, scope)
    lines: list[str] = []
    # room for the block's frame and for the line that says what was left out
    used = _NOTE_RESERVE + counter.count(BLOCK_FRAME) + 1
    result = WakeUp("", 0, budget, scope)

    def add(*new: str) -> bool:
        """Add ``new`` lines together, or none of them when they do not fit."""
        nonlocal used
        cost = sum(counter.count(line) + 1 for line in new)
        if used + cost > budget:
            return False
        lines.extend(new)
        used += cost
        return True

    if identity.text.strip():  # on one line, like every stored text in the block
        result.left_out["identity"] = int(not add("## Identity", escape(identity.text.strip())))
    stated: set[str] = set()
    covered = coverage(store, scope)
    # safety first: what the essentials hold in its Safety section, then any current health
    # fact they do not hold yet (filed a moment ago, or said since the last consolidation)
    safety = (
        [b.text for s in essentials.sections if s.heading == SAFETY for b in s.bullets]
        if essentials is not None
        else []
    )
    # what states have ended or were closed since (a pregnancy a birth closed), read once,
    # and only when there is a health note to read them for
    notes = any(f.category == Category.HEALTH and f.slot is None for f in current)
    stopped = ended_or_closed(current, closed_states(store, scope) if notes else {})
    health = [
        f
        for f in current
        if f.category == Category.HEALTH
        and not restriction_over(f, now)
        and not (essentials is not None and covered.in_essentials(f))
        and not covered.in_profile(f)
        # once consolidated, a health note whose every medicine and condition has been ended
        # since stays out
        and not (f.slot is None and essentials_doc is not None and ended_since(f, stopped))
        # a note consolidation read and left out of the essentials (their cap of notes,
        # or their budget) is ranked with the key facts below, not served ahead of the profile
        and not (f.slot is None and essentials is not None and covered.read(f))
    ]
    shown = 0
    served: list[str] = []  # the health facts served here
    items: list[tuple[str, Fact | None]] = [
        *((line, None) for line in safety),
        *((dated(f), f) for f in health),
    ]
    for line, fact in items:
        if _normal(line) in stated:
            continue
        # a safety line too long for what is left does not keep a shorter one after it out
        if not add(*([] if shown else ["## Safety"]), f"- {escape(line)}"):
            continue
        shown += 1
        stated.add(_normal(line))
        if fact is not None:
            served.append(fact.id)
    result.left_out["safety"] = len(safety) + len(health) - shown
    result.facts_included = served
    health_ids = {f.id for f in health}
    for title, part, slots in (  # the profile first: who the user is
        ("Profile", "profile", profile.fields),
        ("Preferences", "preferences", profile.preferences),
    ):
        shown = 0
        for key, slot in slots.items():
            lead = [] if shown else [f"## {title}"]
            if not add(*lead, f"- {escape(key)}: {escape(slot.shown())}"):
                break
            shown += 1
            stated.add(_normal(f"{key}: {slot.value}"))
            stated.add(_normal(f"{key}: {slot.shown()}"))
        result.left_out[part] = len(slots) - shown
    if essentials is not None:  # L1 as curated (and perhaps edited by hand), in its order
        bullets = [
            (s.heading, b)
            for s in essentials.sections
            if s.heading != SAFETY  # served first, above
            for b in s.bullets
            if _normal(b.text) not in stated  # said by the profile already
        ]
        shown, heading = 0, None
        for section, bullet in bullets:
            lead = [] if shown else ["## Essentials"]
            if section != heading:
                lead.append(f"### {escape(section)}" if section else "###")
            if not add(*lead, f"- {escape(bullet.text)}"):
                break
            shown, heading = shown + 1, section
        result.left_out["essentials"] = len(bullets) - shown
        stated |= {_normal(b.text) for _, b in bullets}
    # facts the essentials or the profile speak for (as they stand, edits and deletions
    # included) stay out: each thing is served once; an anecdote only for the people of the
    # user's life it names (the dog by its name, a child)
    people = _people_named(current)
    latest = latest_states(current)  # a home or a job said in words, older than its slot
    current = [
        f
        for f in current
        if f.id not in health_ids
        and not outdated(f, latest)
        and not (f.category == Category.HEALTH and f.slot is None and ended_since(f, stopped))
        and not (essentials is not None and covered.in_essentials(f))
        and not covered.in_profile(f)
        and _normal(f.text) not in stated
        and _normal(dated(f)) not in stated
        and _lasting(f, now)
        and not (anecdote(f) and not _names_one_of(f, people))
    ]
    # a "preference" that is a feeling or a reaction stays in L2: L1 serves those with an object
    current = [
        f
        for f in current
        if f.category != Category.PREFERENCE
        or not (is_feeling(f.text) or (f.slot is None and of_a_moment(f)))
    ]
    facts = rank_facts(current, now, DecayPolicy())
    chosen: list[Fact] = []
    header = "## Key facts"
    header_cost = counter.count(header) + 1
    misses = 0
    # each topic's heading, then the lines of its chosen facts, each rendered once
    groups: dict[str, list[str]] = {}
    for fact in facts:  # most important first; grouped by topic when rendered
        if budget - used - header_cost < _MIN_FACT_TOKENS or misses >= _MAX_MISSES:
            break  # nothing more can fit: stop instead of measuring every remaining fact
        topic = topic_key(fact)
        # the topic's heading comes with its first fact
        lead = [] if topic in groups else [f"### {escape(topic)}"]
        line = f"- {escape(dated(fact))}"
        cost = sum(counter.count(part) + 1 for part in (*lead, line))
        if used + header_cost + cost > budget:
            misses += 1
            continue
        chosen.append(fact)
        groups.setdefault(topic, lead).append(line)
        used += cost
    if chosen:
        lines.append(header)
        used += header_cost
        for members in groups.values():
            lines.extend(members)
    result.facts_included += [f.id for f in chosen]
    result.left_out["facts"] = len(facts) - len(chosen)
    text = memory_block(lines)
    if result.trimmed:
        missing = ", ".join(f"{n} {part}" for part, n in result.left_out.items() if n)
        note = (
            f"(not shown within {budget} tokens: {missing}; use recall(topic) or "
            "search(query) for more)"
        )
        text = f"{text}\n{note}" if text else note
    result.text = text
    result.tokens = counter.count(result.text)
    return result


@dataclass(slots=True)
class Recall:
    topic: str
    text: str
    tokens: int
    budget: int
    documents: list[str] = field(default_factory=list)
    facts_included: list[str] = field(default_factory=list)
    left_out: int = 0


#: topic document keys whose content is near a topic name in meaning, nearest first
TopicFinder = Callable[[str, Scope], Sequence[str]]


def _document_lines(doc: CuratedDocument, said: Mapping[str, datetime] | None = None) -> list[str]:
    """A curated document in its markdown form (footnote citations, id anchors), every
    stored part of it escaped; each bullet with the day its newest cited turn was said
    (``said``: episode id -> time), unless its words carry a date already."""
    numbers: dict[str, int] = {}
    lines = [f"# {escape(doc.title)}"]
    for section in doc.sections:
        lines.append(f"## {escape(section.heading)}")
        for bullet in section.bullets:
            marks = "".join(
                f"[^{numbers.setdefault(str(c), len(numbers) + 1)}]" for c in bullet.citations
            )
            text = bullet.text
            times = [said[c.episode_id] for c in bullet.citations if said and c.episode_id in said]
            if times and not _DATED.search(text):
                text = f"{text.rstrip()} (said {max(times).date().isoformat()})"
            parts = ("-", escape(text), marks, f"<!--{escape(bullet.id)}-->")
            lines.append(" ".join(p for p in parts if p))
    if numbers:
        lines += ["---", *(f"[^{n}]: {escape(c)}" for c, n in numbers.items())]
    return lines


def _named(doc: Document, wanted: str) -> bool:
    """Whether a topic document's key or title names the topic (or the topic names it)."""
    title = topic_slug(str(doc.content.get("title", "")))
    return any(n and (wanted in n or n in wanted) for n in (doc.key, title))


def recall(
    store: RecordStore,
    scope: Scope,
    topic: str,
    *,
    now: datetime,
    budget: int = DEFAULT_RECALL_BUDGET,
    counter: TokenCounter | None = None,
    cache: FactCache | None = None,
    near: TopicFinder | None = None,
) -> Recall:
    """L2 for one topic: its document(s) as markdown with citations, then its most important
    current facts not already in them, within ``budget`` tokens, in a ``<memory>`` block.

    The documents are those whose key or title names the topic; when none does, those that
    ``near`` finds by meaning (a topic named in another language, or by a word its bullets
    use), nearest first; none when nothing is near."""
    if not topic.strip():
        raise InvalidInputError("name a topic to recall")
    if budget < 2 * _NOTE_RESERVE:
        raise InvalidInputError(f"a recall budget needs at least {2 * _NOTE_RESERVE} tokens")
    counter = counter or HeuristicTokenCounter()
    wanted = topic_slug(topic)
    own = {d.key: d for d in store.list_documents(scope, DocumentKind.TOPIC) if d.scope == scope}
    documents = [d for d in own.values() if wanted and _named(d, wanted)]
    if not documents and own and near is not None:  # no search when no document exists
        documents = [own[key] for key in dict.fromkeys(near(topic, scope)) if key in own]
    result = Recall(topic, "", 0, budget)
    lines: list[str] = []
    used = _NOTE_RESERVE + counter.count(BLOCK_FRAME) + 1
    shown_texts: set[str] = set()
    cited = sorted(
        {
            c.episode_id
            for d in documents
            if (r := readable(d))
            for s in r.sections
            for b in s.bullets
            for c in b.citations
        }
    )
    said = {e.id: e.time for e in store.get_episodes(scope, cited)} if cited else {}
    for doc in documents:
        curated = readable(doc)
        if curated is None:
            continue
        rendered = _document_lines(curated, said)
        cost = sum(counter.count(line) + 1 for line in rendered)
        if used + cost > budget:
            result.left_out += 1
            continue
        lines += rendered
        used += cost
        result.documents.append(doc.key)
        shown_texts |= {b.text for s in curated.sections for b in s.bullets}
    keys = {wanted, *(d.key for d in documents)}
    current = cache.facts(scope) if cache is not None else _facts(store, scope)
    # facts filed in these documents are what the documents, as edited, say about them
    through = consolidated_through(store, scope) if documents else None
    related = [
        f
        for f in current
        if f.topic is not None
        and (topic_slug(f.topic) in keys or (wanted and wanted in topic_slug(f.topic)))
        and f.text not in shown_texts
        and dated(f) not in shown_texts
        and not any(filed_in_topic(f, d.key, through) for d in documents)
    ]
    heading = f"## Facts about {escape(topic.strip())}"
    for fact in rank_facts(related, now, DecayPolicy()):
        line = f"- {escape(dated(fact))}"
        cost = (
            counter.count(line) + 1 + (0 if result.facts_included else counter.count(heading) + 1)
        )
        if used + cost > budget:
            result.left_out += 1
            continue
        if not result.facts_included:
            lines.append(heading)
        lines.append(line)
        used += cost
        result.facts_included.append(fact.id)
    text = memory_block(lines)
    if result.left_out:
        note = (
            f"({result.left_out} more item(s) about {escape(topic)} not shown within {budget} "
            "tokens; use search(query) for details)"
        )
        text = f"{text}\n{note}" if text else note
    result.text = text or f"(nothing is remembered about {escape(topic)})"
    result.tokens = counter.count(result.text)
    return result
