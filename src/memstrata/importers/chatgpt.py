"""ChatGPT data export: ``conversations.json``.

The file is a list of conversations. Each holds its messages as a tree, ``mapping``: node id ->
``{"id", "message", "parent", "children"}``; ``current_node`` is the leaf of the branch the
user last saw (regenerated answers and edited prompts leave other branches behind). A
conversation is imported along that branch, walking from ``current_node`` up to the root;
``all_branches`` adds every other node too (marked ``branch: alternate``).

A message becomes a :class:`Turn` keyed ``chatgpt:<conversation id>:<message id>``. Its author
role is kept (user, assistant, system, tool); ``create_time`` (seconds since 1970) is its time.
Text parts are joined; a non-text part of a multimodal message is described (``[image]``);
code and execution output keep their text. Hidden messages (``is_visually_hidden_from_
conversation``: the system prompt and custom instructions), empty messages and content that is
not text (browsing displays, reasoning summaries) are skipped and counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from memstrata.errors import ImportFormatError
from memstrata.importers.base import (
    IMPORT_KEY,
    Conversation,
    ImportBatch,
    Skipped,
    epoch_time,
    read_json,
    thread_key,
)
from memstrata.model import JsonValue, Role, Turn

_ROLES: Final = {
    "user": Role.USER,
    "assistant": Role.ASSISTANT,
    "system": Role.SYSTEM,
    "tool": Role.TOOL,
}
#: content types whose ``text`` field is what was said
_TEXT_FIELD: Final = frozenset({"code", "execution_output", "tether_quote"})
#: content types that hold text in ``parts``
_PARTS: Final = frozenset({"text", "multimodal_text"})


def _part_text(part: Any) -> str:
    if isinstance(part, str):
        return part
    if isinstance(part, dict):
        kind = str(part.get("content_type", "attachment"))
        if kind == "audio_transcription" and isinstance(part.get("text"), str):
            return str(part["text"])
        if kind == "image_asset_pointer":
            return "[image]"
        return f"[{kind}]"
    return ""


def _message_text(message: dict[str, Any], *, source: str, where: str) -> str | None:
    """The message's text; None when its content is not text."""
    content = message.get("content")
    if not isinstance(content, dict):
        raise ImportFormatError("message has no content object", source=source, where=where)
    kind = content.get("content_type")
    if kind in _PARTS:
        parts = content.get("parts") or []
        if not isinstance(parts, list):
            raise ImportFormatError("content parts should be a list", source=source, where=where)
        return "\n".join(t for t in (_part_text(p) for p in parts) if t)
    if kind in _TEXT_FIELD:
        text = content.get("text")
        return text if isinstance(text, str) else ""
    return None


def _branch(mapping: dict[str, Any], leaf: str, *, source: str, where: str) -> list[str]:
    """Node ids from the root down to ``leaf``."""
    path: list[str] = []
    seen: set[str] = set()
    node_id: str | None = leaf
    while node_id is not None:
        if node_id in seen:
            raise ImportFormatError(
                f"the message tree has a cycle at node {node_id}", source=source, where=where
            )
        node = mapping.get(node_id)
        if not isinstance(node, dict):
            raise ImportFormatError(
                f"node {node_id} is named but not in the mapping", source=source, where=where
            )
        seen.add(node_id)
        path.append(node_id)
        parent = node.get("parent")
        node_id = parent if isinstance(parent, str) else None
    path.reverse()
    return path


def _last_leaf(mapping: dict[str, Any]) -> str:
    """Without ``current_node``: the leaf whose message is newest."""
    leaves = [k for k, n in mapping.items() if isinstance(n, dict) and not n.get("children")]

    def when(node_id: str) -> float:
        message = mapping[node_id].get("message") or {}
        value = message.get("create_time") if isinstance(message, dict) else None
        return float(value) if isinstance(value, int | float) else 0.0

    return max(leaves, key=lambda k: (when(k), k))


def _others(mapping: dict[str, Any], main: list[str]) -> list[str]:
    """Every node not on the main branch, depth first from the roots, children in order."""
    on_main = set(main)
    roots = [k for k, n in mapping.items() if isinstance(n, dict) and n.get("parent") is None]
    order: list[str] = []
    seen: set[str] = set()
    stack = list(reversed(roots))
    while stack:
        node_id = stack.pop()
        if node_id in seen or not isinstance(mapping.get(node_id), dict):
            continue
        seen.add(node_id)
        if node_id not in on_main:
            order.append(node_id)
        children = mapping[node_id].get("children") or []
        stack.extend(reversed([c for c in children if isinstance(c, str)]))
    return order


def _conversation(
    raw: Any, index: int, source: str, skipped: list[Skipped], *, all_branches: bool
) -> Conversation | None:
    where = f"conversation {index}"
    if not isinstance(raw, dict):
        raise ImportFormatError(
            f"expected an object, got {type(raw).__name__}", source=source, where=where
        )
    conv_id = raw.get("conversation_id") or raw.get("id")
    if not isinstance(conv_id, str) or not conv_id:
        raise ImportFormatError(
            "missing field 'conversation_id' (or 'id')", source=source, where=where
        )
    where = f"conversation {conv_id}"
    key = thread_key(conv_id, source=source, where=where)
    title = raw.get("title") if isinstance(raw.get("title"), str) else ""
    mapping = raw.get("mapping")
    if not isinstance(mapping, dict):
        raise ImportFormatError("field 'mapping' should be an object", source=source, where=where)
    if not mapping:
        skipped.append(Skipped(where, "no messages"))
        return None
    started = epoch_time(raw.get("create_time"), source=source, where=where)
    current = raw.get("current_node")
    if current is not None and not isinstance(current, str):
        raise ImportFormatError("current_node should be a node id", source=source, where=where)
    main = _branch(mapping, current or _last_leaf(mapping), source=source, where=where)
    order = [(n, "main") for n in main]
    if all_branches:
        order += [(n, "alternate") for n in _others(mapping, main)]
    elif len(mapping) > len(main):
        hidden = len([n for n in _others(mapping, main) if mapping[n].get("message")])
        if hidden:
            skipped.append(Skipped(where, f"{hidden} message(s) on other branches"))
    turns: list[Turn] = []
    for node_id, branch in order:
        nwhere = f"{where} node {node_id}"
        node = mapping[node_id]
        message = node.get("message")
        if message is None:
            continue  # the tree's root holds no message
        if not isinstance(message, dict):
            raise ImportFormatError("message should be an object", source=source, where=nwhere)
        author = message.get("author")
        role_name = author.get("role") if isinstance(author, dict) else None
        if not isinstance(role_name, str):
            raise ImportFormatError("message has no author role", source=source, where=nwhere)
        meta = message.get("metadata")
        if isinstance(meta, dict) and meta.get("is_visually_hidden_from_conversation"):
            skipped.append(Skipped(nwhere, f"hidden {role_name} message"))
            continue
        text = _message_text(message, source=source, where=nwhere)
        if text is None:
            kind = message["content"].get("content_type")
            skipped.append(Skipped(nwhere, f"non-text content ({kind})"))
            continue
        if not text.strip():
            skipped.append(Skipped(nwhere, "empty message"))
            continue
        message_id = message.get("id") if isinstance(message.get("id"), str) else node_id
        name = author.get("name") if isinstance(author, dict) else None
        metadata: dict[str, JsonValue] = {
            IMPORT_KEY: f"chatgpt:{conv_id}:{message_id}",
            "message_id": message_id,
            "title": title,
            "branch": branch,
        }
        if isinstance(node.get("parent"), str):
            metadata["parent_id"] = node["parent"]
        turns.append(
            Turn(
                text=text,
                speaker=name if isinstance(name, str) and name else role_name,
                role=_ROLES.get(role_name, Role.OTHER),
                time=epoch_time(message.get("create_time"), source=source, where=nwhere) or started,
                session_id=key,
                metadata=metadata,
            )
        )
    if not turns:
        skipped.append(Skipped(where, "no text messages"))
        return None
    return Conversation(key=key, turns=tuple(turns), metadata={"title": title})


def load_chatgpt(path: Path, *, all_branches: bool = False) -> ImportBatch:
    source = str(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise ImportFormatError(
            "expected a list of conversations (ChatGPT's conversations.json)", source=source
        )
    skipped: list[Skipped] = []
    conversations = []
    for index, raw in enumerate(data):
        conv = _conversation(raw, index, source, skipped, all_branches=all_branches)
        if conv is not None:
            conversations.append(conv)
    return ImportBatch(
        source=source,
        format="chatgpt",
        conversations=tuple(conversations),
        skipped=tuple(skipped),
        keyed=True,
    )
