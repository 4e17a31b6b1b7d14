"""The profile document kept by consolidation: the user's slots L1 selects, and style
preferences two or more sessions support (:mod:`memstrata.curate.profile`). A slot a person
deleted or edited withholds its facts from L1 and its value from that slot; a slot a person
wrote or edited is theirs; a slot consolidation wrote that L1 no longer states is removed (the
state records each slot's value digest and facts)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from memstrata.consolidate.parts import Parts
from memstrata.consolidate.state import as_list, digest
from memstrata.curate.essentials import (
    Selection,
)
from memstrata.curate.profile import promotions
from memstrata.model import (
    Category,
    DocumentKind,
    Fact,
    JsonValue,
    Profile,
    Scope,
    Slot,
)
from memstrata.retry import retry_conflicts


@dataclass(slots=True)
class ProfileHands:
    """The profile slots consolidation wrote that a person left as they were (``managed``,
    "fields.<key>" / "preferences.<key>"), the facts behind slots a person deleted or edited
    (``withheld`` from L1), and the values a person took out of a slot (``refused``: slot ->
    digests); ``legacy``: a state from before this record."""

    managed: set[str]
    withheld: set[str]
    refused: dict[str, set[str]]
    legacy: bool = False


def profile_values(profile: Profile) -> dict[str, str]:
    return {
        f"{section}.{key}": slot.value
        for section, slots in (("fields", profile.fields), ("preferences", profile.preferences))
        for key, slot in slots.items()
    }


def profile_hands(
    parts: Parts, scope: Scope, prior: Mapping[str, JsonValue], current: Profile | None = None
) -> ProfileHands:
    """What a person did to the profile since consolidation last wrote it (``current``:
    the stored profile, read when not given)."""
    if current is None:
        stored = parts.store.get_document(scope, DocumentKind.PROFILE, "profile")
        current = Profile() if stored is None else Profile.from_document(stored)
    values = profile_values(current)
    known = prior.get("profile")
    if not isinstance(known, dict):  # no record: first run, or a state from before it
        legacy = bool(prior)  # the older rule wrote the slots it found over the profile
        return ProfileHands(set(values) if legacy else set(), set(), {}, legacy)
    hands = ProfileHands(
        set(),
        {str(f) for f in known.get("withheld", [])},
        {str(k): {str(d) for d in v} for k, v in dict(known.get("refused", {})).items()},
    )
    for key, entry in dict(known.get("slots", {})).items():
        present = values.get(key)
        if present is not None and digest(present) == entry.get("digest"):
            hands.managed.add(key)
            continue
        # deleted or edited by hand: its facts and its value are not written again
        hands.withheld |= {str(f) for f in entry.get("facts", [])}
        hands.refused.setdefault(key, set()).add(str(entry.get("digest")))
    return hands


def promote(
    parts: Parts,
    scope: Scope,
    selection: Selection,
    facts: Sequence[Fact],
    prior: Mapping[str, JsonValue],
    proposed: Mapping[str, JsonValue] | None = None,
) -> tuple[dict[str, JsonValue], list[str]]:
    """The user's slots into the profile, and style preferences that two or more sessions
    now support (see :mod:`curate.profile`); a person's profile edit made meanwhile is
    re-read and kept (compare-and-swap retried). Returns the record of what this wrote and
    the slots it changed."""
    return retry_conflicts(
        lambda: _promote_once(parts, scope, selection, facts, prior, proposed or {})
    )


def _promote_once(
    parts: Parts,
    scope: Scope,
    selection: Selection,
    facts: Sequence[Fact],
    prior: Mapping[str, JsonValue],
    proposed: Mapping[str, JsonValue],
) -> tuple[dict[str, JsonValue], list[str]]:
    liked = [f for f in facts if f.category == Category.PREFERENCE]
    episodes = parts.store.get_episodes(scope, sorted({s for f in liked for s in f.sources}))
    stored = parts.store.get_document(scope, DocumentKind.PROFILE, "profile")
    current = Profile() if stored is None else Profile.from_document(stored)
    hands = profile_hands(parts, scope, prior, current)
    wanted: dict[str, tuple[Slot, tuple[str, ...]]] = {
        f"fields.{k}": (slot, selection.profile_facts.get(k, ()))
        for k, slot in selection.profile.items()
    }
    for found in promotions(liked, episodes):
        wanted[f"{found.section}.{found.key}"] = (
            Slot(found.value, found.sources, 1.0),
            found.facts,
        )
    for key, entry in proposed.items():  # the model's, where the rules set nothing
        if key in wanted or not isinstance(entry, dict):
            continue
        value, sources = entry.get("value"), as_list(entry.get("sources"))
        if isinstance(value, str) and sources:
            slot = Slot(value, tuple(str(e) for e in sources), 0.9)
            wanted[key] = (slot, tuple(str(f) for f in as_list(entry.get("facts"))))
    sections = {"fields": dict(current.fields), "preferences": dict(current.preferences)}
    if not hands.legacy:  # a slot consolidation wrote that L1 no longer states goes
        for key in hands.managed - set(wanted):
            section, name = key.split(".", 1)
            sections[section].pop(name, None)
    written: dict[str, JsonValue] = {}
    for key, (slot, backing) in wanted.items():
        section, name = key.split(".", 1)
        if name in sections[section] and key not in hands.managed:
            continue  # a slot a person wrote or edited is theirs
        if parts.docs.scrub is not None:  # the one scrub of curated text
            slot = replace(slot, value=parts.docs.scrub(slot.value, scope))
        if digest(slot.value) in hands.refused.get(key, ()):
            continue  # a value a person took out of this slot stays out
        sections[section][name] = slot
        written[key] = {"digest": digest(slot.value), "facts": list(backing)}
    if hands.legacy:  # the older rule: what it wrote and L1 still states is now recorded
        written.update(
            {
                key: {"digest": digest(value), "facts": []}
                for key, value in profile_values(
                    Profile(sections["fields"], sections["preferences"])
                ).items()
                if key in hands.managed and key not in written
            }
        )
    record: dict[str, JsonValue] = {
        "slots": dict(sorted(written.items())),
        "withheld": sorted(hands.withheld),
        "refused": {k: sorted(v) for k, v in sorted(hands.refused.items())},
    }
    updated = Profile(sections["fields"], sections["preferences"], current.version)
    if updated.to_content() == current.to_content():
        return record, []
    parts.store.put_document(
        scope,
        DocumentKind.PROFILE,
        "profile",
        updated.to_content(),
        expected_version=current.version,
    )
    before = current.to_content()
    after = updated.to_content()
    return record, [
        f"{section}.{key}"
        for section in ("fields", "preferences")
        for key in after[section]
        if before[section].get(key) != after[section][key]
    ]
