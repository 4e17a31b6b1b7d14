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

``import_directory`` reads it back into a store where the scope is empty and restores the same
records: the same ids, versions and times, documents re-read from their (possibly edited)
markdown. Files are written to a temporary name and renamed, so a failed export leaves no
half-written file behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
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
from memstrata.document.format import parse, serialize
from memstrata.document.service import document_from_json, document_to_json
from memstrata.errors import InvalidInputError
from memstrata.model import Document, DocumentKind, Episode, Scope
from memstrata.ports import RecordStore
from memstrata.textio import read_text

FORMAT: Final = "memstrata-markdown"
FORMAT_VERSION: Final = 1


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


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
        data = json.loads(text)
        if not isinstance(data, dict):
            raise InvalidInputError(f"a {kind.value} file must hold a JSON object")
        return data
    return document_to_json(parse(text))


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


def _lines(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InvalidInputError(f"{path}:{number}: invalid JSON: {exc.msg}") from exc
    return out


def _moved(scope: Scope, user: str | None) -> Scope:
    return scope if user is None else Scope(user, scope.thread, scope.agent)


def import_directory(store: RecordStore, directory: Path, *, user: str | None = None) -> Scope:
    """Restore a directory written by :func:`export_directory` (into ``user`` if given).

    Everything is read and checked first, then stored in one transaction."""
    manifest_path = directory / "manifest.json"
    if not manifest_path.exists():
        raise InvalidInputError(f"{directory} has no manifest.json; not a memstrata export")
    try:
        manifest = json.loads(read_text(manifest_path))
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"cannot read {manifest_path}: {exc}") from exc
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
    store.restore(target, episodes, facts, documents)
    return target
