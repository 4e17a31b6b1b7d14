"""Context assembly: the few hundred tokens of memory an agent needs for one query.

**Routing.** The query is routed (heuristics by default; :func:`llm_router` asks a chat model):
``none`` (small talk: no memory at all), ``profile`` (about the user themself: L1 only, the
essentials document as it stands included), ``topic`` (names a topic memory has a document for:
that document's bullets join the candidates) or ``detail`` (anything else).

**Candidates.** The identity (L0); the profile's fields and preferences; curated bullets (the
essentials and topic documents, as edited) that the bullet search finds, every essentials
bullet for a question about the user and every bullet of a topic the query names; fact hits (a
fact a curated document speaks for is served as that document's bullet, as edited, nothing when
a person deleted it) and turn hits: :data:`HITS` of each kind, more for a larger budget (about
one per 25 tokens, at most ``_MAX_HITS``). A question about the user gets L1 only: no fact or
turn search.

**One scale of relevance.** Every candidate is scored in the units of the hybrid search's fused
score: its lexical and dense scores as z-scores over the entries of its kind, blended, so a
score is how many standard deviations an item stands above a typical entry for this query.
Turn, fact and bullet hits (bullets searched one by one, :meth:`Ranker.search` with
``passages``) carry theirs. A profile slot is scored as one more turn would be, against the
scope's turns (:meth:`Ranker.score_texts`; its vector is cached like any text's). A bullet
standing in for a fact takes the fact's score when it is that fact's bullet (of the bullets
citing the fact's turns, the one sharing most of its words; the others stand on their own
scores). For a query naming a topic, bullets are searched without the words naming it: each
bullet's passage is led by its document's title, which would raise all of that topic's bullets
alike. A candidate no search scores (a bullet of the named topic the search did not reach) has
no relevance and comes after every scored one.

**Bands.** Scores that differ by less than :data:`BAND` (half a standard deviation) are of
similar relevance: candidates are admitted by band (``floor(score / BAND)``, best first), by
the layer order :data:`PRIORITY` within a band, then by score. So an always-loaded item (a
profile slot, an essentials or topic bullet) that does not bear on the question (it scores near
0, a typical entry) comes after the evidence that does (the best hits stand several deviations
above it), and one that bears on it as much as a turn goes before that turn. The width sits in
the middle of a plateau of the curated LoCoMo measure (``docs/benchmarks.md``): from 0 (the
layer order only breaking exact ties) to one deviation the evidence recall is the same within
0.006 at every budget; from 1.5 deviations it falls (a layer's items crowd out better turns).

**The user's own words first.** A turn whose role is assistant, system or tool, and a fact,
bullet or slot citing only such turns, is the assistant's reading of what the user said: it
counts one band lower (its score minus :data:`BAND`), so it goes after every turn of the
user's own that scores no more than a band below it, and only a clearly more relevant reading
precedes the user's words.

**Always in** (unless routed ``none``): the identity first, then the safety items, the bullets
of the essentials section headed "Safety" and the profile fields and preferences whose keys
name allergies, health, medical conditions, medications, diet or accessibility (English or
Chinese, :func:`is_safety_key`), within :data:`SAFETY_SHARE` of the budget, best scored first
(a few short lines: the share bounds a long safety section, it is not tuned); past that share
they compete like the rest.

**Deduplication.** The same words twice are served once. And a fact or bullet that cites exactly
one turn, that turn being a candidate, and whose words are a rewrite of it (:func:`is_rewrite`:
at least :data:`REWRITE` of its content words are the turn's, the speaker's name and person
words aside, and both or neither are negated) is folded into the turn: served once, as the turn
(the user's own words, dated), at the better score of the two; when the turn does not fit, its
shortest rewrite is tried instead. (A turn captured only to cite a hand-written item, surface
``manual``, is folded into the item instead.) On LoCoMo 0.8 to 1 of the words give the same
figures; at 0.9, 87% of the rule facts citing one turn rewrite it, 0.6% the turn next to it.

**Budget and rendering.** Items are admitted in order while they fit (a later, shorter one may
still fit after a longer one is cut); the block never exceeds the budget. It is rendered as
``<memory>...</memory>`` by :mod:`memstrata.render`, which escapes every stored text in it and
keeps it on one line, so a stored ``</memory>`` or a forged tag stays inert text. ``explain``
gives, for every item in and cut, its score and where it came from, and the position it was
admitted at.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Final

from memstrata.document.coverage import readable, spoken_for
from memstrata.document.format import Bullet
from memstrata.document.format import Document as CuratedDocument
from memstrata.document.service import ESSENTIALS_KEY
from memstrata.errors import MemstrataError
from memstrata.index.tokenize import tokenize
from memstrata.model import (
    Document,
    DocumentKind,
    Granularity,
    Identity,
    Profile,
    Role,
    Scope,
    SearchHit,
    Slot,
)
from memstrata.ports import LLM, RecordStore
from memstrata.render import BLOCK_FRAME, escape, memory_block
from memstrata.tokens import HeuristicTokenCounter, TokenCounter
from memstrata.util.scripts import is_han

#: ``(query, scope, k, granularity)`` -> hits, best first; at granularity topic, one hit per
#: bullet (id: the bullet's, ``session_id``: its document's id)
Search = Callable[[str, Scope, int, Granularity], Sequence[SearchHit]]
#: ``(query, scope, texts)`` -> the fused score of each text as one more turn of the scope
#: (None: the scope has no turns)
TextScorer = Callable[[str, Scope, Sequence[str]], Sequence[float] | None]

_SMALL_TALK: Final = re.compile(
    r"^\s*(?:hi|hello|hey|thanks?|thank you|ok(?:ay)?|bye|good (?:morning|night)|cool|great|"
    r"你好|您好|谢谢|好的|再见|早上好|晚安|嗯|哈哈)[\s!.。！~]*$",
    re.IGNORECASE,
)
_ABOUT_ME: Final = re.compile(
    r"\b(?:who am i|about me|my (?:name|profile|preferences|job|role)|what do you know about me|"
    r"remember me)\b|我是谁|关于我|我的(?:名字|偏好|工作|资料)|你了解我|你记得我",
    re.IGNORECASE,
)
PRIORITY: Final = (
    "identity",
    "profile",
    "preferences",
    "essentials",
    "topic",
    "fact",
    "episode",
)
#: the width of a band of similar relevance, in fused-score units (standard deviations)
BAND: Final = 0.5
#: the share of the budget the safety items are admitted in first
SAFETY_SHARE: Final = 0.15
#: the share of a fact's content words a turn must hold for the fact to be a rewrite of it
REWRITE: Final = 0.9
#: how many hits of each kind are gathered, at least (more for a larger budget, up to
#: ``_MAX_HITS``)
HITS: Final = 40
_MAX_HITS: Final = 200
#: about what a hit costs in tokens (a dated turn): a budget gathers budget / this hits
_HIT_TOKENS: Final = 25

_SAFETY_KEYS: Final = (
    "allerg",
    "health",
    "medical",
    "medication",
    "diet",
    "accessibility",
    "过敏",
    "疾病",
    "用药",
    "饮食",
    "无障碍",
)
_SAFETY_HEADINGS: Final = ("safety", "安全")
_NAME_KEYS: Final = frozenset({"name", "名字", "姓名"})
#: the surface of a turn captured only to cite what a person wrote (a fact, a bullet)
_MANUAL: Final = "manual"
_NOT_OWN_WORDS: Final = frozenset({Role.ASSISTANT, Role.SYSTEM, Role.TOOL})
_PERSON_WORDS: Final = re.compile(r"\b(?:the )?user(?:'s)?\b|该用户|用户", re.IGNORECASE)
_NEGATION: Final = re.compile(r"\b(?:not|no|never|none|nor|cannot)\b|n't|[不没别未]", re.IGNORECASE)


def route(query: str, topics: Sequence[str]) -> tuple[str, str | None]:
    """``(route, topic)``: none, profile, topic (with the topic key) or detail."""
    if _SMALL_TALK.match(query):
        return "none", None
    if _ABOUT_ME.search(query):
        return "profile", None
    lowered = query.lower()
    for key in sorted(topics, key=len, reverse=True):
        if key.isascii():
            words = key.replace("-", " ")
            if len(key) > 2 and re.search(rf"(?<!\w){re.escape(words)}(?!\w)", lowered):
                return "topic", key
        elif len(key) >= 2 and key in query:
            return "topic", key
    return "detail", None


def without_topic(query: str, topic: str) -> str:
    """``query`` without the words that name ``topic`` (as :func:`route` finds them), or
    ``query`` itself when nothing else would be left."""
    if topic.isascii():
        words = re.escape(topic.replace("-", " ")).replace(r"\ ", r"[\s-]+")
        left = re.sub(rf"(?<!\w){words}(?!\w)", " ", query, flags=re.IGNORECASE)
    else:
        left = query.replace(topic, " ")
    return left if re.search(r"\w", left) else query


Router = Callable[[str, Sequence[str]], tuple[str, str | None]]
ROUTES: Final = ("none", "profile", "topic", "detail")


def llm_router(llm: LLM) -> Router:
    """A router asking a chat model; it falls back to the heuristics on any failure."""
    from memstrata.llm.prompting import data_messages, load_prompt

    prompt = load_prompt("route")

    def ask(query: str, topics: Sequence[str]) -> tuple[str, str | None]:
        messages = data_messages(prompt, {"message": query, "topics": list(topics)})
        try:
            reply = llm.complete_json(messages)
        except MemstrataError:
            return route(query, topics)
        chosen, topic = reply.get("route"), reply.get("topic")
        if chosen not in ROUTES or (chosen == "topic" and topic not in topics):
            return route(query, topics)
        return str(chosen), str(topic) if chosen == "topic" else None

    return ask


def is_safety_key(key: str) -> bool:
    """Whether a profile field or preference keyed ``key`` is a safety item: allergies,
    health, medical conditions, medications, diet, accessibility (过敏, 疾病, 用药, 饮食,
    无障碍)."""
    return key.strip().casefold().startswith(_SAFETY_KEYS)


def is_safety_heading(heading: str) -> bool:
    """Whether an essentials section headed ``heading`` holds the safety items."""
    return heading.strip().casefold().startswith(_SAFETY_HEADINGS)


@dataclass(frozen=True, slots=True)
class Item:
    """One candidate of the block: ``kind`` (one of :data:`PRIORITY`), its record's ``id``,
    its ``line`` as served (escaped), ``reason`` (what it is), ``relevance`` (its score on the
    one scale, None when nothing scored it) and ``scored`` (where that came from), the
    episodes it rests on (``sources``) and, once in, its 1-based ``position``. ``cut`` says
    why an item left out is out; ``text`` is its words as stored (not escaped, without the
    line's label), for a person reading the explanation."""

    kind: str
    id: str
    line: str
    reason: str
    rank: int = 0
    relevance: float | None = None
    scored: str = ""
    sources: tuple[str, ...] = ()
    position: int | None = None
    cut: str = ""
    text: str = ""


@dataclass(slots=True)
class Context:
    text: str
    tokens: int
    budget: int
    route: str
    topic: str | None
    included: list[Item] = field(default_factory=list)
    cut: list[Item] = field(default_factory=list)

    def explain(self) -> list[dict[str, object]]:
        """Every item in (in the order admitted) and cut: its kind, its words, why it is a
        candidate, its relevance and where it came from, and its position or why it is out."""

        def entry(item: Item, included: bool) -> dict[str, object]:
            place = f"admitted at {item.position}" if included else f"cut: {item.cut}"
            return {
                "id": item.id,
                "kind": item.kind,
                "text": item.text,
                "included": included,
                "why": f"{item.reason}; {item.scored}; {place}",
                "relevance": None if item.relevance is None else round(item.relevance, 4),
                "scored": item.scored,
                "position": item.position,
            }

        return [entry(i, True) for i in self.included] + [entry(i, False) for i in self.cut]


@dataclass(slots=True)
class _Candidate:
    """An item while the block is assembled: its relevance may still rise (the same item
    found twice, a rewrite folded in) and its rewrites wait behind it."""

    kind: str
    id: str
    line: str
    reason: str
    sources: tuple[str, ...] = ()
    relevance: float | None = None
    scored: str = "not scored: no search found it"
    rank: int = 0
    safety: bool = False
    own_words: bool = True
    order: int = 0
    text: str = ""  # its words: compared for rewrites, shown by the explanation
    rewrites: list[_Candidate] = field(default_factory=list)

    def offer(self, relevance: float | None, scored: str) -> None:
        """Keep the better of two relevances of the same item."""
        if relevance is not None and (self.relevance is None or relevance > self.relevance):
            self.relevance, self.scored = relevance, scored

    @property
    def effective(self) -> float | None:
        """The relevance it is placed by: one band lower for the assistant's words."""
        if self.relevance is None:
            return None
        return self.relevance if self.own_words else self.relevance - BAND

    def placing(self) -> tuple[float, int, float, int]:
        score = self.effective
        if score is None:
            return (math.inf, PRIORITY.index(self.kind), math.inf, self.order)
        return (-math.floor(score / BAND), PRIORITY.index(self.kind), -score, self.order)

    def item(
        self, *, position: int | None = None, scored: str | None = None, cut: str = ""
    ) -> Item:
        shown = self.scored if scored is None else scored
        if not self.own_words and self.relevance is not None:
            shown += "; the assistant's words: one band lower"
        return Item(
            self.kind,
            self.id,
            self.line,
            self.reason,
            self.rank,
            self.relevance,
            shown,
            self.sources,
            position,
            cut,
            self.text,
        )


class _Candidates:
    """The candidates by id, in the order found; an item found twice is one candidate with
    the better relevance."""

    def __init__(self) -> None:
        self.by_id: dict[str, _Candidate] = {}

    def add(self, candidate: _Candidate) -> _Candidate:
        found = self.by_id.get(candidate.id)
        if found is None:
            candidate.order = len(self.by_id)
            self.by_id[candidate.id] = candidate
            return candidate
        found.offer(candidate.relevance, candidate.scored)
        found.safety = found.safety or candidate.safety
        return found

    def all(self) -> list[_Candidate]:
        return list(self.by_id.values())


def _hit_scored(kind: str, rank: int, hit: SearchHit) -> str:
    return f"{kind} search rank {rank + 1}, fused {hit.score:.2f}"


def _content_words(text: str) -> set[str]:
    """The words compared for rewrites: stems of Latin words and single CJK characters,
    person words ("the user", 用户) aside."""
    words = set()
    for token in tokenize(_PERSON_WORDS.sub(" ", text)):
        if len(token) == 1 or not is_han(token[0]):
            words.add(token)  # CJK bigrams left out: a rewrite of 我 makes new ones
    return words


def is_rewrite(text: str, turn: str, names: Iterable[str] = ()) -> bool:
    """Whether ``text`` (a fact or bullet) says what ``turn`` says in the turn's words: at
    least :data:`REWRITE` of its content words are the turn's, the ``names`` of the speaker
    (a rewrite says who "I" is) and person words aside, and both or neither are negated."""
    words = _content_words(text) - {w for name in names for w in _content_words(name)}
    if not words or bool(_NEGATION.search(text)) != bool(_NEGATION.search(turn)):
        return False
    return len(words & _content_words(turn)) / len(words) >= REWRITE


class _Gathering:
    """The candidates of one query, gathered from the layers and scored."""

    def __init__(
        self, query: str, scope: Scope, store: RecordStore, search: Search, k: int
    ) -> None:
        self.query, self.scope, self.store, self.search, self.k = query, scope, store, search, k
        self.candidates = _Candidates()
        #: curated documents at exactly this scope, by id: (kind of item, key, document)
        self.documents: dict[str, tuple[str, str, CuratedDocument]] = {}
        #: their bullets by id: (document id, kind of item, key, section heading, bullet)
        self.bullets: dict[str, tuple[str, str, str, str, Bullet]] = {}
        #: the user's name in the profile, and each turn's speaker: who a rewrite names
        self.names: list[str] = []
        self.speakers: dict[str, str] = {}
        #: turns captured only to cite a hand-written item
        self.manual: set[str] = set()

    def add(self, candidate: _Candidate) -> _Candidate:
        return self.candidates.add(candidate)

    def identity(self) -> None:
        doc = self.store.get_document(self.scope, DocumentKind.IDENTITY, "identity")
        if doc is None or not Identity.from_document(doc).text.strip():
            return
        text = Identity.from_document(doc).text
        self.add(
            _Candidate(
                "identity",
                doc.id,
                f"identity: {escape(text)}",
                "L0 identity",
                scored="identity, always in",
                text=text,
            )
        )

    def profile(self, scorer: TextScorer | None) -> None:
        doc = self.store.get_document(self.scope, DocumentKind.PROFILE, "profile")
        if doc is None:
            return
        profile = Profile.from_document(doc)
        self.names += [v.value for k, v in profile.fields.items() if k in _NAME_KEYS]
        slots: list[tuple[str, str, str, Slot]] = [
            ("profile", "profile", k, v) for k, v in profile.fields.items()
        ] + [("preferences", "preference", k, v) for k, v in profile.preferences.items()]
        texts = [f"{key}: {slot.value}" for _, _, key, slot in slots]
        scores = scorer(self.query, self.scope, texts) if scorer and texts else None
        for i, (kind, label, key, slot) in enumerate(slots):
            candidate = _Candidate(
                kind,
                f"{kind}.{key}",
                f"{label}.{escape(key)}: {escape(slot.value)}",
                f"L1 {label}",
                sources=tuple(slot.sources),
                safety=is_safety_key(key),
                text=texts[i],
            )
            if scores is not None:
                candidate.offer(scores[i], f"profile slot, fused {scores[i]:.2f} as a turn")
            self.add(candidate)

    def read_documents(self, listed: Sequence[Document]) -> None:
        """The essentials and the listed topic documents stored at exactly this scope."""
        stored = self.store.get_document(self.scope, DocumentKind.ESSENTIALS, ESSENTIALS_KEY)
        found = [("essentials", ESSENTIALS_KEY, stored)] if stored is not None else []
        found += [("topic", d.key, d) for d in listed]
        for kind, key, doc in found:
            if doc is None or doc.scope != self.scope:
                continue  # a thread's document, when serving its user
            curated = readable(doc)
            if curated is None:
                continue
            self.documents[doc.id] = (kind, key, curated)
            for section in curated.sections:
                for b in section.bullets:
                    self.bullets[b.id] = (doc.id, kind, key, section.heading, b)

    def bullet(self, kind: str, key: str, heading: str, bullet: Bullet, why: str) -> _Candidate:
        safety = kind == "essentials" and is_safety_heading(heading)
        if safety:
            line = f"safety: {escape(bullet.text)}"
        elif kind == "essentials":
            line = f"essential: {escape(bullet.text)}"
        else:
            line = f"topic {escape(key)}: {escape(bullet.text)}"
        reason = "L1 essentials" if kind == "essentials" else f"topic document {key!r}"
        return self.add(
            _Candidate(
                kind,
                bullet.id,
                line,
                f"{reason}{why}",
                sources=tuple(dict.fromkeys(c.episode_id for c in bullet.citations)),
                safety=safety,
                text=bullet.text,
            )
        )

    def all_bullets(self, document_kind: str, key: str | None, why: str) -> None:
        for kind, doc_key, doc in list(self.documents.values()):
            if kind != document_kind or (key is not None and doc_key != key):
                continue
            for section in doc.sections:
                for b in section.bullets:
                    self.bullet(kind, doc_key, section.heading, b, why)

    def safety_bullets(self) -> None:
        for kind, key, doc in list(self.documents.values()):
            if kind != "essentials":
                continue
            for section in doc.sections:
                if is_safety_heading(section.heading):
                    for b in section.bullets:
                        self.bullet(kind, key, section.heading, b, ", section Safety")

    def bullet_hits(self, kinds: tuple[str, ...], topic: str | None = None) -> None:
        """Curated bullets the bullet search finds, each with its own score. For a query that
        names ``topic`` the bullets are searched without its name: every bullet's passage is
        led by its document's title, so the name would raise all of that topic's alike."""
        if not any(kind in kinds for kind, _, _ in self.documents.values()):
            return
        query = self.query if topic is None else without_topic(self.query, topic)
        for rank, hit in enumerate(self.search(query, self.scope, self.k, Granularity.TOPIC)):
            found = self.bullets.get(hit.id)
            if found is None or found[0] != hit.session_id or found[1] not in kinds:
                continue  # a document of another scope, or a bullet gone since indexed
            _, kind, key, heading, b = found
            candidate = self.bullet(kind, key, heading, b, "")
            candidate.offer(hit.score, _hit_scored("bullet", rank, hit))
            candidate.rank = rank

    def fact_hits(self) -> None:
        """Fact hits; a fact a curated document speaks for is served as its bullet, as
        edited (nothing if deleted)."""
        hits = list(self.search(self.query, self.scope, self.k, Granularity.FACT))
        facts = {f.id: f for f in self.store.get_facts(self.scope, [h.id for h in hits])}
        spoken = spoken_for(self.store, self.scope, list(facts.values()))
        for rank, hit in enumerate(hits):
            scored = _hit_scored("fact", rank, hit)
            sources = facts[hit.id].sources if hit.id in facts else ()
            if hit.id in spoken:
                self._in_place_of(hit, rank, scored, spoken[hit.id])
                continue
            candidate = _Candidate(
                "fact",
                hit.id,
                f"fact: {escape(hit.text)}",
                "L3 fact",
                sources=tuple(sources),
                rank=rank,
                text=hit.text,
            )
            candidate.offer(hit.score, scored)
            self.add(candidate)

    def _in_place_of(
        self, hit: SearchHit, rank: int, scored: str, bullets: Sequence[tuple[str, Bullet]]
    ) -> None:
        """The bullet standing in for a fact hit: of those citing its turns, the one sharing
        most of its words (the others stand on their own scores); none if all were deleted."""
        if not bullets:
            return
        words = _content_words(hit.text)
        key, b = max(bullets, key=lambda kb: len(words & _content_words(kb[1].text)))
        kind = "essentials" if key == ESSENTIALS_KEY else "topic"
        heading = self.bullets[b.id][3] if b.id in self.bullets else ""
        why = f" in place of fact {hit.id}, as the document stands"
        candidate = self.bullet(kind, key, heading, b, why)
        candidate.offer(hit.score, f"in place of {scored}")
        candidate.rank = rank

    def turn_hits(self) -> None:
        for rank, hit in enumerate(self.search(self.query, self.scope, self.k, Granularity.TURN)):
            when = hit.time.date().isoformat() if hit.time else ""
            if hit.speaker:
                self.speakers[hit.id] = hit.speaker
            candidate = _Candidate(
                "episode",
                hit.id,
                f"said {when}: {escape(hit.text)}",
                "L3 turn",
                sources=(hit.id,),
                rank=rank,
                text=hit.text,
            )
            candidate.offer(hit.score, _hit_scored("turn", rank, hit))
            self.add(candidate)

    def own_words(self) -> None:
        """Mark what rests only on the assistant's (or a system's, a tool's) turns, and note
        the turns captured only to cite a hand-written item (surface ``manual``)."""
        cited = {s for c in self.candidates.all() for s in c.sources}
        if not cited:
            return
        episodes = self.store.get_episodes(self.scope, sorted(cited))
        roles = {e.id: e.role for e in episodes}
        self.manual = {e.id for e in episodes if e.surface == _MANUAL}
        for c in self.candidates.all():
            known = [roles[s] for s in c.sources if s in roles]
            c.own_words = not known or any(r not in _NOT_OWN_WORDS for r in known)

    def fold_rewrites(self) -> None:
        """Fold each fact or bullet that rewrites the one turn it cites into that turn; a
        turn captured to cite a hand-written item is folded into the item instead (the item
        is what a person wrote; the turn only records it)."""
        turns = {c.id: c for c in self.candidates.all() if c.kind == "episode"}
        for c in self.candidates.all():
            if c.kind not in ("essentials", "topic", "fact") or c.safety or len(c.sources) != 1:
                continue
            turn = turns.get(c.sources[0])
            names = [*self.names, self.speakers.get(c.sources[0], "")]
            if turn is None or not is_rewrite(c.text, turn.text, names):
                continue
            host, folded = (c, turn) if turn.id in self.manual else (turn, c)
            if folded is turn:
                del turns[turn.id]
            del self.candidates.by_id[folded.id]
            host.rewrites.append(folded)
            if folded.relevance is not None and (
                host.relevance is None or folded.relevance > host.relevance
            ):
                host.relevance = folded.relevance
                host.scored = (
                    f"{folded.scored} ({folded.kind} {folded.id}, which says the same); "
                    f"{host.scored}"
                )


def assemble(
    query: str,
    scope: Scope,
    store: RecordStore,
    search: Search,
    *,
    budget: int = 1000,
    counter: TokenCounter | None = None,
    k: int | None = None,
    router: Router | None = None,
    scorer: TextScorer | None = None,
) -> Context:
    """The ``<memory>`` block for ``query`` within ``budget`` tokens (see the module's
    docstring); ``k`` hits of each kind are gathered (default: :data:`HITS`, more for a
    large budget), ``scorer`` scores profile slots (without it they are unscored)."""
    counter = counter or HeuristicTokenCounter()
    listed = store.list_documents(scope, DocumentKind.TOPIC)
    chosen_route, topic = (router or route)(query, [d.key for d in listed])
    result = Context("", 0, budget, chosen_route, topic)
    if chosen_route == "none":
        return result
    hits = k if k is not None else min(_MAX_HITS, max(HITS, budget // _HIT_TOKENS))
    gathering = _Gathering(query, scope, store, search, hits)
    gathering.identity()
    gathering.read_documents(listed)
    gathering.safety_bullets()
    gathering.profile(scorer)
    if chosen_route == "profile":  # about the user: L1 as curated, hand edits included
        gathering.all_bullets("essentials", None, ", a question about the user")
        gathering.bullet_hits(("essentials",))
    else:
        if topic is not None:
            gathering.all_bullets("topic", topic, ", named in the query")
        gathering.bullet_hits(("essentials", "topic"), topic)
        gathering.fact_hits()
        gathering.turn_hits()
    gathering.own_words()
    gathering.fold_rewrites()
    _admit(result, gathering.candidates.all(), budget, counter)
    return result


def _admit(
    result: Context, candidates: list[_Candidate], budget: int, counter: TokenCounter
) -> None:
    """Fill ``result`` within ``budget``: the identity, the safety items within their
    share, then the rest by band, layer and score."""
    identity = [c for c in candidates if c.kind == "identity"]
    safety = sorted((c for c in candidates if c.safety), key=_Candidate.placing)
    rest = [c for c in candidates if c.kind != "identity" and not c.safety]
    used = counter.count(BLOCK_FRAME)
    seen: dict[str, str] = {}  # the words in the block -> the item that said them
    included: list[Item] = []

    def admit(c: _Candidate, limit: int, scored: str | None = None) -> bool:
        """Whether ``c`` is dealt with: in, or out as words already in (listed as cut)."""
        nonlocal used
        words = c.line.split(": ", 1)[-1].lower()
        if words in seen:
            result.cut.append(c.item(cut=f"the same words as {seen[words]}, in the block"))
            return True
        cost = counter.count(c.line) + 1
        if used + cost > limit:
            return False
        used += cost
        seen[words] = c.id
        included.append(c.item(position=len(included) + 1, scored=scored))
        return True

    def said_by(c: _Candidate, rewrites: Iterable[_Candidate]) -> None:
        for other in rewrites:
            result.cut.append(other.item(cut=f"the same as {c.kind} {c.id}, in the block"))

    for c in identity:
        if not admit(c, budget):
            result.cut.append(c.item(cut="over the budget"))
    share = min(budget, used + int(budget * SAFETY_SHARE))
    for c in safety:
        scored = "safety, always in" + (f" ({c.scored})" if c.relevance is not None else "")
        if not admit(c, share, scored):
            rest.append(c)  # past its share: it competes like the rest
    for c in sorted(rest, key=_Candidate.placing):
        if admit(c, budget):
            said_by(c, c.rewrites)
            continue
        # it does not fit: the shortest of what says the same that does stands in for it
        shortest = sorted(c.rewrites, key=lambda r: (counter.count(r.line), r.order))
        stand_in = None
        for other in shortest:
            other.relevance, other.own_words = c.relevance, c.own_words
            other.scored = f"in place of {c.kind} {c.id}, which does not fit: {c.scored}"
            if admit(other, budget):
                stand_in = other
                break
        if stand_in is None:
            result.cut.append(c.item(cut="over the budget"))
            result.cut.extend(r.item(cut="over the budget") for r in c.rewrites)
            continue
        result.cut.append(c.item(cut=f"over the budget; {stand_in.id}, which says the same, is in"))
        said_by(stand_in, [r for r in c.rewrites if r is not stand_in])
    while included and counter.count(memory_block([i.line for i in included])) > budget:
        last = included.pop()  # the estimate of the parts undercounted the whole
        result.cut.append(replace(last, position=None, cut="over the budget"))
    result.included = included
    # what the budget left out first, in the order placed; then what the block says already
    result.cut.sort(key=lambda c: not c.cut.startswith("over the budget"))
    result.text = memory_block([i.line for i in included])
    result.tokens = counter.count(result.text) if result.text else 0
