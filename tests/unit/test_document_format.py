"""The markdown form of curated documents: exact output, round trips, legacy migration, errors."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memstrata.document import (
    Bullet,
    Citation,
    Document,
    DocumentFormatError,
    Section,
    parse,
    serialize,
)
from memstrata.errors import InvalidInputError
from memstrata.ids import new_id

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
TRICKY = [
    "[^1]", "[^", "<!--", "-->", "<!--m_01-->", "\\", "\\n", "\\u0041", "\n", "\r\n", "\t",
    " ", "  ", "#", "##", "-", "- ", "*", "+", ">", "---", "[^m_01]", "]:", "中文记忆", "😀",
    "\u2028", "\x85", "\u3000", "\ufeff", "\x00", ":", ";", ",", "\\[^", "<\\!--",
]  # fmt: skip

# any text (lone surrogates included) mixed with pieces that stress the escaping
any_char = st.characters(exclude_categories=())
texts = st.lists(st.one_of(st.text(any_char, max_size=6), st.sampled_from(TRICKY)), max_size=5).map(
    "".join
)
ulids = st.text(alphabet=CROCKFORD, min_size=26, max_size=26).map(lambda s: f"m_{s}")
item_ids = st.one_of(ulids, st.builds(lambda: new_id("m")))
citations = st.builds(
    Citation,
    st.sampled_from(["chat", "notebook", "import", "manual"]),
    st.one_of(
        st.text(alphabet=CROCKFORD, min_size=26, max_size=26).map(lambda s: f"ep_{s}"),
        st.sampled_from(["ep_A", "ep_B", "ep:1", "x.y-z"]),
    ),
)


@st.composite
def documents(draw: st.DrawFn) -> Document:
    shapes = draw(st.lists(st.integers(0, 4), max_size=4))
    ids = iter(draw(st.lists(item_ids, min_size=sum(shapes), max_size=sum(shapes), unique=True)))
    pool = draw(st.lists(citations, min_size=1, max_size=5))
    sections = []
    for size in shapes:
        bullets = tuple(
            Bullet(next(ids), draw(texts), tuple(draw(st.lists(st.sampled_from(pool), max_size=4))))
            for _ in range(size)
        )
        sections.append(Section(draw(texts), bullets))
    return Document(draw(texts), tuple(sections))


CURRENT_BULLET = re.compile(
    r"- (?:(?P<text>.*?) )?(?:(?P<marks>(?:\[\^\d+\])+) )?<!--(?P<id>m_\w+)-->", re.ASCII
)
DEFINITION = re.compile(r"\[\^(\d+)\]: (.*)")


def to_legacy(markdown: str, legacy: list[bool], separators: list[str], rule: bool) -> str:
    """Rewrite serialized markdown into the legacy form: the chosen bullets end in ``[^m_...]``
    and get a definition listing their sources; numeric definitions stay (unused ones too)."""
    lines = markdown.rstrip("\n").split("\n")
    targets = dict(m.groups() for m in map(DEFINITION.fullmatch, lines) if m)
    out, extra, count = [], [], 0
    for line in lines:
        bullet = CURRENT_BULLET.fullmatch(line)
        if bullet is None or not legacy[count % len(legacy)]:
            count += bullet is not None
            out.append(line)
            continue
        count += 1
        text, item_id = bullet["text"], bullet["id"]
        sources = [targets[n] for n in re.findall(r"\d+", bullet["marks"] or "")]
        out.append(f"- {text} [^{item_id}]" if text else f"- [^{item_id}]")
        sep = separators[count % len(separators)]
        extra.append(f"[^{item_id}]: {sep.join(sources)}".rstrip())
    if not rule:
        out = [line for line in out if line != "---"]
    return "\n".join(out + extra) + "\n"


FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(documents())
def test_round_trip(doc: Document) -> None:
    text = serialize(doc)
    assert parse(text) == doc
    assert serialize(parse(text)) == text
    assert all(line == line.rstrip() for line in text.split("\n"))
    assert text.endswith("\n") and not text.endswith("\n\n")
    text.encode("utf-8")  # lone surrogates are escaped, so the file can always be written


@FAST
@given(texts)
def test_any_text_survives_in_every_position(value: str) -> None:
    doc = Document(value, (Section(value, (Bullet(new_id("m"), value),)),))
    text = serialize(doc)
    assert text.count("\n") == 4  # title, blank, heading, bullet: each one line
    assert parse(text) == doc


@FAST
@given(
    documents(),
    st.lists(st.booleans(), min_size=1, max_size=4),
    st.lists(st.sampled_from(["; ", ";", ", ", ","]), min_size=1, max_size=3),
    st.booleans(),
)
def test_legacy_form_migrates(
    doc: Document, legacy: list[bool], seps: list[str], rule: bool
) -> None:
    old = to_legacy(serialize(doc), legacy, seps, rule)
    assert parse(old) == doc
    migrated = serialize(parse(old))
    assert not re.search(r"(?<!\\)\[\^m_", migrated)  # every literal "[^" in text is escaped
    assert migrated == serialize(doc)


def test_to_legacy_helper_writes_legacy_bullets() -> None:
    ident = "m_01JD0000000000000000000000"
    doc = Document("T", (Section("S", (Bullet(ident, "a", (Citation("chat", "ep_A"),)),)),))
    old = to_legacy(serialize(doc), [True], [";"], True)
    assert old == f"# T\n\n## S\n- a [^{ident}]\n\n---\n[^1]: chat:ep_A\n[^{ident}]: chat:ep_A\n"


M1, M2, M3 = (f"m_01JD{str(i) * 22}" for i in (1, 2, 3))
CHAT, NOTE, IMPORT = (
    Citation("chat", "ep_A"),
    Citation("notebook", "ep_B"),
    Citation("import", "ep_C"),
)

BILINGUAL = Document(
    "Alice 的档案",
    (
        Section("Work 工作", (Bullet(M1, "Works on 语音识别", (CHAT, NOTE)),)),
        Section("Empty", ()),
        Section(
            "偏好",
            (Bullet(M2, "喜欢简洁的回答 [^1]\nsecond line", (NOTE,)), Bullet(M3, "#1 rule", ())),
        ),
    ),
)
BILINGUAL_MD = f"""# Alice 的档案

## Work 工作
- Works on 语音识别 [^1][^2] <!--{M1}-->

## Empty

## 偏好
- 喜欢简洁的回答 \\[^1]\\nsecond line [^2] <!--{M2}-->
- \\#1 rule <!--{M3}-->

---
[^1]: chat:ep_A
[^2]: notebook:ep_B
"""


def test_exact_bilingual_document() -> None:
    assert serialize(BILINGUAL) == BILINGUAL_MD
    assert parse(BILINGUAL_MD) == BILINGUAL


def test_exact_escapes() -> None:
    doc = Document(" # t#", (Section("", (Bullet(M1, "a\\b <!-- c --> \t", (IMPORT,)),)),))
    expected = f"# \\u0020# t\\#\n\n##\n- a\\\\b <\\!-- c --> \\t [^1] <!--{M1}-->\n\n---\n"
    assert serialize(doc) == expected + "[^1]: import:ep_C\n"
    assert parse(serialize(doc)) == doc


def test_control_characters_and_surrogates_are_coded() -> None:
    doc = Document("\ud800\x00\u2028", (Section("x\u3000y\u3000"),))
    assert serialize(doc) == "# \\ud800\\u0000\\u2028\n\n## x\u3000y\\u3000\n"
    assert parse(serialize(doc)) == doc


def test_empty_document_and_empty_text() -> None:
    assert serialize(Document("T")) == "# T\n"
    assert parse("# T\n") == Document("T")
    doc = Document("", (Section("S", (Bullet(M1, "", (CHAT,)),)),))
    assert serialize(doc) == f"#\n\n## S\n- [^1] <!--{M1}-->\n\n---\n[^1]: chat:ep_A\n"
    assert parse(serialize(doc)) == doc


def test_hand_edited_numbers_map_through_definitions() -> None:
    markdown = f"""\ufeff# Alice 的档案\r
\r
## Work 工作
* Works on 语音识别 [^7] [^3]   <!-- {M1} -->
+ added by hand [^3]
- C:\\path stays, \\*star\\* unescapes

---
[^3]: notebook:ep_B
[^9]: chat:unused
[^7]: chat:ep_A
[^3]: notebook:ep_B
"""
    doc = parse(markdown)
    bullets = doc.sections[0].bullets
    assert bullets[0] == Bullet(M1, "Works on 语音识别", (CHAT, NOTE))
    assert bullets[1] == Bullet("", "added by hand", (NOTE,))
    assert bullets[2] == Bullet("", "C:\\path stays, *star* unescapes", ())
    assert doc.title == "Alice 的档案"


def test_bullet_without_id_reads_but_is_not_written() -> None:
    doc = parse("# T\n## S\n- new thing [^3]\n---\n[^3]: chat:ep_A\n")
    assert doc.sections[0].bullets == (Bullet("", "new thing", (CHAT,)),)
    with pytest.raises(DocumentFormatError, match="has no id"):
        serialize(doc)


def test_mixed_legacy_and_current_bullets() -> None:
    markdown = f"""# T

## S
- old one [^{M1}]
- new one [^1] <!--{M2}-->
- old, no sources [^{M3}]

[^1]: chat:ep_A
[^{M1}]: chat:ep_A, notebook:ep_B
[^{M3}]:
"""
    doc = parse(markdown)
    assert doc.sections[0].bullets == (
        Bullet(M1, "old one", (CHAT, NOTE)),
        Bullet(M2, "new one", (CHAT,)),
        Bullet(M3, "old, no sources", ()),
    )
    assert serialize(doc).splitlines()[3:6] == [
        f"- old one [^1][^2] <!--{M1}-->",
        f"- new one [^1] <!--{M2}-->",
        f"- old, no sources <!--{M3}-->",
    ]


MALFORMED = [
    ("empty", "", 1, "expected a '# <title>'"),
    ("no title", "\n## S\n- a <!--m_1-->\n", 2, "expected a '# <title>'"),
    ("undefined", "# T\n## S\n- a [^1] <!--m_1-->\n- b [^4] <!--m_2-->\n---\n[^1]: chat:e\n", 4,
     r"footnote \[\^4\] is used but never defined"),
    ("defined twice", "# T\n## S\n- a [^1] <!--m_1-->\n---\n[^1]: chat:e\n[^1]: chat:f\n", 6,
     "defined twice with different targets"),
    ("bad target", "# T\n## S\n- a [^1] <!--m_1-->\n---\n[^1]: ep_A\n", 5, "surface:episode_id"),
    ("empty target", "# T\n## S\n- a [^1] <!--m_1-->\n---\n[^1]:\n", 5, "not ''"),
    ("two targets", "# T\n## S\n- a [^1] <!--m_1-->\n---\n[^1]: chat:a; chat:b\n", 5,
     "surface:episode_id"),
    ("bad legacy source", "# T\n## S\n- a [^m_1]\n\n[^m_1]: chat:a; oops\n", 5, "'oops'"),
    ("duplicate id", "# T\n## S\n- a <!--m_1-->\n## R\n- b <!--m_1-->\n", 5, "appears twice"),
    ("duplicate legacy id", "# T\n## S\n- a <!--m_1-->\n- b [^m_1]\n[^m_1]:\n", 4, "appears twice"),
    ("bullet first", "# T\n\n- a <!--m_1-->\n", 3, "after a '## <section>'"),
    ("prose", "# T\n## S\n- a <!--m_1-->\nsome prose\n", 4, "cannot read 'some prose'"),
    ("subheading", "# T\n## S\n### sub\n", 3, "cannot read '### sub'"),
    ("second title", "# T\n## S\n# U\n", 3, "cannot read '# U'"),
    ("after footnotes", "# T\n## S\n---\n[^1]: chat:e\n## R\n", 5, "only footnote definitions"),
    ("bullet after defs", "# T\n## S\n[^1]: chat:e\n- a <!--m_1-->\n", 4,
     "only footnote definitions"),
    ("text after mark", "# T\n## S\n- a [^1] b <!--m_1-->\n---\n[^1]: chat:e\n", 3,
     r"cannot read '\[\^1\] b <!--m_1-->' at the end"),
    ("text after id", "# T\n## S\n- a <!--m_1--> b\n", 3, "cannot read"),
    ("bad id comment", "# T\n## S\n- a <!-- todo -->\n", 3, "not an item id"),
    ("two ids", "# T\n## S\n- a [^m_1] <!--m_2-->\n[^m_1]:\n", 3, "two ids"),
    ("legacy not last", "# T\n## S\n- a [^m_1][^1]\n[^m_1]:\n[^1]: chat:e\n", 3, "last footnote"),
]  # fmt: skip


@pytest.mark.parametrize(("markdown", "line", "message"), [c[1:] for c in MALFORMED],
                         ids=[c[0] for c in MALFORMED])  # fmt: skip
def test_malformed_input_names_the_line(markdown: str, line: int, message: str) -> None:
    with pytest.raises(DocumentFormatError, match=message) as info:
        parse(markdown)
    assert str(info.value).startswith(f"line {line}: ")
    assert info.value.line == line
    assert isinstance(info.value, InvalidInputError)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Citation("ch at", "ep_A"),
        lambda: Citation("chat", ""),
        lambda: Citation("chat:x", "ep_A"),
        lambda: Bullet("ep_01", "x"),
        lambda: Bullet("m_1 -->", "x"),
        lambda: Document("T", (Section("A", (Bullet(M1, "a"),)), Section("B", (Bullet(M1, "b"),)))),
    ],
)
def test_construction_rejects_what_cannot_be_written(make: object) -> None:
    with pytest.raises(InvalidInputError):
        make()  # type: ignore[operator]
