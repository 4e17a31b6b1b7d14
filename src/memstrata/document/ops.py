"""Edit operations on curated documents: add, edit, delete (with a reason), move.

Pure functions, no I/O. A batch of operations is applied in order to a copy of a document; the
first operation that cannot apply rejects the whole batch with :class:`OperationError`, naming
the operation and why, so the caller's document and the store stay as they were.
:func:`diff_documents` turns a hand-edited document into the batch that produces it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Final

from memstrata.document.format import Bullet, Citation, Document, Section
from memstrata.errors import InvalidInputError
from memstrata.ids import kind_of, new_id
from memstrata.model import DeleteReason

#: the reasons a person or a curation run may give for deleting a bullet
DELETE_REASONS: Final = (
    DeleteReason.CONTRADICTED,
    DeleteReason.SUPERSEDED,
    DeleteReason.STALE,
    DeleteReason.LOW_SIGNAL,
    DeleteReason.USER_REQUEST,
)


class OpKind(StrEnum):
    ADD = "add"
    EDIT = "edit"
    DELETE = "delete"
    MOVE = "move"


@dataclass(frozen=True, slots=True)
class Operation:
    """One edit. ``id`` names the bullet (for ``add``: the new bullet's id, or "" to assign
    one); ``section`` the destination heading (add, move); ``position`` the index in that
    section (None: at the end); ``text`` and ``citations`` the new content (add, edit; None:
    unchanged); ``reason`` why a bullet is deleted."""

    kind: OpKind
    id: str = ""
    section: str | None = None
    text: str | None = None
    citations: tuple[Citation, ...] | None = None
    reason: DeleteReason | None = None
    position: int | None = None


class OperationError(InvalidInputError):
    """A batch was rejected: operation ``index`` (0-based) cannot apply; nothing changed."""

    def __init__(self, index: int, op: Operation, message: str) -> None:
        target = f" {op.id}" if op.id else ""
        super().__init__(f"operation {index + 1} ({op.kind.value}{target}) rejected: {message}")
        self.index = index
        self.op = op


class _Working:
    """A mutable copy of a document's sections, for applying a batch."""

    def __init__(self, doc: Document) -> None:
        self.title = doc.title
        self.sections: list[tuple[str, list[Bullet]]] = [
            (s.heading, list(s.bullets)) for s in doc.sections
        ]

    def find(self, bullet_id: str) -> tuple[int, int] | None:
        for si, (_, bullets) in enumerate(self.sections):
            for bi, bullet in enumerate(bullets):
                if bullet.id == bullet_id:
                    return si, bi
        return None

    def section(self, heading: str) -> list[Bullet]:
        for name, bullets in self.sections:
            if name == heading:
                return bullets
        created: list[Bullet] = []
        self.sections.append((heading, created))
        return created

    def freeze(self) -> Document:
        return Document(
            self.title,
            tuple(Section(h, tuple(b)) for h, b in self.sections if b),
        )


def _insert(bullets: list[Bullet], bullet: Bullet, position: int | None) -> None:
    if position is None or position >= len(bullets):
        bullets.append(bullet)
    else:
        bullets.insert(max(0, position), bullet)


def _check_text(text: str | None) -> str:
    if text is None or not text.strip():
        raise ValueError("the text is empty")
    return text


def _apply_one(work: _Working, op: Operation, make_id: Callable[[], str]) -> str:
    """Apply ``op``; return the id of the bullet it touched."""
    if op.kind == OpKind.ADD:
        if not op.section:
            raise ValueError("an added bullet needs a section")
        bullet_id = op.id or make_id()
        if kind_of(bullet_id) != "item":
            raise ValueError(f"{bullet_id} is not an item id (m_...)")
        if work.find(bullet_id) is not None:
            raise ValueError(f"{bullet_id} is already in the document")
        bullet = Bullet(bullet_id, _check_text(op.text), op.citations or ())
        _insert(work.section(op.section), bullet, op.position)
        return bullet_id
    found = work.find(op.id)
    if found is None:
        raise ValueError(f"no bullet {op.id} in the document")
    si, bi = found
    bullets = work.sections[si][1]
    if op.kind == OpKind.EDIT:
        if op.text is None and op.citations is None:
            raise ValueError("an edit changes the text, the citations or both")
        current = bullets[bi]
        bullets[bi] = replace(
            current,
            text=_check_text(op.text) if op.text is not None else current.text,
            citations=op.citations if op.citations is not None else current.citations,
        )
    elif op.kind == OpKind.DELETE:
        if op.reason not in DELETE_REASONS:
            allowed = ", ".join(r.value for r in DELETE_REASONS)
            raise ValueError(f"a delete needs a reason, one of: {allowed}")
        del bullets[bi]
    elif op.kind == OpKind.MOVE:
        if not op.section:
            raise ValueError("a move needs a destination section")
        bullet = bullets.pop(bi)
        _insert(work.section(op.section), bullet, op.position)
    return op.id


def apply_operations(
    doc: Document, ops: Sequence[Operation], *, make_id: Callable[[], str] | None = None
) -> tuple[Document, list[str]]:
    """Apply a batch in order. Returns the new document and the id each operation touched
    (added bullets get new ids). Sections left empty disappear. Raises :class:`OperationError`
    for the first operation that cannot apply; ``doc`` is never modified."""
    work = _Working(doc)
    ids = []
    for index, op in enumerate(ops):
        try:
            ids.append(_apply_one(work, op, make_id or (lambda: new_id("m"))))
        except (ValueError, InvalidInputError) as exc:
            raise OperationError(index, op, str(exc)) from None
    return work.freeze(), ids


def _placement(doc: Document) -> dict[str, tuple[str, int]]:
    return {b.id: (s.heading, i) for s in doc.sections for i, b in enumerate(s.bullets) if b.id}


def diff_documents(
    old: Document, new: Document, *, reason: DeleteReason = DeleteReason.USER_REQUEST
) -> list[Operation]:
    """The operations that turn ``old`` into ``new`` (a hand-edited copy).

    Bullets are matched by id; a bullet without an id is new. A missing bullet is deleted with
    ``reason``. Applying the result to ``old`` gives ``new`` up to the ids assigned to added
    bullets and the order of sections (kept from ``old``, new sections last). A changed title is
    an error: the title names the document and is not edited bullet by bullet.
    """
    if new.title != old.title:
        raise InvalidInputError(
            f"the title changed from {old.title!r} to {new.title!r}; titles are not edited"
        )
    old_bullets = {b.id: b for s in old.sections for b in s.bullets}
    new_ids = [b.id for s in new.sections for b in s.bullets if b.id]  # unique: see Document
    ops: list[Operation] = []
    keep = set(new_ids)
    for bullet_id in old_bullets:
        if bullet_id not in keep:
            ops.append(Operation(OpKind.DELETE, bullet_id, reason=reason))
    for s in new.sections:
        for b in s.bullets:
            before = old_bullets.get(b.id) if b.id else None
            if before is not None and (before.text, before.citations) != (b.text, b.citations):
                ops.append(
                    Operation(
                        OpKind.EDIT,
                        b.id,
                        text=b.text if b.text != before.text else None,
                        citations=b.citations if b.citations != before.citations else None,
                    )
                )
    work, _ = apply_operations(old, ops)
    for s in new.sections:
        for position, b in enumerate(s.bullets):
            if b.id and b.id in old_bullets:
                if _placement(work).get(b.id) != (s.heading, position):
                    op = Operation(OpKind.MOVE, b.id, section=s.heading, position=position)
                    ops.append(op)
                    work, _ = apply_operations(work, [op])
            else:
                op = Operation(
                    OpKind.ADD,
                    b.id,
                    section=s.heading,
                    text=b.text,
                    citations=b.citations,
                    position=position,
                )
                ops.append(op)
                work, _ = apply_operations(work, [op])
    return ops


def operation_to_json(op: Operation) -> dict[str, Any]:
    out: dict[str, Any] = {"op": op.kind.value}
    if op.id:
        out["id"] = op.id
    if op.section is not None:
        out["section"] = op.section
    if op.text is not None:
        out["text"] = op.text
    if op.citations is not None:
        out["citations"] = [f"{c.surface}:{c.episode_id}" for c in op.citations]
    if op.reason is not None:
        out["reason"] = op.reason.value
    if op.position is not None:
        out["position"] = op.position
    return out


_FIELDS: Final = {"op", "id", "section", "text", "citations", "reason", "position"}


def operation_from_json(data: Mapping[str, Any], index: int = 0) -> Operation:
    """Read one operation (as :func:`operation_to_json` writes it); errors name the index."""
    where = f"operation {index + 1}"
    if not isinstance(data, Mapping):
        raise InvalidInputError(f"{where}: expected an object")
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise InvalidInputError(f"{where}: unknown field(s) {', '.join(unknown)}")
    try:
        kind = OpKind(str(data.get("op")))
    except ValueError:
        raise InvalidInputError(
            f"{where}: 'op' must be one of {', '.join(k.value for k in OpKind)}"
        ) from None
    citations = None
    if "citations" in data:
        raw = data["citations"]
        if not isinstance(raw, list) or not all(isinstance(c, str) and ":" in c for c in raw):
            raise InvalidInputError(f"{where}: citations are 'surface:episode_id' strings")
        citations = tuple(Citation(*c.split(":", 1)) for c in raw)
    reason = None
    if "reason" in data:
        try:
            reason = DeleteReason(data["reason"])
        except ValueError:
            raise InvalidInputError(f"{where}: unknown reason {data['reason']!r}") from None
    position = data.get("position")
    if position is not None and (isinstance(position, bool) or not isinstance(position, int)):
        raise InvalidInputError(f"{where}: position must be an integer")
    for name in ("id", "section", "text"):
        if name in data and not isinstance(data[name], str):
            raise InvalidInputError(f"{where}: {name} must be a string")
    return Operation(
        kind, data.get("id", ""), data.get("section"), data.get("text"), citations, reason, position
    )
