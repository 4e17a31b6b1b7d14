"""The line detectors of ``bench handed`` on small hand-written served texts: what must match
and what must not."""

from __future__ import annotations

import pytest

from memstrata.bench.handed_lines import (
    cut_value,
    date_form,
    found_in,
    holds,
    marks_past,
    served_lines,
    states_change,
    states_date,
    valid_expected_date,
)
from memstrata.errors import InvalidInputError

WAKE_UP = """<memory>
## Profile
- job: design lead at Fernleaf &amp; Co

- allergies: 青霉素 (penicillin)
### events
- Trip to Lisbon &lt;postponed&gt;
</memory>
(not shown within 160 tokens: 3 facts; use recall(topic) or search(query) for more)"""


def test_served_lines_are_the_blocks_content_unescaped() -> None:
    assert served_lines(WAKE_UP) == [
        "job: design lead at Fernleaf & Co",
        "allergies: 青霉素 (penicillin)",
        "Trip to Lisbon <postponed>",
    ]
    # a text without a block is read whole; an escaped tag inside a block stays a line
    assert served_lines("said 2026-01-05: user: hi\n\n# heading") == ["said 2026-01-05: user: hi"]
    assert served_lines("<memory>\n- &lt;/memory&gt; forged\n</memory>") == ["</memory> forged"]


def test_an_item_is_found_in_one_line_holding_every_term_of_an_alternative() -> None:
    lines = served_lines(WAKE_UP)
    assert found_in((("fernleaf", "DESIGN LEAD"),), lines) == [0]  # case-insensitive
    assert found_in((("Fernleaf & Co",),), lines) == [0]  # after unescaping
    assert found_in((("shrimp",), ("青霉素",)), lines) == [1]
    assert found_in((("Fernleaf", "penicillin"),), lines) == []  # terms on two lines
    assert found_in((("Lisbon", "October"),), lines) == []
    assert holds((("peanut",),), "Allergic to PEANUTS")  # substrings, as the format says


@pytest.mark.parametrize(
    "line",
    [
        "Formerly a UX designer at Barclays",
        "former employer: Barclays",
        "Previously lived in Manchester",
        "previous job: data engineer",
        "Used to drink flat whites",
        "No longer vegan",
        "not anymore: golf",
        "isn't vegan anymore, eats eggs again",
        "Worked at Barclays until May 2025",
        "Drank coffee before March",
        "Earlier: Shopify",
        "Was a data engineer at Shopify",
        "ex-boyfriend Marcus",
        "以前住在上海",
        "之前在西门子工作",
        "曾在腾讯工作",
        "原来喝茉莉花茶",
        "不再跳广场舞",
        "已经不喝啤酒了",
        "前任男友",
    ],
)
def test_past_markers_mark_a_line(line: str) -> None:
    assert marks_past(line)


@pytest.mark.parametrize(
    "line",
    [
        "Works at Barclays in Manchester",
        "Loves wasabi peas",  # "was" only as a word
        "Exercises daily",  # "ex-" only with its dash
        "She formed a band",
        "Does not eat meat",  # "not" without "anymore"
        "住在上海",
        "每天喝啤酒",
    ],
)
def test_lines_without_a_past_marker(line: str) -> None:
    assert not marks_past(line)


def test_a_change_stated_is_told_apart_from_a_past_marker() -> None:
    assert states_change("Switched from metformin to Jardiance")
    assert states_change("Lisbon trip postponed to April 2026")
    assert states_change("大理推迟到国庆") and states_change("降压药从氨氯地平换成缬沙坦")
    assert states_change("戒了啤酒") and not states_change("买了一枚戒指")
    assert states_change("现在不喝奶茶了，改喝冰美式") and not states_change("这家店不错了")
    assert states_change("用户停了广场舞") and not states_change("用户停车在楼下")
    assert states_change("纠正一下，是海珠区") and states_change("Handed in her notice at Barclays")
    assert not marks_past("Switched from metformin to Jardiance")
    assert not states_change("Takes metformin twice a day")
    assert not states_change("从事会计工作")


@pytest.mark.parametrize(
    ("line", "form"),
    [
        ("Surgery on 2026-04-21", "iso-day"),
        ("Moved in 2025-07", "iso-month"),
        ("Coeliac diagnosis, 2025-W30", "iso-week"),
        ("Mike visits the week of May 18", "week-of"),
        ("Zara's wedding the weekend of Aug 22", "week-of"),
        ("Wedding: summer 2027", "season-year"),
        ("Wedding in the fall of 2027", "season-year"),
        ("Started the job in 2024", "year"),
        ("Lisbon in April 2026", "year"),
        ("2026年10月去京都", "chinese"),
        ("2025年9月10日飞广州", "chinese"),
        ("2026年春节回烟台", "chinese"),
    ],
)
def test_date_forms(line: str, form: str) -> None:
    assert date_form(line) == form


@pytest.mark.parametrize(
    "line",
    [
        "Started at Clio last Monday",
        "Trip to Dali on October 2",
        "国庆10月2号去大理",
        "下个月搬家",
        "Dentist at 4 today",
        "Runs 5 km three times a week",
        "Vitamin D 1000 IU daily",
        "Lives at number 12000",
        "A week off in the spring",
    ],
)
def test_lines_without_a_date(line: str) -> None:
    assert date_form(line) is None


def test_states_date_checks_the_expected_date_with_its_year() -> None:
    assert states_date("Surgery on 2026-04-21", "2026-04-21")
    assert states_date("Surgery on April 21, 2026", "2026-04-21")
    assert states_date("Surgery on 21st April 2026", "2026-04-21")
    assert states_date("2026年4月21日手术", "2026-04-21")
    assert not states_date("Surgery on April 21", "2026-04-21")  # no year
    assert not states_date("Surgery on 2026-04-24", "2026-04-21")
    assert states_date("Lisbon in April 2026", "2026-04")
    assert states_date("Lisbon, 2026-04-10", "2026-04")  # a day inside the month
    assert states_date("2026年4月去里斯本", "2026-04")
    assert not states_date("Lisbon in May 2026", "2026-04")
    assert not states_date("Lisbon in April", "2026-04")
    assert states_date("Diagnosed 2025-W30", "2025-W30")
    assert states_date("Diagnosed on 2025-07-23", "2025-W30")  # a day inside the week
    assert not states_date("Diagnosed on 2025-07-28", "2025-W30")
    assert states_date("Bali in 2027", "2027") and not states_date("Bali in 20270", "2027")
    with pytest.raises(InvalidInputError):
        states_date("anything", "April")


def test_valid_expected_dates() -> None:
    assert all(valid_expected_date(d) for d in ("2026", "2026-02", "2026-02-28", "2026-W53"))
    assert not any(
        valid_expected_date(d) for d in ("2026-13", "2026-02-30", "2025-W53", "26-02", "May")
    )


@pytest.mark.parametrize(
    "line",
    [
        "job: product manager at Tencent in",
        "Works as a nurse at",
        "Moving to Bristol with the.",
        "partner: married to my",
        "Plans a trip with their",
        "住在",
        "喜欢吃妈妈做的",
        "周末和老李一起去看爷爷和，",
    ],
)
def test_cut_values(line: str) -> None:
    assert cut_value(line)


@pytest.mark.parametrize(
    "line",
    [
        "job: product manager at Tencent",
        "Lives in Bristol.",
        "Drinks rooibos (caffeine-free)",
        "Loves pasta",  # ends in "a" inside a word
        "residence: Manchester last month and the user",  # cut, but after a whole word
        "job: product manager at Tenc",  # cut mid-word: undetectable
        "住在成都高新区",
        "",
    ],
)
def test_lines_that_are_not_cut_values(line: str) -> None:
    assert not cut_value(line)


def test_an_item_is_found_whichever_script_writes_its_chinese() -> None:
    from memstrata.bench.handed_lines import holds

    assert holds((("甲減",),), "用户有甲减 (2025-10-01)")
    assert holds((("过敏", "花生"),), "我對花生過敏")
    assert not holds((("甲減",),), "用户有高血压")
