r"""The markdown form of curated documents (DESIGN.md 4): :func:`serialize` and :func:`parse`.

Pure functions, no I/O. :func:`serialize` writes exactly this layout (``\n`` line ends, one
``\n`` at the end, no trailing spaces on any line)::

    # Title
                                        (one blank line before every section heading)
    ## Section
    - memory text [^1][^2] <!--m_01J...-->
    - other text [^2] <!--m_01J...-->
                                        (one blank line before the footnote block)
    ---
    [^1]: chat:ep_01J...
    [^2]: notebook:ep_01J...

A section without bullets is its heading alone. Footnote numbers are given by first appearance
(sections, bullets and citations in order) and shared by every bullet citing the same
:class:`Citation`; the footnote block is left out when nothing is cited. An empty title or heading
is written ``#`` / ``##``, an empty bullet text ``- [^1] <!--m_...-->``. Bullets must have ids:
serializing a bullet with ``id=""`` raises :class:`DocumentFormatError`.

Escaping, so that any ``str`` survives a round trip in one line. Written: ``\\`` for a
backslash; ``\n``, ``\r``, ``\t``; ``\uXXXX`` (4 hex digits) for other control characters,
surrogates, U+2028/U+2029 and whitespace at the start or end of a text; ``\[`` for a ``[``
followed by ``^``; ``<\!--`` for ``<!--``; ``\#``, ``\-``, ``\+``, ``\*``, ``\>`` for those
characters at the start of a text, and ``\#`` for a ``#`` at its end (so headings and list items
render as written). Read: the above, and as in CommonMark a backslash before any ASCII punctuation
yields that character; any other backslash is kept as it is.

Reading (:func:`parse`) is lenient where nothing can be lost and strict everywhere else:

- blank lines are ignored anywhere, a trailing ``\r`` and trailing spaces are dropped, a leading
  BOM is skipped, ``*`` and ``+`` are read as bullet markers too;
- footnote labels may be any labels in any order (``[^7]`` then ``[^3]``); each mark is mapped
  through its definition; unused definitions are ignored, as is a repeated identical definition;
- legacy bullets ``- text [^m_01J...]`` (the item id as the closing footnote label, defined as
  ``[^m_01J...]: chat:ep_A; notebook:ep_B`` with ``;`` or ``,`` between sources, possibly none)
  read as a bullet with that id; serializing writes the current form (the migration);
- a bullet without an id reads with ``id=""``; a later step assigns one;
- the footnote block starts at ``---`` or at the first definition line.

Everything else raises :class:`DocumentFormatError` naming the 1-based line: no ``# title``
first; a bullet before any ``## section``; a line that is none of heading, bullet, ``---`` or
definition (free prose, ``### sub``); anything but definitions after the footnote block; text
after a bullet's footnote marks or id comment; an id comment that is not an item id; a footnote
used but never defined, defined twice with different targets, or not ``surface:episode_id``;
an item id used by two bullets.
"""

from __future__ import annotations

import re
import string
import unicodedata
from dataclasses import dataclass
from typing import Final, NamedTuple

from memstrata.errors import InvalidInputError

_ITEM_ID_RE: Final = re.compile(r"m_[0-9A-Za-z_]+")
_SURFACE_RE: Final = re.compile(r"[^\s:;,]+")
_EPISODE_RE: Final = re.compile(r"[^\s;,]+")
_CITATION_RE: Final = re.compile(r"([^\s:;,]+):([^\s;,]+)")

_TITLE_RE: Final = re.compile(r"#(?:[ \t]+(.*))?")
_HEADING_RE: Final = re.compile(r"##(?:[ \t]+(.*))?")
_BULLET_RE: Final = re.compile(r"[-*+](?:[ \t]+(.*))?")
_RULE_RE: Final = re.compile(r"-{3,}")
_DEFINITION_RE: Final = re.compile(r"\[\^([^\]\s]+)\]:(.*)")
_MARK_RE: Final = re.compile(r"\[\^([^\]\s]+)\]")
_TAIL_RE: Final = re.compile(r"((?:\[\^[^\]\s]+\][ \t]*)*)(?:<!--[ \t]*(.*?)[ \t]*-->)?[ \t]*")
_HEX4_RE: Final = re.compile(r"[0-9a-fA-F]{4}")

_NAMED: Final = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNNAMED: Final = {"n": "\n", "r": "\r", "t": "\t"}
_CODED: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})
_LEADING: Final = "#-+*>"
_PUNCTUATION: Final = frozenset(string.punctuation)


class DocumentFormatError(InvalidInputError):
    """A document's markdown cannot be read, or a document cannot be written.

    ``line`` is the 1-based line of the markdown, when the error has one.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line


@dataclass(frozen=True, slots=True)
class Citation:
    """One source of a bullet: the episode ``episode_id`` recorded on ``surface``.

    Written ``surface:episode_id``; the surface has no whitespace, ``:``, ``;`` or ``,``, the
    episode id no whitespace, ``;`` or ``,``.
    """

    surface: str
    episode_id: str

    def __post_init__(self) -> None:
        if not isinstance(self.surface, str) or not _SURFACE_RE.fullmatch(self.surface):
            raise InvalidInputError(
                f"citation surface {self.surface!r} must be non-empty, without spaces, ':', ';' "
                "or ','"
            )
        if not isinstance(self.episode_id, str) or not _EPISODE_RE.fullmatch(self.episode_id):
            raise InvalidInputError(
                f"citation episode id {self.episode_id!r} must be non-empty, without spaces, "
                "';' or ','"
            )

    def __str__(self) -> str:
        return f"{self.surface}:{self.episode_id}"


@dataclass(frozen=True, slots=True)
class Bullet:
    """One memory of a document: its item id (``m_...``, or ``""`` if not yet assigned), its
    text (any string) and the citations it rests on, in order."""

    id: str
    text: str
    citations: tuple[Citation, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or (self.id and not _ITEM_ID_RE.fullmatch(self.id)):
            raise InvalidInputError(f"bullet id {self.id!r} is not an item id (m_...) or ''")
        if not isinstance(self.text, str):
            raise InvalidInputError(f"bullet text must be a string, not {type(self.text).__name__}")
        object.__setattr__(self, "citations", tuple(self.citations))
        if not all(isinstance(c, Citation) for c in self.citations):
            raise InvalidInputError("bullet citations must be Citation objects")


@dataclass(frozen=True, slots=True)
class Section:
    """A ``## heading`` (any string) and its bullets, in order."""

    heading: str
    bullets: tuple[Bullet, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.heading, str):
            raise InvalidInputError("section heading must be a string")
        object.__setattr__(self, "bullets", tuple(self.bullets))


@dataclass(frozen=True, slots=True)
class Document:
    """A titled document of sections. Non-empty bullet ids are unique in the document."""

    title: str
    sections: tuple[Section, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.title, str):
            raise InvalidInputError("document title must be a string")
        object.__setattr__(self, "sections", tuple(self.sections))
        seen: set[str] = set()
        for section in self.sections:
            for bullet in section.bullets:
                if bullet.id and bullet.id in seen:
                    raise InvalidInputError(f"bullet id {bullet.id} appears twice in the document")
                seen.add(bullet.id)


# -- escaping ------------------------------------------------------------------------------


def _needs_backslash(text: str, i: int) -> bool:
    c = text[i]
    if (i == 0 and c in _LEADING) or (i == len(text) - 1 and c == "#"):
        return True
    if c == "[":
        return text.startswith("^", i + 1)
    return c == "!" and i > 0 and text.startswith("<!--", i - 1)


def _escape(text: str) -> str:
    out: list[str] = []
    for i, c in enumerate(text):
        if c in _NAMED:
            out.append(_NAMED[c])
        elif unicodedata.category(c) in _CODED or (c.isspace() and i in (0, len(text) - 1)):
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append("\\" + c if _needs_backslash(text, i) else c)
    return "".join(out)


def _unescape(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if c == "\\" and nxt in _UNNAMED:
            out.append(_UNNAMED[nxt])
            i += 2
        elif c == "\\" and nxt == "u" and _HEX4_RE.fullmatch(text, i + 2, i + 6):
            out.append(chr(int(text[i + 2 : i + 6], 16)))
            i += 6
        elif c == "\\" and nxt in _PUNCTUATION:
            out.append(nxt)
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _mark_start(body: str) -> int:
    """Index of the first unescaped ``[^`` or ``<!--`` in a bullet line (or its length)."""
    i = 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        if body.startswith("[^", i) or body.startswith("<!--", i):
            return i
        i += 1
    return len(body)


# -- writing -------------------------------------------------------------------------------


def _heading_line(prefix: str, text: str) -> str:
    return f"{prefix} {_escape(text)}" if text else prefix


def serialize(doc: Document) -> str:
    """Write ``doc`` in the markdown form above. Raises :class:`DocumentFormatError` for a
    bullet without an id."""
    numbers: dict[Citation, int] = {}
    lines = [_heading_line("#", doc.title)]
    for section in doc.sections:
        lines += ["", _heading_line("##", section.heading)]
        for bullet in section.bullets:
            if not bullet.id:
                raise DocumentFormatError(
                    f"bullet {bullet.text[:40]!r} in section {section.heading!r} has no id; "
                    "assign one (memstrata.ids.new_id('m')) before writing the document"
                )
            marks = "".join(
                f"[^{numbers.setdefault(c, len(numbers) + 1)}]" for c in bullet.citations
            )
            parts = ("-", _escape(bullet.text), marks, f"<!--{bullet.id}-->")
            lines.append(" ".join(p for p in parts if p))
    if numbers:
        lines += ["", "---", *(f"[^{n}]: {c}" for c, n in numbers.items())]
    return "\n".join(lines) + "\n"


# -- reading -------------------------------------------------------------------------------


class _RawBullet(NamedTuple):
    id: str
    text: str
    labels: list[str]
    line: int


def _read_definition(
    label: str, value: str, line: int, definitions: dict[str, tuple[tuple[Citation, ...], int]]
) -> None:
    legacy = _ITEM_ID_RE.fullmatch(label) is not None
    pieces = [p.strip() for p in re.split(r"[;,]", value)] if legacy else [value.strip()]
    citations: list[Citation] = []
    for piece in pieces:
        match = _CITATION_RE.fullmatch(piece)
        if match is None:
            if legacy and not piece:
                continue
            raise DocumentFormatError(
                f"footnote [^{label}] must point to 'surface:episode_id', not {piece!r}", line
            )
        citations.append(Citation(match.group(1), match.group(2)))
    target = tuple(citations)
    before = definitions.setdefault(label, (target, line))
    if before[0] != target:
        raise DocumentFormatError(
            f"footnote [^{label}] is defined twice with different targets "
            f"(first on line {before[1]})",
            line,
        )


def _read_bullet(body: str, line: int, seen_ids: dict[str, int]) -> _RawBullet:
    cut = _mark_start(body)
    tail = _TAIL_RE.fullmatch(body, cut)
    if tail is None:
        raise DocumentFormatError(
            f"cannot read {body[cut:]!r} at the end of the bullet: only footnote marks and an "
            "<!--m_...--> id may close it (write a literal '[^' as '\\[^', '<!--' as '<\\!--')",
            line,
        )
    labels = _MARK_RE.findall(tail.group(1))
    item_id: str | None = tail.group(2)
    if item_id is not None and not _ITEM_ID_RE.fullmatch(item_id):
        raise DocumentFormatError(f"<!--{item_id}--> is not an item id (m_...)", line)
    legacy = [i for i, label in enumerate(labels) if _ITEM_ID_RE.fullmatch(label)]
    if legacy:
        if legacy != [len(labels) - 1]:
            raise DocumentFormatError(
                f"the item id [^{labels[legacy[0]]}] must be the last footnote mark", line
            )
        if item_id is not None and item_id != labels[-1]:
            raise DocumentFormatError(f"the bullet has two ids, {labels[-1]} and {item_id}", line)
        item_id = labels[-1]
    if item_id:
        if item_id in seen_ids:
            raise DocumentFormatError(
                f"bullet id {item_id} appears twice (first on line {seen_ids[item_id]})", line
            )
        seen_ids[item_id] = line
    return _RawBullet(item_id or "", _unescape(body[:cut].rstrip()), labels, line)


def parse(markdown: str) -> Document:
    """Read a document from its markdown form (see the module docstring for what is accepted).

    Raises :class:`DocumentFormatError` naming the line for anything it cannot read.
    """
    title: str | None = None
    sections: list[tuple[str, list[_RawBullet]]] = []
    definitions: dict[str, tuple[tuple[Citation, ...], int]] = {}
    seen_ids: dict[str, int] = {}
    in_footnotes = False
    for number, raw in enumerate(markdown.removeprefix("\ufeff").split("\n"), start=1):
        line = raw.rstrip()
        if not line:
            continue
        if title is None:
            match = _TITLE_RE.fullmatch(line)
            if match is None:
                raise DocumentFormatError(f"expected a '# <title>' line, not {line!r}", number)
            title = _unescape(match.group(1) or "")
        elif definition := _DEFINITION_RE.fullmatch(line):
            in_footnotes = True
            _read_definition(definition.group(1), definition.group(2), number, definitions)
        elif in_footnotes:
            raise DocumentFormatError(
                f"only footnote definitions may follow the footnote block, not {line!r}", number
            )
        elif _RULE_RE.fullmatch(line):
            in_footnotes = True
        elif heading := _HEADING_RE.fullmatch(line):
            sections.append((_unescape(heading.group(1) or ""), []))
        elif bullet := _BULLET_RE.fullmatch(line):
            if not sections:
                raise DocumentFormatError(
                    "a bullet must come after a '## <section>' heading", number
                )
            sections[-1][1].append(_read_bullet(bullet.group(1) or "", number, seen_ids))
        else:
            raise DocumentFormatError(
                f"cannot read {line!r}: expected a '## <section>' heading, a '- ' bullet, "
                "'---' or a footnote definition",
                number,
            )
    if title is None:
        raise DocumentFormatError("the document is empty; expected a '# <title>' line", 1)
    return Document(
        title, tuple(Section(h, tuple(_resolve(b, definitions) for b in bs)) for h, bs in sections)
    )


def _resolve(raw: _RawBullet, definitions: dict[str, tuple[tuple[Citation, ...], int]]) -> Bullet:
    citations: list[Citation] = []
    for label in raw.labels:
        if label not in definitions:
            raise DocumentFormatError(f"footnote [^{label}] is used but never defined", raw.line)
        citations.extend(definitions[label][0])
    return Bullet(raw.id, raw.text, tuple(citations))
