"""Fuzzing the curated-document parser and the operation applier.

The markdown parser meets hand-edited files, so on any text it either returns a document or
raises an :class:`InvalidInputError` naming the problem, and what it returns serializes to a
fixed point. The applier meets batches from people, agents and HTTP clients, so any batch of
add / edit / delete / move on any document applies whole or is rejected with an
:class:`InvalidInputError`; bullet ids stay unique and citations are kept unless an edit sets
them. (tests/unit/test_document_format.py covers round trips of generated documents and exact
errors; these properties cover arbitrary input.)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata.document import Bullet, Citation, Document, Section, parse, serialize
from memstrata.document.format import DocumentFormatError
from memstrata.document.ops import (
    Operation,
    OpKind,
    apply_operations,
    operation_from_json,
    operation_to_json,
)
from memstrata.errors import InvalidInputError
from memstrata.ids import new_id
from memstrata.model import DeleteReason
from tests.reliability.sizes import size

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def fuzz(default: int, full: int) -> Any:
    """Hypothesis settings: ``default`` examples, ``full`` in CI."""
    return settings(
        max_examples=size(default, full),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


# -- arbitrary markdown, built from the pieces the format is made of ----------------------
any_char = st.characters(exclude_categories=())
words = st.one_of(
    st.text(any_char, max_size=8),
    st.sampled_from(["中文记忆", "😀", "\\", "\\[^1]", "<\\!--", "\u2028", "\x00", "\ufeff"]),
)
ulid = st.integers(0, 32**26 - 1).map(
    lambda n: "".join(CROCKFORD[(n >> (5 * i)) & 31] for i in range(26))
)
item_ids = st.one_of(ulid.map(lambda s: f"m_{s}"), st.sampled_from(["m_1", "m_", "m_ X", "x_1"]))
episode_refs = st.one_of(
    st.builds(lambda s, e: f"{s}:ep_{e}", st.sampled_from(["chat", "manual", "a b", ""]), ulid),
    st.sampled_from(["chat:", ":ep_1", "chat:ep 1", "chat:ep_1;chat:ep_2", "chat:ep_1, x:y"]),
)
marks = st.lists(st.integers(0, 12).map(lambda n: f"[^{n}]"), max_size=3).map("".join)
lines = st.one_of(
    st.builds(lambda t: f"# {t}", words),
    st.builds(lambda t: f"## {t}", words),
    st.builds(lambda t, m, i: f"- {t} {m} <!--{i}-->", words, marks, item_ids),
    st.builds(lambda t, m: f"- {t} {m}", words, marks),
    st.builds(lambda t, i: f"- {t} [^{i}]", words, item_ids),
    st.builds(lambda n, r: f"[^{n}]: {r}", st.integers(0, 12), episode_refs),
    st.builds(lambda i, r: f"[^{i}]: {r}", item_ids, episode_refs),
    st.sampled_from(["---", "", " ", "-", "- ", "#", "##", "###", "<!--", "-->", "[^1]:"]),
    words,
)
markdown = st.builds(
    lambda ls, sep, end: sep.join(ls) + end,
    st.lists(lines, max_size=14),
    st.sampled_from(["\n", "\r\n", "\n\n"]),
    st.sampled_from(["", "\n", "\r\n"]),
)


@fuzz(150, 800)
@given(st.one_of(markdown, st.text(any_char, max_size=200)))
def test_parse_raises_only_invalid_input_and_serializes_to_a_fixed_point(text: str) -> None:
    try:
        doc = parse(text)
    except InvalidInputError:
        return
    if any(not b.id for section in doc.sections for b in section.bullets):
        # a bullet written by hand has no id yet: it is refused until one is given (applying
        # an edited document gives each new bullet one)
        with pytest.raises(DocumentFormatError, match="has no id"):
            serialize(doc)
        doc = _with_ids(doc)
    once = serialize(doc)
    again = parse(once)
    assert serialize(again) == once
    assert again == parse(serialize(again))


def _with_ids(doc: Document) -> Document:
    """``doc`` with a new id for each bullet that has none."""
    return replace(
        doc,
        sections=tuple(
            replace(
                section,
                bullets=tuple(b if b.id else replace(b, id=new_id("m")) for b in section.bullets),
            )
            for section in doc.sections
        ),
    )


# -- random batches of operations on random documents -------------------------------------
citations = st.builds(
    Citation,
    st.sampled_from(["chat", "manual", "notebook"]),
    st.sampled_from(["ep_A", "ep_B", "ep_C", "ep_D"]),
)
texts = st.one_of(st.text(any_char, max_size=12), st.sampled_from(["", " ", "\n", "中文"]))
headings = st.sampled_from(["Notes", "Plans", "", "中文", "Notes "])


@st.composite
def documents(draw: st.DrawFn) -> Document:
    sizes = draw(st.lists(st.integers(0, 3), max_size=3))
    numbers = draw(st.sets(st.integers(0, 99), min_size=sum(sizes), max_size=sum(sizes)))
    ids = iter(f"m_{n:026d}" for n in numbers)
    sections, used = [], set()
    for n in sizes:
        heading = draw(headings.filter(lambda h: h not in used))
        used.add(heading)
        bullets = tuple(
            Bullet(next(ids), draw(texts), tuple(draw(st.lists(citations, max_size=3))))
            for _ in range(n)
        )
        sections.append(Section(heading, bullets))
    return Document(draw(texts), tuple(sections))


#: an operation, its id given as an index into the document's bullets or as a literal
op_specs = st.builds(
    lambda kind, target, section, text, cited, reason, position: (
        kind,
        target,
        section,
        text,
        cited,
        reason,
        position,
    ),
    st.sampled_from(list(OpKind)),
    st.one_of(st.integers(0, 9), st.sampled_from(["", "m_bad id", "ep_01", "x", "m_new"])),
    st.one_of(st.none(), headings),
    st.one_of(st.none(), texts),
    st.one_of(st.none(), st.lists(citations, max_size=3).map(tuple)),
    st.one_of(st.none(), st.sampled_from(list(DeleteReason))),
    st.one_of(st.none(), st.integers(-3, 6)),
)


@st.composite
def batches(draw: st.DrawFn) -> tuple[Document, list[Operation]]:
    doc = draw(documents())
    present = [b.id for s in doc.sections for b in s.bullets]
    ops = []
    for kind, target, section, text, cited, reason, position in draw(
        st.lists(op_specs, max_size=6)
    ):
        if isinstance(target, int):
            target = present[target % len(present)] if present else ""
        elif target == "m_new":
            target = new_id("m")
        ops.append(Operation(kind, target, section, text, cited, reason, position))
    return doc, ops


def _bullets(doc: Document) -> dict[str, Bullet]:
    found: dict[str, Bullet] = {}
    for section in doc.sections:
        for bullet in section.bullets:
            assert bullet.id not in found, f"bullet id {bullet.id} twice"
            found[bullet.id] = bullet
    return found


@fuzz(80, 300)
@given(batches())
def test_a_batch_applies_whole_or_is_rejected(batch: tuple[Document, list[Operation]]) -> None:
    doc, ops = batch
    before = _bullets(doc)
    try:
        after, touched = apply_operations(doc, ops)
    except InvalidInputError:
        assert _bullets(doc) == before  # the caller's document is untouched
        return
    result = _bullets(after)
    assert len(touched) == len(ops)
    recited = {i for op, i in zip(ops, touched, strict=True) if op.citations is not None}
    for bullet_id, bullet in result.items():
        if bullet_id in before and bullet_id not in recited:  # citations kept
            assert bullet.citations == before[bullet_id].citations
    deleted = {i for op, i in zip(ops, touched, strict=True) if op.kind == OpKind.DELETE}
    added = [i for op, i in zip(ops, touched, strict=True) if op.kind == OpKind.ADD]
    assert set(result) == (set(before) | set(added)) - deleted
    assert all(s.bullets for s in after.sections)  # no empty section left behind
    assert apply_operations(after, [])[0] == after


json_values: st.SearchStrategy[Any] = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(any_char, max_size=8)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
op_fields = st.sampled_from(["op", "id", "section", "text", "citations", "reason", "position"])


@fuzz(80, 200)
@given(
    st.one_of(
        st.dictionaries(op_fields, json_values, max_size=7),
        st.dictionaries(
            op_fields,
            st.one_of(
                st.sampled_from([k.value for k in OpKind] + [r.value for r in DeleteReason]),
                st.lists(st.sampled_from(["chat:ep_A", "a:b:c", ":", "chat:", " : "]), max_size=3),
                json_values,
            ),
            max_size=7,
        ),
        json_values,
    )
)
def test_operations_from_json_read_or_raise_invalid_input(data: Any) -> None:
    try:
        op = operation_from_json(data)
    except InvalidInputError:
        return
    assert operation_from_json(operation_to_json(op)) == op
