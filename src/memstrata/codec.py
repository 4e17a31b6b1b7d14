"""JSON encoding of the domain records, shared by stores, export and the front-ends.

Pure functions, no I/O. Times are ISO 8601 in UTC with microseconds and a ``Z``, a form
that sorts as text and that every store backend can keep in a text column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from memstrata.errors import InvalidInputError
from memstrata.model import (
    ApiKey,
    Category,
    Document,
    DocumentKind,
    Episode,
    Fact,
    Granularity,
    ItemVersion,
    JsonValue,
    Layer,
    Role,
    Scope,
    SearchFilter,
    SearchHit,
    Stats,
    When,
    utc,
)

# an unpadded year, as ``strftime("%Y")`` writes years below 1000 on some platforms
_SHORT_YEAR = re.compile(r"^(\d{1,3})-(?=\d\d-\d\d)")


def format_time(value: datetime) -> str:
    """``value`` in UTC as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``; the year always has four digits, so
    every time sorts as text (``strftime`` does not pad years below 1000 everywhere)."""
    t = utc(value)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}T{t.hour:02d}:{t.minute:02d}:"
        f"{t.second:02d}.{t.microsecond:06d}Z"
    )


def parse_time(value: str) -> datetime:
    """Parse an ISO 8601 time; a value without a zone is taken as UTC.

    Lenient with what older versions stored: a year written with fewer than four digits
    reads as that year."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{value!r} is not an ISO 8601 time")
    text = _SHORT_YEAR.sub(lambda m: f"{int(m.group(1)):04d}-", value.strip())
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise InvalidInputError(f"{value!r} is not an ISO 8601 time") from exc
    return utc(parsed)


def _opt_time(value: datetime | None) -> str | None:
    return None if value is None else format_time(value)


def _opt_parse(value: Any) -> datetime | None:
    return None if value is None else parse_time(str(value))


def scope_to_json(scope: Scope) -> dict[str, JsonValue]:
    data: dict[str, JsonValue] = {"user": scope.user}
    if scope.thread is not None:
        data["thread"] = scope.thread
    if scope.agent is not None:
        data["agent"] = scope.agent
    return data


def scope_from_json(data: Mapping[str, Any]) -> Scope:
    return Scope(data["user"], data.get("thread"), data.get("agent"))


def episode_to_json(ep: Episode) -> dict[str, JsonValue]:
    return {
        "id": ep.id,
        "kind": "episode",
        "scope": scope_to_json(ep.scope),
        "surface": ep.surface,
        "session_id": ep.session_id,
        "speaker": ep.speaker,
        "role": ep.role.value,
        "text": ep.text,
        "time": format_time(ep.time),
        "metadata": dict(ep.metadata),
        "archived": ep.archived,
    }


def episode_from_json(data: Mapping[str, Any]) -> Episode:
    return Episode(
        id=data["id"],
        scope=scope_from_json(data["scope"]),
        surface=data["surface"],
        session_id=data["session_id"],
        speaker=data.get("speaker"),
        role=Role(data.get("role", "user")),
        text=data["text"],
        time=parse_time(data["time"]),
        metadata=dict(data.get("metadata") or {}),
        archived=bool(data.get("archived", False)),
    )


def when_to_json(when: When | None) -> dict[str, JsonValue] | None:
    """A fact's time as ``{"text", "start", "end"}`` (times in UTC), or None."""
    if when is None:
        return None
    return {"text": when.text, "start": format_time(when.start), "end": format_time(when.end)}


def when_from_json(data: Any) -> When | None:
    """What :func:`when_to_json` wrote; a malformed value is an :class:`InvalidInputError`."""
    if data is None:
        return None
    if not isinstance(data, Mapping) or set(data) != {"text", "start", "end"}:
        raise InvalidInputError(
            f'a fact\'s when is {{"text", "start", "end"}} or null, not {data!r:.80}'
        )
    return When(data["text"], parse_time(data["start"]), parse_time(data["end"]))


def fact_to_json(fact: Fact) -> dict[str, JsonValue]:
    return {
        "id": fact.id,
        "kind": "fact",
        "scope": scope_to_json(fact.scope),
        "text": fact.text,
        "category": fact.category.value,
        "confidence": fact.confidence,
        "importance": fact.importance,
        "topic": fact.topic,
        "sources": list(fact.sources),
        "valid_from": format_time(fact.valid_from),
        "valid_to": _opt_time(fact.valid_to),
        "superseded_by": fact.superseded_by,
        "created_at": format_time(fact.created_at),
        "updated_at": format_time(fact.updated_at),
        "access_count": fact.access_count,
        "version": fact.version,
        "when": when_to_json(fact.when),
        "slot": fact.slot,
        "value": fact.value,
    }


def fact_from_json(data: Mapping[str, Any]) -> Fact:
    return Fact(
        id=data["id"],
        scope=scope_from_json(data["scope"]),
        text=data["text"],
        category=Category(data["category"]),
        confidence=float(data["confidence"]),
        importance=float(data["importance"]),
        topic=data.get("topic"),
        sources=tuple(data.get("sources", ())),
        valid_from=parse_time(data["valid_from"]),
        valid_to=_opt_parse(data.get("valid_to")),
        superseded_by=data.get("superseded_by"),
        created_at=parse_time(data["created_at"]),
        updated_at=parse_time(data["updated_at"]),
        access_count=int(data.get("access_count", 0)),
        version=int(data.get("version", 1)),
        when=when_from_json(data.get("when")),
        slot=data.get("slot"),
        value=data.get("value"),
    )


def document_to_json(doc: Document) -> dict[str, JsonValue]:
    return {
        "id": doc.id,
        "kind": "document",
        "scope": scope_to_json(doc.scope),
        "doc_kind": doc.kind.value,
        "key": doc.key,
        "content": dict(doc.content),
        "version": doc.version,
        "created_at": format_time(doc.created_at),
        "updated_at": format_time(doc.updated_at),
    }


def document_from_json(data: Mapping[str, Any]) -> Document:
    return Document(
        id=data["id"],
        scope=scope_from_json(data["scope"]),
        kind=DocumentKind(data["doc_kind"]),
        key=data["key"],
        content=dict(data["content"]),
        version=int(data["version"]),
        created_at=parse_time(data["created_at"]),
        updated_at=parse_time(data["updated_at"]),
    )


def item_version_to_json(entry: ItemVersion) -> dict[str, JsonValue]:
    return {
        "item_id": entry.item_id,
        "version": entry.version,
        "op": entry.op.value,
        "at": format_time(entry.at),
        "reason": entry.reason,
        "data": dict(entry.data),
    }


def stats_to_json(stats: Stats) -> dict[str, JsonValue]:
    return {
        "scope": scope_to_json(stats.scope),
        "episodes": stats.episodes,
        "archived_episodes": stats.archived_episodes,
        "sessions": stats.sessions,
        "speakers": stats.speakers,
        "facts_current": stats.facts_current,
        "facts_superseded": stats.facts_superseded,
        "documents": dict(stats.documents),
        "first_time": _opt_time(stats.first_time),
        "last_time": _opt_time(stats.last_time),
    }


def api_key_to_json(key: ApiKey) -> dict[str, JsonValue]:
    """A key as listed: its public fields, never the key (the store does not have it)."""
    return {
        "id": key.id,
        "prefix": key.prefix,
        "name": key.name,
        "role": key.role.value,
        "users": None if key.users is None else list(key.users),
        "created_at": format_time(key.created_at),
        "revoked_at": _opt_time(key.revoked_at),
        "active": key.active,
    }


def record_to_json(record: Episode | Fact | Document) -> dict[str, JsonValue]:
    """Encode any stored record; the ``kind`` key tells them apart."""
    if isinstance(record, Episode):
        return episode_to_json(record)
    if isinstance(record, Fact):
        return fact_to_json(record)
    return document_to_json(record)


def record_from_json(data: Mapping[str, Any]) -> Episode | Fact | Document:
    """What :func:`record_to_json` wrote, told apart by its ``kind``."""
    kind = data.get("kind")
    if kind == "episode":
        return episode_from_json(data)
    if kind == "fact":
        return fact_from_json(data)
    if kind == "document":
        return document_from_json(data)
    raise InvalidInputError(f"a record's kind is episode, fact or document, not {kind!r:.40}")


def hit_to_json(hit: SearchHit) -> dict[str, JsonValue]:
    return {
        "id": hit.id,
        "granularity": hit.granularity.value,
        "score": hit.score,
        "components": dict(hit.components),
        "text": hit.text,
        "scope": scope_to_json(hit.scope),
        "session_id": hit.session_id,
        "speaker": hit.speaker,
        "time": _opt_time(hit.time),
        "episodes": list(hit.episodes),
        "topic": hit.topic,
        "bullets": list(hit.bullets),
    }


def hit_from_json(data: Mapping[str, Any]) -> SearchHit:
    """What :func:`hit_to_json` wrote."""
    return SearchHit(
        id=data["id"],
        granularity=Granularity(data["granularity"]),
        score=float(data["score"]),
        components={str(k): float(v) for k, v in dict(data.get("components") or {}).items()},
        text=data["text"],
        scope=scope_from_json(data["scope"]),
        session_id=data.get("session_id"),
        speaker=data.get("speaker"),
        time=_opt_parse(data.get("time")),
        episodes=tuple(data.get("episodes", ())),
        topic=data.get("topic"),
        bullets=tuple(data.get("bullets", ())),
    )


def search_filter(
    *,
    speaker: str | None = None,
    session_id: str | None = None,
    surface: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    category: str | None = None,
    topic: str | None = None,
    layer: str | None = None,
    include_archived: bool = False,
    current_only: bool = True,
) -> SearchFilter:
    """A search filter from a front end's arguments (every field of :class:`SearchFilter`),
    category and layer given by name."""
    try:
        cat = Category(category) if category else None
    except ValueError:
        raise InvalidInputError(
            f"unknown category {category!r}; expected one of "
            + ", ".join(c.value for c in Category)
        ) from None
    try:
        level = Layer(layer) if layer else None
    except ValueError:
        raise InvalidInputError(f"unknown layer {layer!r}; expected L1, L2 or L3") from None
    return SearchFilter(
        speaker=speaker,
        session_id=session_id,
        surface=surface,
        since=since,
        until=until,
        category=cat,
        topic=topic,
        layer=level,
        current_only=current_only,
        include_archived=include_archived,
    )
