"""MemPalace drawers: verbatim chunks filed by wing and room.

MemPalace keeps each drawer in a ChromaDB collection: an id (``drawer_<wing>_<room>_<hash>``),
the chunk's text as the document, and metadata with ``wing``, ``room``, ``source_file``,
``chunk_index``, ``added_by`` and ``filed_at``. Two files carry them out, and both are read:

- JSON, the shape the collection's ``get(include=["documents", "metadatas"])`` returns:
  ``{"ids": [...], "documents": [...], "metadatas": [...]}`` (parallel lists);
- MemPalace's markdown export, one file per room::

      # <wing> / <room>

      ## <drawer id>

      > first line of the chunk
      > next line

      | Field | Value |
      |-------|-------|
      | Source | <source_file> |
      | Filed | <filed_at> |
      | Added by | <agent> |

      ---

Each drawer becomes a :class:`Turn` keyed ``mempalace:<drawer id>``, in the thread of its
wing, its session the room and its metadata naming ``topic`` ``<wing>/<room>``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from memstrata.errors import ImportFormatError
from memstrata.importers.base import (
    IMPORT_KEY,
    Conversation,
    ImportBatch,
    Skipped,
    iso_time,
    parse_json,
    read_text,
    thread_key,
)
from memstrata.model import JsonValue, Role, Turn

_FIELDS: Final = {"Source": "source_file", "Filed": "filed_at", "Added by": "added_by"}
_ROW_RE: Final = re.compile(r"\|\s*([^|]+?)\s*\|\s*(.*?)\s*\|")
#: metadata kept from a drawer besides wing and room
_KEPT: Final = ("source_file", "chunk_index", "added_by", "filed_at", "hall", "ingest_mode")

Drawer = tuple[str, str, dict[str, Any], str]  # id, text, metadata, where


def _from_json(data: Any, source: str) -> list[Drawer]:
    if not isinstance(data, dict) or not all(
        isinstance(data.get(k), list) for k in ("ids", "documents", "metadatas")
    ):
        raise ImportFormatError(
            "expected MemPalace drawers as {'ids': [...], 'documents': [...], "
            "'metadatas': [...]} (the collection's get())",
            source=source,
        )
    ids, documents, metadatas = data["ids"], data["documents"], data["metadatas"]
    if not len(ids) == len(documents) == len(metadatas):
        raise ImportFormatError(
            f"ids ({len(ids)}), documents ({len(documents)}) and metadatas ({len(metadatas)}) "
            "differ in length",
            source=source,
        )
    drawers: list[Drawer] = []
    for i, (drawer_id, text, meta) in enumerate(zip(ids, documents, metadatas, strict=True)):
        where = f"drawer {i}"
        if not isinstance(drawer_id, str) or not drawer_id:
            raise ImportFormatError("drawer id should be text", source=source, where=where)
        where = f"drawer {drawer_id}"
        if not isinstance(text, str):
            raise ImportFormatError("document should be text", source=source, where=where)
        if not isinstance(meta, dict):
            raise ImportFormatError("metadata should be an object", source=source, where=where)
        drawers.append((drawer_id, text, meta, where))
    return drawers


def _from_markdown(text: str, source: str) -> list[Drawer]:
    lines = text.removeprefix("\ufeff").split("\n")
    first = next((n for n, line in enumerate(lines) if line.strip()), None)
    if first is None or not lines[first].startswith("# ") or " / " not in lines[first]:
        raise ImportFormatError(
            "expected MemPalace JSON or a room file of its markdown export ('# <wing> / <room>')",
            source=source,
            line=(first or 0) + 1,
        )
    wing, room = (p.strip() for p in lines[first][2:].split(" / ", 1))
    drawers: list[Drawer] = []
    current: tuple[str, list[str], dict[str, Any], int] | None = None

    def close() -> None:
        if current is not None:
            drawer_id, quoted, meta, _ = current
            drawers.append((drawer_id, "\n".join(quoted), meta, f"drawer {drawer_id}"))

    for number, raw in enumerate(lines[first + 1 :], start=first + 2):
        line = raw.rstrip("\r")
        if line.startswith("## "):
            close()
            current = (line[3:].strip(), [], {"wing": wing, "room": room}, number)
        elif not line.strip() or line.strip() == "---":
            continue
        elif current is None:
            raise ImportFormatError(
                f"expected a '## <drawer id>' heading, not {line[:40]!r}",
                source=source,
                line=number,
            )
        elif line.startswith(">"):
            current[1].append(line[2:] if line.startswith("> ") else line[1:])
        elif row := _ROW_RE.fullmatch(line.strip()):
            name, value = row.group(1), row.group(2)
            if name in _FIELDS and value != "unknown":
                current[2][_FIELDS[name]] = value
        else:
            raise ImportFormatError(
                f"cannot read {line[:40]!r}: expected '> ' quoted text or a field row",
                source=source,
                line=number,
            )
    close()
    return drawers


def _slug(value: str) -> str:
    return re.sub(r"[\s/\\]+", "-", value.strip())[:128] or "general"


def load_mempalace(path: Path) -> ImportBatch:
    source = str(path)
    text = read_text(path)
    if text.lstrip().startswith("{"):
        drawers = _from_json(parse_json(text, source=source), source)
    else:
        drawers = _from_markdown(text, source)
    skipped: list[Skipped] = []
    wings: dict[str, list[Turn]] = {}
    for drawer_id, content, meta, where in drawers:
        if not content.strip():
            skipped.append(Skipped(where, "empty drawer"))
            continue
        wing = str(meta.get("wing") or "unknown")
        room = str(meta.get("room") or "general")
        metadata: dict[str, JsonValue] = {
            IMPORT_KEY: f"mempalace:{drawer_id}",
            "drawer_id": drawer_id,
            "wing": wing,
            "room": room,
            "topic": f"{wing}/{room}",
        }
        for name in _KEPT:
            value = meta.get(name)
            if isinstance(value, str | int | float | bool):
                metadata[name] = value
        added_by = meta.get("added_by")
        thread = thread_key(_slug(wing), source=source, where=where)
        wings.setdefault(thread, []).append(
            Turn(
                text=content,
                speaker=added_by if isinstance(added_by, str) and added_by else "mempalace",
                role=Role.OTHER,
                time=iso_time(meta.get("filed_at") or None, source=source, where=where),
                session_id=_slug(room),
                metadata=metadata,
            )
        )
    return ImportBatch(
        source=source,
        format="mempalace",
        conversations=tuple(
            Conversation(key=k, turns=tuple(v), metadata={"title": k}) for k, v in wings.items()
        ),
        skipped=tuple(skipped),
        keyed=True,
    )
