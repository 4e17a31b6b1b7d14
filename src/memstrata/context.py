"""Context assembly: the few hundred tokens of memory an agent needs for one query.

The query is routed (heuristics by default; :func:`llm_router` asks a chat model): ``none``
(small talk, no memory needed), ``profile`` (about the user themself), ``topic`` (names a topic
memory has a document for) or ``detail`` (anything else). Items are gathered from the layers,
deduplicated, and admitted by priority (identity, profile, preferences, topic, facts, episodes)
until the budget is spent; a question about the user themself also gets the L1 essentials
document as it stands. The block is rendered as ``<memory>...</memory>`` by
:mod:`memstrata.render`, which escapes every stored text in it and keeps it on one line, so a
stored ``</memory>`` or a forged tag stays inert text. ``explain`` lists why each item is in and
what was cut.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from memstrata.document.coverage import readable, spoken_for
from memstrata.document.format import Bullet
from memstrata.document.service import ESSENTIALS_KEY
from memstrata.errors import MemstrataError
from memstrata.model import DocumentKind, Granularity, Identity, Profile, Scope, SearchHit
from memstrata.ports import LLM, RecordStore
from memstrata.render import BLOCK_FRAME, escape, memory_block
from memstrata.tokens import HeuristicTokenCounter, TokenCounter

Search = Callable[[str, Scope, int, Granularity], Sequence[SearchHit]]

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


@dataclass(frozen=True, slots=True)
class Item:
    kind: str  # one of PRIORITY
    id: str
    line: str
    reason: str
    rank: int = 0


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
        return [
            {"id": i.id, "kind": i.kind, "included": True, "why": i.reason} for i in self.included
        ] + [
            {
                "id": i.id,
                "kind": i.kind,
                "included": False,
                "why": f"{i.reason}; cut: over the budget",
            }
            for i in self.cut
        ]


def _identity_items(store: RecordStore, scope: Scope) -> list[Item]:
    doc = store.get_document(scope, DocumentKind.IDENTITY, "identity")
    if doc is None or not Identity.from_document(doc).text.strip():
        return []
    text = Identity.from_document(doc).text
    return [Item("identity", doc.id, f"identity: {escape(text)}", "L0 identity, always loaded")]


def _profile_items(store: RecordStore, scope: Scope) -> list[Item]:
    doc = store.get_document(scope, DocumentKind.PROFILE, "profile")
    if doc is None:
        return []
    profile = Profile.from_document(doc)
    items = [
        Item("profile", f"profile.{k}", f"profile.{k}: {escape(v.value)}", "L1 profile")
        for k, v in profile.fields.items()
    ]
    items += [
        Item(
            "preferences", f"preferences.{k}", f"preference.{k}: {escape(v.value)}", "L1 preference"
        )
        for k, v in profile.preferences.items()
    ]
    return items


def _essentials_items(store: RecordStore, scope: Scope) -> list[Item]:
    stored = store.get_document(scope, DocumentKind.ESSENTIALS, "essentials")
    doc = readable(stored) if stored is not None else None
    if doc is None:
        return []
    return [
        Item("essentials", bullet.id, f"essential: {escape(bullet.text)}", "L1 essentials")
        for section in doc.sections
        for bullet in section.bullets
    ]


def _bullet_items(fact_id: str, bullets: Sequence[tuple[str, Bullet]], rank: int) -> list[Item]:
    items = []
    for key, bullet in bullets:
        why = f"in place of fact {fact_id}, as the document stands"
        if key == ESSENTIALS_KEY:
            line, kind, why = (
                f"essential: {escape(bullet.text)}",
                "essentials",
                f"L1 essentials {why}",
            )
        else:
            line, kind = f"topic {escape(key)}: {escape(bullet.text)}", "topic"
            why = f"topic document {key!r} {why}"
        items.append(Item(kind, bullet.id, line, why, rank))
    return items


def assemble(
    query: str,
    scope: Scope,
    store: RecordStore,
    search: Search,
    *,
    budget: int = 1000,
    counter: TokenCounter | None = None,
    k: int = 40,
    router: Router | None = None,
) -> Context:
    counter = counter or HeuristicTokenCounter()
    listed = store.list_documents(scope, DocumentKind.TOPIC)
    topics = [d.key for d in listed]
    chosen_route, topic = (router or route)(query, topics)
    candidates: list[Item] = []
    if chosen_route != "none":
        candidates += _identity_items(store, scope) + _profile_items(store, scope)
        if chosen_route == "profile":  # about the user: L1 as curated, hand edits included
            candidates += _essentials_items(store, scope)
        if topic is not None:
            # the named document as listed (stored at exactly this scope): not read again
            stored = next((d for d in listed if d.key == topic and d.scope == scope), None)
            doc = readable(stored) if stored is not None else None
            if doc is not None:
                for section in doc.sections:
                    for bullet in section.bullets:
                        candidates.append(
                            Item(
                                "topic",
                                bullet.id,
                                f"topic {escape(topic)}: {escape(bullet.text)}",
                                f"topic document {topic!r}, named in the query",
                            )
                        )
        if chosen_route != "profile":
            # a fact a curated document speaks for (the essentials, its topic document) is
            # served as the document says it now: its bullets as edited, nothing if deleted
            hits = list(search(query, scope, k, Granularity.FACT))
            spoken = spoken_for(store, scope, store.get_facts(scope, [h.id for h in hits]))
            for rank, hit in enumerate(hits):
                if hit.id in spoken:
                    candidates += _bullet_items(hit.id, spoken[hit.id], rank)
                    continue
                candidates.append(
                    Item(
                        "fact",
                        hit.id,
                        f"fact: {escape(hit.text)}",
                        f"fact search rank {rank + 1}",
                        rank,
                    )
                )
            for rank, hit in enumerate(search(query, scope, k, Granularity.TURN)):
                when = hit.time.date().isoformat() if hit.time else ""
                candidates.append(
                    Item(
                        "episode",
                        hit.id,
                        f"said {when}: {escape(hit.text)}",
                        f"turn search rank {rank + 1}",
                        rank,
                    )
                )
    seen: set[str] = set()
    ordered = sorted(candidates, key=lambda i: (PRIORITY.index(i.kind), i.rank))
    result = Context("", 0, budget, chosen_route, topic)
    used = counter.count(BLOCK_FRAME)
    for item in ordered:
        key = item.line.split(": ", 1)[-1].lower()
        if key in seen:
            continue  # the same words already in, through another layer
        cost = counter.count(item.line) + 1
        if used + cost > budget:
            result.cut.append(item)
            continue
        seen.add(key)
        result.included.append(item)
        used += cost
    result.text = memory_block([i.line for i in result.included])
    result.tokens = counter.count(result.text) if result.text else 0
    return result
