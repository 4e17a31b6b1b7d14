"""What a chat model proposes during consolidation, and the guards its proposals must pass.

Each function shows the model stored text as inert JSON data (:func:`data_messages`), the
episodes as small integers (:class:`CitationMap`), and maps the numbers it answers with back to
ids. What it answers is a proposal, never a write: consolidation turns the proposals that pass
the guards into document operations and applies them through the documents' preview / apply
path. The guards, for every text the model writes:

* it cites at least one turn (``uncited``);
* every number it cites was shown to it (``invented citation``: the whole item is refused, not
  just the number);
* its cited turns support it: ``support(text, evidence)`` (the audit's measure, the share of
  its terms the turns contain) is at least ``threshold`` (``unsupported``);
* it does not overclaim ("always", "never", "总是" ...: ``overclaiming``).

A reply that is not the JSON asked for is asked once more, then the step is recorded as failed
(:func:`memstrata.llm.metered.ask`) and the caller does that step by rules. Prompts live in
``memstrata/llm/prompts/`` (consolidate, contradict, merge_topics, profile, audit, dedup).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from memstrata.curate.guards import BANNED_PHRASES
from memstrata.errors import LLMReplyError
from memstrata.llm.metered import ask
from memstrata.llm.prompting import CitationMap, data_messages, load_prompt
from memstrata.model import Episode, Fact, JsonValue, Profile
from memstrata.ports import LLM

#: (text, the text of its evidence) -> the share of the text's terms the evidence contains
Support = Callable[[str, str], float]

PROFILE_SLOTS: Final = {
    "fields": ("name", "role", "expertise", "language", "location", "context"),
    "preferences": ("tone", "verbosity", "code_style", "other"),
}
_MAX_SLOT_CHARS: Final = 80


@dataclass(frozen=True, slots=True)
class ShownBullet:
    """A current bullet of a topic document, as the model is shown it."""

    id: str
    section: str
    text: str
    sources: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ProposedBullet:
    """A bullet the model wrote: the ids of the bullets it ``replaces`` and of the new
    ``facts`` it states."""

    section: str
    text: str
    sources: tuple[str, ...]
    replaces: tuple[str, ...]
    facts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ProposedSlot:
    section: str  # "fields" or "preferences"
    key: str
    value: str
    sources: tuple[str, ...]


@dataclass(slots=True)
class Checked:
    """Proposals that passed the guards, and why the others were refused."""

    bullets: list[ProposedBullet] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)


def _items(reply: Mapping[str, JsonValue], key: str) -> list[dict[str, Any]]:
    value = reply.get(key)
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise LLMReplyError(f"the reply has no {key!r} list of objects")
    return [dict(v) for v in value]


def _numbers(value: object) -> list[int] | None:
    """A list of small integers, or None when it is anything else."""
    if not isinstance(value, list):
        return None
    out = []
    for item in value:
        if isinstance(item, bool) or not isinstance(item, int):
            return None
        out.append(item)
    return out


def _cited(item: Mapping[str, Any], citations: CitationMap) -> tuple[tuple[str, ...], str | None]:
    """The episode ids an item cites, or why it is refused."""
    numbers = _numbers(item.get("cites"))
    if not numbers:
        return (), "uncited"
    if any(not 1 <= n <= len(citations.episodes) for n in numbers):
        citations.dropped += 1
        return (), "invented citation"
    return tuple(citations.resolve(numbers)), None


def overclaims(text: str) -> bool:
    return any(re.search(p, text, re.IGNORECASE) for p in BANNED_PHRASES)


def guard_text(
    text: str,
    sources: Sequence[str],
    episodes: Mapping[str, Episode],
    support: Support,
    threshold: float,
) -> str | None:
    """Why a text the model wrote is refused, or None when it passes."""
    if not text.strip():
        return "empty"
    evidence = " ".join(episodes[s].text for s in sources if s in episodes)
    if not evidence:
        return "uncited"
    if overclaims(text):
        return "overclaiming"
    if support(text, evidence) < threshold:
        return "unsupported"
    return None


def _episode_rows(
    episodes: Sequence[Episode], citations: CitationMap
) -> tuple[list[JsonValue], dict[str, int]]:
    rows: list[JsonValue] = []
    numbers: dict[str, int] = {}
    for episode in episodes:
        n = citations.number(episode)
        numbers[episode.id] = n
        rows.append(
            {
                "n": n,
                "speaker": episode.speaker,
                "time": episode.time.date().isoformat(),
                "text": episode.text,
            }
        )
    return rows, numbers


def rewrite_topic(
    llm: LLM,
    key: str,
    bullets: Sequence[ShownBullet],
    facts: Sequence[tuple[Fact, str]],
    outdated: Sequence[str],
    episodes: Sequence[Episode],
    *,
    support: Support,
    threshold: float,
    failures: list[str],
) -> Checked | None:
    """The model's rewrite of topic ``key`` with the new ``facts`` (each with the section it
    belongs in) folded into its ``bullets``; None when the model could not do it."""
    citations = CitationMap()
    rows, numbers = _episode_rows(episodes, citations)
    shown = dict(enumerate(bullets, 1))
    new = {n: f for n, (f, _) in enumerate(facts, 1)}
    data: dict[str, JsonValue] = {
        "topic": key,
        "bullets": [
            {
                "b": n,
                "section": b.section,
                "text": b.text,
                "cites": [numbers[s] for s in b.sources if s in numbers],
            }
            for n, b in shown.items()
        ],
        "new_facts": [
            {
                "f": n,
                "text": f.text,
                "section": section,
                "cites": [numbers[s] for s in f.sources if s in numbers],
            }
            for n, (f, section) in enumerate(facts, 1)
        ],
        "outdated": list(outdated),
        "episodes": rows,
    }
    by_id = {e.id: e for e in episodes}
    default_section = facts[0][1] if facts else "Notes"

    def parse(reply: dict[str, JsonValue]) -> Checked:
        checked = Checked()
        taken: set[str] = set()
        for item in _items(reply, "bullets"):
            text = item.get("text")
            if not isinstance(text, str):
                raise LLMReplyError("each bullet needs a 'text' string")
            text = " ".join(text.split())
            section = item.get("section")
            section = section.strip() if isinstance(section, str) and section.strip() else ""
            sources, refused = _cited(item, citations)
            refused = refused or guard_text(text, sources, by_id, support, threshold)
            if refused:
                checked.rejected.append(f"{key}: {refused}: {text[:80]!r}")
                continue
            replaces = [
                shown[n].id
                for n in _numbers(item.get("replaces")) or []
                if n in shown and shown[n].id not in taken
            ]
            taken.update(replaces)
            if not section:
                section = shown_section(shown, replaces) or default_section
            stated = tuple(new[n].id for n in _numbers(item.get("facts")) or [] if n in new)
            checked.bullets.append(ProposedBullet(section, text, sources, tuple(replaces), stated))
        return checked

    return ask(
        llm,
        data_messages(load_prompt("consolidate"), data),
        parse,
        failures=failures,
        where=f"topic {key}",
    )


def shown_section(shown: Mapping[int, ShownBullet], replaces: Sequence[str]) -> str | None:
    for bullet in shown.values():
        if bullet.id in replaces:
            return bullet.section
    return None


def find_contradictions(
    llm: LLM,
    new: Sequence[Fact],
    current: Sequence[Fact],
    episodes: Sequence[Episode],
    *,
    failures: list[str],
) -> list[tuple[Fact, Fact]] | None:
    """(new fact, older current fact it contradicts) pairs the model found; None when it
    could not answer. Numbers it was not shown are ignored."""
    citations = CitationMap()
    rows, numbers = _episode_rows(episodes, citations)
    data: dict[str, JsonValue] = {
        "new_facts": [
            {"f": n, "text": f.text, "cites": [numbers[s] for s in f.sources if s in numbers]}
            for n, f in enumerate(new, 1)
        ],
        "current_facts": [{"c": n, "text": f.text} for n, f in enumerate(current, 1)],
        "episodes": rows,
    }

    def parse(reply: dict[str, JsonValue]) -> list[tuple[Fact, Fact]]:
        found: list[tuple[Fact, Fact]] = []
        closed: set[str] = set()
        for item in _items(reply, "contradictions"):
            f, c = item.get("new"), item.get("old")
            if not (isinstance(f, int) and isinstance(c, int)):
                raise LLMReplyError("each contradiction needs 'new' and 'old' numbers")
            if not (1 <= f <= len(new) and 1 <= c <= len(current)):
                continue  # a number it was not shown
            newer, older = new[f - 1], current[c - 1]
            if older.id in closed or older.id == newer.id or older.id > newer.id:
                continue  # only an older fact is superseded, once
            closed.add(older.id)
            found.append((newer, older))
        return found

    return ask(
        llm,
        data_messages(load_prompt("contradict"), data),
        parse,
        failures=failures,
        where="contradictions",
    )


def propose_merges(
    llm: LLM,
    topics: Sequence[tuple[str, str, Sequence[str]]],
    *,
    failures: list[str],
) -> list[tuple[str, list[str]]] | None:
    """Topics the model finds to be one theme: (the key that stays, the keys folded into
    it). ``topics``: (key, title, a few bullet texts)."""
    data: dict[str, JsonValue] = {
        "topics": [
            {"t": n, "key": key, "title": title, "bullets": list(texts)}
            for n, (key, title, texts) in enumerate(topics, 1)
        ]
    }

    def parse(reply: dict[str, JsonValue]) -> list[tuple[str, list[str]]]:
        used: set[int] = set()
        merges = []
        for item in _items(reply, "merges"):
            into, sources = item.get("into"), _numbers(item.get("from"))
            if not isinstance(into, int) or isinstance(into, bool) or sources is None:
                raise LLMReplyError("each merge needs 'into' and a 'from' list of numbers")
            ok = [n for n in sources if 1 <= n <= len(topics) and n != into and n not in used]
            if not 1 <= into <= len(topics) or into in used or not ok:
                continue
            used.update([into, *ok])
            merges.append((topics[into - 1][0], [topics[n - 1][0] for n in ok]))
        return merges

    return ask(
        llm,
        data_messages(load_prompt("merge_topics"), data),
        parse,
        failures=failures,
        where="topic merges",
    )


def propose_slots(
    llm: LLM,
    user: str | None,
    profile: Profile,
    facts: Sequence[Fact],
    episodes: Sequence[Episode],
    *,
    support: Support,
    threshold: float,
    failures: list[str],
    rejected: list[str],
) -> list[ProposedSlot] | None:
    """Profile slots the model proposes from the evidence, each passing the guards."""
    citations = CitationMap()
    rows, numbers = _episode_rows(episodes, citations)
    data: dict[str, JsonValue] = {
        "user": user,
        "profile": {
            "fields": {k: s.value for k, s in profile.fields.items()},
            "preferences": {k: s.value for k, s in profile.preferences.items()},
        },
        "facts": [
            {"f": n, "text": f.text, "cites": [numbers[s] for s in f.sources if s in numbers]}
            for n, f in enumerate(facts, 1)
        ],
        "episodes": rows,
    }
    by_id = {e.id: e for e in episodes}

    def parse(reply: dict[str, JsonValue]) -> list[ProposedSlot]:
        out = []
        for item in _items(reply, "slots"):
            section, key, value = item.get("section"), item.get("key"), item.get("value")
            if not (isinstance(section, str) and isinstance(key, str) and isinstance(value, str)):
                raise LLMReplyError("each slot needs 'section', 'key' and 'value' strings")
            value = " ".join(value.split())
            if key not in PROFILE_SLOTS.get(section, ()) or len(value) > _MAX_SLOT_CHARS:
                rejected.append(f"profile: unknown slot or too long: {section}.{key}")
                continue
            sources, refused = _cited(item, citations)
            refused = refused or guard_text(value, sources, by_id, support, threshold)
            if refused:
                rejected.append(f"profile: {refused}: {section}.{key}")
                continue
            out.append(ProposedSlot(section, key, value, sources))
        return out

    return ask(
        llm,
        data_messages(load_prompt("profile"), data),
        parse,
        failures=failures,
        where="profile",
    )


def judge_support(
    llm: LLM, items: Sequence[tuple[str, Sequence[str]]], *, failures: list[str], where: str
) -> dict[int, bool] | None:
    """Whether the model finds each (text, evidence texts) supported: index -> verdict for
    the items it judged (0-based)."""
    data: dict[str, JsonValue] = {
        "items": [
            {"i": n, "text": text, "evidence": list(evidence)}
            for n, (text, evidence) in enumerate(items, 1)
        ]
    }

    def parse(reply: dict[str, JsonValue]) -> dict[int, bool]:
        verdicts: dict[int, bool] = {}
        for item in _items(reply, "verdicts"):
            n, supported = item.get("i"), item.get("supported")
            if not isinstance(n, int) or not isinstance(supported, bool):
                raise LLMReplyError("each verdict needs 'i' and a boolean 'supported'")
            if 1 <= n <= len(items):
                verdicts[n - 1] = supported
        return verdicts

    return ask(
        llm, data_messages(load_prompt("audit"), data), parse, failures=failures, where=where
    )


def judge_same(
    llm: LLM, pairs: Sequence[tuple[str, str]], *, failures: list[str], where: str
) -> set[int] | None:
    """The pairs (0-based) the model finds to make the same claim."""
    data: dict[str, JsonValue] = {
        "pairs": [{"p": n, "a": a, "b": b} for n, (a, b) in enumerate(pairs, 1)]
    }

    def parse(reply: dict[str, JsonValue]) -> set[int]:
        numbers = _numbers(reply.get("same"))
        if numbers is None:
            raise LLMReplyError("the reply has no 'same' list of numbers")
        return {n - 1 for n in numbers if 1 <= n <= len(pairs)}

    return ask(
        llm, data_messages(load_prompt("dedup"), data), parse, failures=failures, where=where
    )
