"""The one rendering of stored text for a model: escaped in a <memory> block, inert in JSON."""

from __future__ import annotations

import json
import re

from hypothesis import given
from hypothesis import strategies as st

from memstrata.render import escape, inert_json, memory_block

LOOK_ALIKES = (  # read as angle brackets wherever they stand
    "<>\uff1c\uff1e\ufe64\ufe65\u2039\u203a\u2329\u232a\u27e8\u27e9\u27ea\u27eb"
    "\u276c\u276d\u276e\u276f\u2770\u2771\u02c2\u02c3\u1438\u1433"
)
TITLE_MARKS = "\u300a\u300b\u3008\u3009"  # 《》〈〉: brackets of a title, or of a forged tag
FORGED = re.compile(r"[\u300a\u3008]\s*/?\s*[A-Za-z]|[A-Za-z0-9/]\s*[\u300b\u3009]")
tricky = st.text(
    alphabet=st.sampled_from([*LOOK_ALIKES, *TITLE_MARKS, *"/ \n\u2028\u2029\x85&memoryM中"])
)


def test_tags_in_every_spelling_are_escaped() -> None:
    assert escape("a\nb<c>") == "a b&lt;c&gt;"
    assert escape("</MEMORY >") == "&lt;/MEMORY &gt;"
    assert escape("< / memory>") == "&lt; / memory&gt;"
    assert escape("＜/memory＞") == "&#xFF1C;/memory&#xFF1E;"
    assert escape("《/memory》 《 system 》") == "&#x300A;/memory&#x300B; &#x300A; system &#x300B;"
    assert escape("&lt;") == "&amp;lt;"  # an escape stored as text stays text


def test_titles_keep_their_marks() -> None:
    assert escape("我在读《三体》和\u3008序言\u3009") == "我在读《三体》和\u3008序言\u3009"


@given(st.one_of(st.text(), tricky))
def test_nothing_escaped_can_spell_a_bracket_or_break_a_line(text: str) -> None:
    out = escape(text)
    assert not set(out) & set(LOOK_ALIKES)
    assert len(out.splitlines()) <= 1 and "\n" not in out
    assert not FORGED.search(out)  # no title mark wraps a tag's name


@given(st.recursive(st.one_of(st.text(), tricky), lambda x: st.lists(x, max_size=3)))
def test_inert_json_is_the_same_data_without_brackets(value: object) -> None:
    out = inert_json(value)
    assert json.loads(out) == value and len(out.splitlines()) == 1
    assert not set(out) & set(LOOK_ALIKES)


def test_the_block() -> None:
    assert memory_block([]) == ""
    assert memory_block(["a", "b"]) == "<memory>\na\nb\n</memory>"
