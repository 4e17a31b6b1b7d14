"""Traditional characters and written Cantonese read as the offline rules read Chinese:
simplified Mandarin. The fact is said so; the turn it cites keeps every word as written."""

from __future__ import annotations

import pytest

from memstrata.curate import hanzi
from tests.unit.said import facts as _facts


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("我對花生過敏", "我对花生过敏"),
        ("驗咗血，醫生話係甲減", "验了血，医生说是甲减"),
        ("佢唔食得蝦", "他不能吃虾"),
        ("我哋關係好好", "我们关系好好"),  # the 係 of 關係 stays a 系
        ("I love tea", "I love tea"),
        ("我对花生过敏", "我对花生过敏"),  # simplified Mandarin as it is
        ("系统坏了", "系统坏了"),  # no Cantonese word: nothing put in Mandarin
    ],
)
def test_chinese_is_read_in_simplified_mandarin(written: str, read: str) -> None:
    assert hanzi.as_read(written) == read


def test_a_traditional_or_cantonese_turn_yields_its_health_states() -> None:
    found = _facts("我對花生過敏，醫生開咗氯雷他定畀我")
    assert ("allergy:peanut", "用户对花生过敏") in found
    assert "medication:loratadine" in [slot for slot, _ in found]
    said = "驗咗血，doctor 話係 hypothyroidism，甲減。start 咗 levothyroxine"
    slots = [s for s, _ in _facts(said)]
    assert "condition:thyroid condition" in slots and "medication:levothyroxine" in slots
    assert [s for s, _ in _facts("有 EpiPen always 喺個袋度，兩支")] == ["medication:epinephrine"]


def test_the_cited_turn_keeps_its_own_characters(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from memstrata.api import Memory

    with Memory.open(tmp_path) as memory:
        [turn] = memory.remember("我對花生過敏", "u")
        memory.extract("u")
        [fact] = [f for f in memory.list("u", "fact") if getattr(f, "slot", None)]
        assert fact.text == "用户对花生过敏" and fact.sources == (turn.id,)
        assert memory.get(turn.id, "u").text == "我對花生過敏"


def test_without_opencc_cantonese_words_are_still_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(hanzi, "_converter", lambda: None)
    assert hanzi.as_read("驗咗血") == "驗了血"  # characters as written, the word in Mandarin
    assert hanzi.simplified("過敏") == "過敏"
