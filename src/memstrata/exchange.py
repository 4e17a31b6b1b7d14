"""A scope's memory as a directory people can read, edit and bring back.

``export_directory`` writes::

    manifest.json      format, scope, and each document's id, kind, key, version and times
    identity.md        the L0 identity text, as the user wrote it
    essentials.md      L1 essentials, markdown with footnote citations
    topics/<key>.md    one L2 topic document each
    profile.json       the structured profile, if any
    state/<key>.json   bookkeeping of curation runs (what consolidation has read)
    episodes.jsonl     every verbatim turn
    facts.jsonl        every fact, current and superseded

``read_directory`` reads it back as the records to restore into a scope that is empty: the
same ids, versions and times, documents re-read from their (possibly edited) markdown, a
bullet added by hand without an id given a new one. Into another user, every id is new
(sources, supersede links, bullet ids and citations remapped), so the copy can live beside
its original in one store. The facade (``Memory.import_markdown``) passes the records
through the one scrub and citation check of curated writes, then stores them in one
transaction. Files are written to a temporary name and renamed, so a failed export leaves no
half-written file behind.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from memstrata.codec import (
    episode_from_json,
    episode_to_json,
    fact_from_json,
    fact_to_json,
    format_time,
    parse_time,
    scope_to_json,
)
from memstrata.document.format import Document as CuratedDocument
from memstrata.document.format import Section, parse, serialize
from memstrata.document.service import document_from_json, document_to_json
from memstrata.errors import InvalidInputError
from memstrata.ids import kind_of, new_id
from memstrata.model import Document, DocumentKind, Episode, Fact, Scope
from memstrata.ports import RecordStore
from memstrata.textio import check_unicode, read_text

FORMAT: Final = "memstrata-markdown"
FORMAT_VERSION: Final = 1


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # a user's text
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        tmp.replace(path)
    except OSError as exc:  # a full disk, a read-only place, a file where a folder should be
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise InvalidInputError(f"cannot write {path}: {exc}") from exc


def _jsonl(rows: Iterable[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in rows)


def _doc_file(doc: Document) -> str:
    prefix = "" if doc.scope.thread is None else f"threads/{doc.scope.thread}/"
    if doc.scope.agent is not None:
        prefix += f"agents/{doc.scope.agent}/"
    if doc.kind == DocumentKind.IDENTITY:
        return prefix + "identity.md"
    if doc.kind == DocumentKind.ESSENTIALS:
        return prefix + "essentials.md"
    if doc.kind == DocumentKind.PROFILE:
        return prefix + "profile.json"
    if doc.kind == DocumentKind.STATE:
        return prefix + f"state/{doc.key}.json"
    return prefix + f"topics/{doc.key}.md"


def _render(doc: Document) -> str:
    if doc.kind == DocumentKind.IDENTITY:
        return str(doc.content.get("text", "")) + "\n"  # one newline is added, one removed
    if doc.kind in (DocumentKind.PROFILE, DocumentKind.STATE):
        return json.dumps(dict(doc.content), ensure_ascii=False, indent=2) + "\n"
    return serialize(document_from_json(doc.content))


def _read(kind: DocumentKind, text: str) -> dict[str, Any]:
    if kind == DocumentKind.IDENTITY:
        return {"text": text[:-1] if text.endswith("\n") else text}
    if kind in (DocumentKind.PROFILE, DocumentKind.STATE):
        data = _json(text, kind.value)
        if not isinstance(data, dict):
            raise InvalidInputError(f"a {kind.value} file must hold a JSON object")
        return data
    return document_to_json(_with_bullet_ids(parse(text)))


def _with_bullet_ids(doc: CuratedDocument) -> CuratedDocument:
    """A bullet added by hand without its ``<!--m_...-->`` id gets a new one."""
    if all(b.id for s in doc.sections for b in s.bullets):
        return doc
    return replace(
        doc,
        sections=tuple(
            Section(
                s.heading,
                tuple(b if b.id else replace(b, id=new_id("m")) for b in s.bullets),
            )
            for s in doc.sections
        ),
    )


def export_directory(store: RecordStore, scope: Scope, directory: Path) -> dict[str, Any]:
    """Write the scope's memory under ``directory``; returns the manifest."""
    episodes = list(store.iter_episodes(scope))
    facts = list(store.iter_facts(scope))
    documents = store.list_documents(scope)
    entries = []
    for doc in documents:
        name = _doc_file(doc)
        _write(directory / name, _render(doc))
        entries.append(
            {
                "id": doc.id,
                "scope": scope_to_json(doc.scope),
                "kind": doc.kind.value,
                "key": doc.key,
                "version": doc.version,
                "file": name,
                "created_at": format_time(doc.created_at),
                "updated_at": format_time(doc.updated_at),
            }
        )
    _write(directory / "episodes.jsonl", _jsonl(episode_to_json(e) for e in episodes))
    _write(directory / "facts.jsonl", _jsonl(fact_to_json(f) for f in facts))
    manifest = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "scope": scope_to_json(scope),
        "episodes": len(episodes),
        "facts": len(facts),
        "documents": entries,
    }
    _write(directory / "manifest.json", json.dumps(manifest, ensure_ascii=False, indent=2) + "\n")
    return manifest


def _no_constant(name: str) -> Any:
    raise InvalidInputError(f"{name} is not a JSON number")


def _json(text: str, where: str) -> Any:
    """Strict JSON (no NaN or Infinity, which no reader of the records could parse back, and
    no lone surrogate escaped as ``\\ud800``, which no store can keep)."""
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"{where}: invalid JSON: {exc.msg} (line {exc.lineno})") from exc
    except InvalidInputError as exc:
        raise InvalidInputError(f"{where}: invalid JSON: {exc}") from exc
    check_unicode(value, where)
    return value


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if line.strip():
            out.append(_json(line, f"{path}:{number}"))
    return out


def _moved(scope: Scope, user: str | None) -> Scope:
    return scope if user is None else Scope(user, scope.thread, scope.agent)


@dataclass(frozen=True, slots=True)
class Restoration:
    """The records of an export, read and checked, moved into ``scope`` (which must be
    empty) with their ids as in the files; :func:`renumbered` gives them new ids when the
    export came from another user (``source_user``)."""

    scope: Scope
    source_user: str
    episodes: list[Episode]
    facts: list[Fact]
    documents: list[Document]


def read_directory(directory: Path, *, user: str | None = None) -> Restoration:
    """Read a directory written by :func:`export_directory` (moved into ``user`` if given);
    stores nothing."""
    manifest_path = directory / "manifest.json"
    if not manifest_path.exists():
        raise InvalidInputError(f"{directory} has no manifest.json; not a memstrata export")
    manifest = _json(read_text(manifest_path), str(manifest_path))
    if manifest.get("format") != FORMAT or manifest.get("format_version") != FORMAT_VERSION:
        raise InvalidInputError(f"{manifest_path} is not a {FORMAT} v{FORMAT_VERSION} manifest")
    from memstrata.codec import scope_from_json

    target = _moved(scope_from_json(manifest["scope"]), user)
    try:
        episodes: list[Episode] = []
        for row in _lines(directory / "episodes.jsonl"):
            ep = episode_from_json(row)
            episodes.append(
                Episode(
                    ep.id,
                    _moved(ep.scope, user),
                    ep.surface,
                    ep.session_id,
                    ep.speaker,
                    ep.role,
                    ep.text,
                    ep.time,
                    ep.metadata,
                    ep.archived,
                )
            )
        facts = [
            f.evolve(scope=_moved(f.scope, user))
            for f in (fact_from_json(r) for r in _lines(directory / "facts.jsonl"))
        ]
        documents = []
        for entry in manifest["documents"]:
            kind = DocumentKind(entry["kind"])
            path = directory / entry["file"]
            if not path.resolve().is_relative_to(directory.resolve()):
                raise InvalidInputError(
                    f"{manifest_path}: {entry['file']!r} is outside {directory}"
                )
            text = read_text(path)
            documents.append(
                Document(
                    entry["id"],
                    _moved(scope_from_json(entry["scope"]), user),
                    kind,
                    entry["key"],
                    _read(kind, text),
                    int(entry["version"]),
                    parse_time(entry["created_at"]),
                    parse_time(entry["updated_at"]),
                )
            )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidInputError(f"{directory}: malformed export ({exc})") from exc
    return Restoration(target, str(manifest["scope"]["user"]), episodes, facts, documents)


def renumbered(batch: Restoration) -> Restoration:
    """``batch`` ready for ``RecordStore.restore``: into the user it was exported from, as it
    is; into another user, with new ids, so it can live beside its original in one store."""
    if batch.scope.user == batch.source_user:
        return batch
    episodes, facts, documents = _with_new_ids(batch.episodes, batch.facts, batch.documents)
    return replace(batch, episodes=episodes, facts=facts, documents=documents)


def _id_in(value: str) -> str | None:
    """The memstrata id ``value`` is, or cites (``surface:id``), if any."""
    candidate = value.rpartition(":")[2]
    try:
        kind_of(candidate)
    except InvalidInputError:
        return None
    return candidate


def _collect_ids(value: Any, into: set[str]) -> None:
    if isinstance(value, str):
        found = _id_in(value)
        if found is not None:
            into.add(found)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _collect_ids(key, into)
            _collect_ids(item, into)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_ids(item, into)


def _remapped(value: Any, new: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        found = _id_in(value)
        return value if found is None else value[: len(value) - len(found)] + new[found]
    if isinstance(value, Mapping):
        return {_remapped(k, new): _remapped(v, new) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_remapped(v, new) for v in value)
    return value


def _with_new_ids(
    episodes: list[Episode], facts: list[Fact], documents: list[Document]
) -> tuple[list[Episode], list[Fact], list[Document]]:
    """The records with a new id for every id they hold or cite (their own, sources,
    supersede links, bullet ids and citations, bookkeeping), so a copy can live beside its
    original in one store. New ids keep the order of the old ones, which curation relies on
    (the last fact a consolidation read)."""
    old: set[str] = set()
    for ep in episodes:
        old.add(ep.id)
    for fact in facts:
        _collect_ids([fact.id, list(fact.sources), fact.superseded_by], old)
    for doc in documents:
        _collect_ids([doc.id, dict(doc.content)], old)
    new = {
        item_id: new_id(item_id.partition("_")[0])
        for item_id in sorted(old, key=lambda i: (i.partition("_")[2], i))
    }
    return (
        [replace(ep, id=new[ep.id]) for ep in episodes],
        [
            replace(
                fact,
                id=new[fact.id],
                sources=tuple(new[s] for s in fact.sources),
                superseded_by=None if fact.superseded_by is None else new[fact.superseded_by],
            )
            for fact in facts
        ],
        [
            replace(doc, id=new[doc.id], content=_remapped(dict(doc.content), new))
            for doc in documents
        ],
    )
