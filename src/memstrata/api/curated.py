"""The one way curated text reaches the store: scrubbed, and citing only episodes that exist.

Every write path of curated text (facts added or updated, document batches, document
content replaced through ``update``, the profile, consolidation, an import) goes through
:func:`clean_text` (the full privacy scrubber) and :func:`require_episodes` (the scoped
:func:`memstrata.citations.missing_episodes` check) for what it adds. Citations a record had
already are not checked again, so a citation left stale by an older version never blocks a
write. The identity (L0) is the user's own text about the agent: like verbatim capture, only
secrets (passwords, keys, tokens) are scrubbed from it. An import (:func:`clean_import`)
checks citations against the episodes it brings, since the scope it restores is empty.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from memstrata.api.inputs import scrubbed
from memstrata.citations import missing_among, missing_episodes
from memstrata.errors import InvalidInputError
from memstrata.ids import kind_of
from memstrata.model import (
    Document,
    DocumentKind,
    JsonValue,
    Profile,
    Scope,
    Slot,
    When,
    check_slot,
    check_value,
)
from memstrata.ports import RecordStore

if TYPE_CHECKING:
    from memstrata.exchange import Restoration

#: Raises :class:`InvalidInputError` unless every id names an episode of the scope.
Require = Callable[[Scope, Iterable[str], str], None]


def clean_text(text: str, scope: Scope) -> str:
    """Curated text with private data replaced (the one scrub of curated memory)."""
    return scrubbed(text, scope, secrets_only=False)


def clean_when(when: When | None, scope: Scope) -> When | None:
    """A fact's time with its words scrubbed, like every curated text."""
    if when is None:
        return None
    text = clean_text(when.text, scope)
    return when if text == when.text else replace(when, text=text)


def clean_value(value: object, scope: Scope) -> str | None:
    """A slot's value as a caller gives it (None, or text), scrubbed like every curated text."""
    if value is None:
        return None
    check_value(value)
    assert isinstance(value, str)
    cleaned = clean_text(value, scope).strip()
    check_value(cleaned)
    return cleaned


def clean_slot(slot: str | None, scope: Scope) -> str | None:
    """A fact's slot scrubbed, like every curated text (and still a slot)."""
    if slot is None:
        return None
    cleaned = clean_text(slot, scope).strip()
    check_slot(cleaned)
    return cleaned


def clean_identity(text: str, scope: Scope) -> str:
    """The identity text, secrets removed (it is the user's own words, like a turn)."""
    return scrubbed(text, scope, secrets_only=True)


def require_episodes(store: RecordStore, scope: Scope, ids: Iterable[str], *, what: str) -> None:
    """Raise :class:`InvalidInputError` unless every id names an episode of the scope."""
    missing = missing_episodes(store, scope, ids)
    if missing:
        raise InvalidInputError(
            f"{what} cites episodes not in scope {scope} (they do not exist): " + ", ".join(missing)
        )


def in_store(store: RecordStore) -> Require:
    """The :data:`Require` of curated writes: citations must name episodes in ``store``."""

    def require(scope: Scope, ids: Iterable[str], what: str) -> None:
        require_episodes(store, scope, ids, what=what)

    return require


def clean_profile(
    require: Require, scope: Scope, profile: Profile, previous: Profile | None
) -> Profile:
    """The profile with values scrubbed; each new or changed value must cite episodes of
    the scope (checked by ``require``)."""
    before = {**(previous.fields if previous else {}), **(previous.preferences if previous else {})}
    sections: list[dict[str, Slot]] = []
    for slots in (profile.fields, profile.preferences):
        cleaned: dict[str, Slot] = {}
        for key, slot in slots.items():
            slot = Slot(clean_text(slot.value, scope), tuple(slot.sources), slot.confidence)
            old = before.get(key)
            if old is None or old.value != slot.value or old.sources != slot.sources:
                if not slot.sources:
                    raise InvalidInputError(f"profile value {slot.value!r} cites no episode")
                known = set(old.sources) if old is not None else set()
                require(
                    scope,
                    (s for s in slot.sources if s not in known),
                    f"profile value {slot.value!r}",
                )
            cleaned[key] = slot
        sections.append(cleaned)
    return Profile(fields=sections[0], preferences=sections[1], version=profile.version)


def clean_content(
    require: Require,
    scope: Scope,
    kind: DocumentKind,
    content: Mapping[str, Any],
    previous: Mapping[str, Any],
) -> dict[str, JsonValue]:
    """A document's new ``content`` (from ``update``, or an import) checked and scrubbed for
    its kind; ``require`` checks the citations it adds."""
    try:
        if kind in (DocumentKind.TOPIC, DocumentKind.ESSENTIALS):
            return _clean_curated(require, scope, content, previous)
        if kind == DocumentKind.PROFILE:
            profile = clean_profile(
                require, scope, _profile(content), _profile(previous) if previous else None
            )
            return profile.to_content()
        if kind == DocumentKind.IDENTITY:
            if set(content) != {"text"} or not isinstance(content["text"], str):
                raise InvalidInputError('identity content is {"text": "..."}')
            return {"text": clean_identity(content["text"], scope)}
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise InvalidInputError(f"{kind.value} content is malformed: {exc!r}") from exc
    raise InvalidInputError(
        f"{kind.value} documents are kept by curation and cannot be edited through update"
    )


def _profile(content: Mapping[str, Any]) -> Profile:
    unknown = set(content) - {"fields", "preferences"}
    if unknown:
        raise InvalidInputError(f"unknown profile section(s): {', '.join(sorted(unknown))}")
    return Profile(
        fields={str(k): Slot.from_json(v) for k, v in content.get("fields", {}).items()},
        preferences={str(k): Slot.from_json(v) for k, v in content.get("preferences", {}).items()},
    )


def _clean_curated(
    require: Require, scope: Scope, content: Mapping[str, Any], previous: Mapping[str, Any]
) -> dict[str, JsonValue]:
    from memstrata.document.format import Section
    from memstrata.document.service import document_from_json, document_to_json

    doc = document_from_json(content)
    try:  # a version stored malformed by an older memstrata can be replaced
        old = document_from_json(previous) if previous else None
    except InvalidInputError:
        old = None
    had = {b.id: b for s in (old.sections if old else ()) for b in s.bullets}
    cited_before = {c.episode_id for b in had.values() for c in b.citations}
    sections = []
    for section in doc.sections:
        bullets = []
        for bullet in section.bullets:
            bullet = replace(bullet, text=clean_text(bullet.text, scope))
            if not bullet.id.startswith("m_") or kind_of(bullet.id) != "item":
                raise InvalidInputError(f"bullet id {bullet.id!r} is not an item id (m_...)")
            if had.get(bullet.id) != bullet and not bullet.citations:
                raise InvalidInputError(f"bullet {bullet.id or bullet.text!r} cites no episode")
            bullets.append(bullet)
        sections.append(Section(section.heading, tuple(bullets)))
    doc = replace(doc, sections=tuple(sections))
    require(
        scope,
        (
            c.episode_id
            for s in doc.sections
            for b in s.bullets
            for c in b.citations
            if c.episode_id not in cited_before
        ),
        f"the document {doc.title!r}",
    )
    return document_to_json(doc)


def clean_import(batch: Restoration, *, scrub_capture: bool) -> Restoration:
    """An import's records through the same scrub and citation check as every curated
    write: fact texts (with their slots and the words of their times), bullets and profile
    values fully scrubbed, the identity (and the
    episodes, unless ``scrub_capture`` is off) of secrets; every source and citation must
    name an episode of the import in the record's scope, or the whole import is refused.
    Text already scrubbed is left as it is, so a clean export comes back exactly."""
    episodes = batch.episodes

    def require(scope: Scope, ids: Iterable[str], what: str) -> None:
        missing = missing_among(episodes, scope, ids)
        if missing:
            raise InvalidInputError(
                f"{what} cites episodes not in the import in scope {scope}: " + ", ".join(missing)
            )

    if scrub_capture:
        episodes = [replace(e, text=scrubbed(e.text, e.scope, secrets_only=True)) for e in episodes]
    facts = []
    for fact in batch.facts:
        require(fact.scope, fact.sources, f"fact {fact.id}")
        facts.append(
            fact.evolve(
                text=clean_text(fact.text, fact.scope),
                when=clean_when(fact.when, fact.scope),
                slot=clean_slot(fact.slot, fact.scope),
                value=clean_value(fact.value, fact.scope),
            )
        )
    documents = [_clean_imported(require, doc) for doc in batch.documents]
    return replace(batch, episodes=episodes, facts=facts, documents=documents)


def _clean_imported(require: Require, doc: Document) -> Document:
    if doc.kind == DocumentKind.STATE:  # bookkeeping of curation runs, no text
        return doc
    try:
        content = clean_content(require, doc.scope, doc.kind, doc.content, {})
    except InvalidInputError as exc:
        raise InvalidInputError(f"{doc.kind.value} document {doc.key!r}: {exc}") from exc
    return replace(doc, content=content)
