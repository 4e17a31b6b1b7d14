"""Stored text rendered for a model: inert data, whatever it says.

Everything memstrata shows a model that came from a store (turns, facts, bullets, profile and
identity text, topic names, sources) goes through this module, in one of two forms:

* :func:`escape` for text inside a ``<memory>`` block (:func:`memory_block`, used by
  ``wake_up``, ``recall`` and ``context``): ``&``, ``<`` and ``>`` become ``&amp;``, ``&lt;``
  and ``&gt;``; characters a reader takes for angle brackets (full-width ``＜＞``, small
  ``﹤﹥``, ``‹›``, ``⟨⟩``, ``〈〉`` and their kin) become numeric references; the CJK title
  marks ``《》〈〉`` do too where they would wrap a tag (``《/memory》``, typed with a Chinese
  input method) and stay as they are around a title (``《三体》``); every line break becomes a
  space. So no stored text can close the block, open another, or start a line of its own, in
  whatever case or spacing it spells the tag.
* :func:`inert_json` for data shown to a model as JSON (extraction, reranking, routing
  prompts): the same characters, by the same rule, and the line breaks JSON keeps
  (``U+2028``, ``U+2029``, ``U+0085``) become JSON ``\\uXXXX`` escapes, which decode to the
  very same text, on one line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Final

MEMORY_OPEN: Final = "<memory>"
MEMORY_CLOSE: Final = "</memory>"

_NAMED: Final = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
#: read as angle brackets wherever they stand
_ANGLE_LOOKALIKES: Final = frozenset(
    "\uff1c\uff1e"  # ＜ ＞ full-width
    "\ufe64\ufe65"  # ﹤ ﹥ small
    "\u2039\u203a"  # ‹ › single guillemets
    "\u2329\u232a"  # 〈 〉 angle brackets (technical)
    "\u27e8\u27e9"  # ⟨ ⟩ mathematical
    "\u27ea\u27eb"  # ⟪ ⟫
    "\u276c\u276d\u276e\u276f\u2770\u2771"  # ❬ ❭ ❮ ❯ ❰ ❱ ornaments
    "\u02c2\u02c3"  # ˂ ˃ modifier letters
    "\u1438\u1433"  # ᐸ ᐳ syllabics
)
#: CJK title marks: brackets around a title, but a tag where they wrap one
_CJK_OPEN: Final = "\u300a\u3008"  # 《 〈
_CJK_CLOSE: Final = "\u300b\u3009"  # 》 〉
_TAG_LIKE: Final = re.compile(
    rf"[{_CJK_OPEN}](?=\s*[/!?]?\s*[A-Za-z])|(?<=[A-Za-z0-9\"'/-])\s*[{_CJK_CLOSE}]"
)
_HAS_CJK_MARK: Final = re.compile(f"[{_CJK_OPEN}{_CJK_CLOSE}]")
_LINE_BREAKS: Final = re.compile(r"[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")


def _code_tags(text: str, code: Callable[[str], str]) -> str:
    """``text`` with every CJK title mark that wraps a tag replaced by ``code(mark)``."""
    if not _HAS_CJK_MARK.search(text):
        return text
    return _TAG_LIKE.sub(
        lambda m: (
            m.group(0)[:-1] + code(m.group(0)[-1])
            if m.group(0)[-1] in _CJK_CLOSE
            else code(m.group(0))
        ),
        text,
    )


def _entity(char: str) -> str:
    return f"&#x{ord(char):X};"


def _json_escape(char: str) -> str:
    return f"\\u{ord(char):04x}"


_TEXT_TABLE: Final = str.maketrans({**_NAMED, **{c: _entity(c) for c in _ANGLE_LOOKALIKES}})
_JSON_TABLE: Final = str.maketrans(
    {c: _json_escape(c) for c in ("<", ">", "\x85", "\u2028", "\u2029", *_ANGLE_LOOKALIKES)}
)


def escape(text: str) -> str:
    """Stored text as inert data on one line inside a ``<memory>`` block."""
    return _LINE_BREAKS.sub(" ", _code_tags(text.translate(_TEXT_TABLE), _entity))


def inert_json(value: object) -> str:
    """``value`` as JSON in which no string can spell a delimiter or break a line: ``<``,
    ``>``, their look-alikes, tag-wrapping title marks and the line breaks JSON keeps are
    ``\\uXXXX`` escapes (the same text once decoded)."""
    text = json.dumps(value, ensure_ascii=False)  # escapes control characters, "\\n" too
    return _code_tags(text.translate(_JSON_TABLE), _json_escape)


def memory_block(lines: Sequence[str]) -> str:
    """``lines`` (already escaped where they hold stored text) as a ``<memory>`` block, or
    "" for none."""
    if not lines:
        return ""
    return f"{MEMORY_OPEN}\n" + "\n".join(lines) + f"\n{MEMORY_CLOSE}"


#: what the block's own lines cost beyond its content, for budgets
BLOCK_FRAME: Final = f"{MEMORY_OPEN}\n{MEMORY_CLOSE}"
