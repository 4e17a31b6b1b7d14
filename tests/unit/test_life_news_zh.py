"""States of a life said the way Chinese chats say them: a correction of where one lives, an
engagement with its partner's name, kin named without 我, how long since joining, a medicine
named in Latin letters prescribed or stopped, a chat opener, and the last of a series that is
no past tense."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.api import Memory
from memstrata.model import Role, Scope, Turn
from memstrata.timeref import mentions
from tests.unit.said import candidates


def _read(text: str) -> list[tuple[str | None, str | None, str | None]]:
    return [(c.slot, c.value, c.ended) for c in candidates(text) if c.slot]


@pytest.mark.parametrize(
    ("text", "home"),
    [
        ("之前说错了，我不住望京，是酒仙桥，离望京很近所以老说混", "酒仙桥"),
        ("我其实没住在浦东，住在徐汇", "徐汇"),
    ],
)
def test_a_home_denied_then_the_right_one_is_the_home(text: str, home: str) -> None:
    assert [(s, v) for s, v, _ in _read(text) if s == "residence"] == [("residence", home)]


@pytest.mark.parametrize("text", ["我不住这里，是来出差的", "我不住宿舍，是租的房子"])
def test_a_denied_home_without_a_place_after_it_names_none(text: str) -> None:
    assert not [s for s, _, _ in _read(text) if s == "residence"]


def test_an_engagement_keeps_whom() -> None:
    assert ("partner", "和小雅订婚", None) in _read("和小雅订婚了！！明年春天办婚礼")
    assert ("partner", "订婚", None) in _read("我们订婚了")


def test_kin_named_at_a_clause_start_is_the_speakers() -> None:
    assert ("partner", "女朋友小雅", None) in _read("女朋友小雅在国贸上班，做 HR")
    assert _read("女朋友这种东西随缘吧") == []  # no name: no one in particular


def test_how_long_since_joining_is_no_employer() -> None:
    assert not [s for s, _, _ in _read("入职一个多月了，比以前忙") if s == "employer"]
    assert ("employer", "字节", None) in _read("拿到字节的 offer 了！5月18号入职")


def test_a_medicine_in_latin_letters_prescribed_and_stopped() -> None:
    started = _read("医生说是胃食管反流，开了 omeprazole，每天早上一粒")
    assert ("medication:omeprazole", "omeprazole", None) in started
    stopped = _read("omeprazole 医生说可以停了，胃好多了")
    assert [s for s, _, e in stopped if e is not None] == ["medication:omeprazole"]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("btw 我乳糖不耐，公司下午茶全是奶茶", "用户乳糖不耐，公司下午茶全是奶茶"),
        ("顺便说一下，我对青霉素过敏", "用户对青霉素过敏"),
    ],
)
def test_a_chat_opener_is_not_kept_in_the_fact(text: str, said: str) -> None:
    assert [c.text for c in candidates(text) if c.slot] == [said]


@pytest.mark.parametrize(
    ("text", "day"),
    [("美团 last day 是5月15号", "2026-05-15"), ("My last day is May 15.", "2026-05-15")],
)
def test_the_last_of_a_series_is_no_past_tense(text: str, day: str) -> None:
    [found] = mentions(text, datetime(2026, 4, 20, tzinfo=UTC))
    assert found.start.date().isoformat() == day


def test_the_last_time_still_names_the_past() -> None:
    [found] = mentions("Last time I stayed there was May 3.", datetime(2026, 6, 20, tzinfo=UTC))
    assert found.start.date().isoformat() == "2026-05-03"


def test_a_long_safety_line_does_not_keep_a_shorter_one_out(memory: Memory) -> None:
    """At a small budget, a safety line too long for what is left is passed over and the
    shorter ones after it are still served."""
    scope = Scope("packed")
    memory.remember(
        [
            Turn(
                "My GP says my cholesterol is a bit high and that I should cut down on cheese, "
                "butter, red meat and the takeaway curries I love on Fridays with my brother.",
                speaker="user",
                role=Role.USER,
                time=datetime(2026, 1, 5, tzinfo=UTC),
            ),
            Turn(
                "I have asthma.",
                speaker="user",
                role=Role.USER,
                time=datetime(2026, 1, 6, tzinfo=UTC),
            ),
        ],
        scope,
    )
    memory.extract(scope)  # not consolidated: every health fact is served under Safety
    small = memory.wake_up(scope, budget=80).text
    assert "asthma" in small and "cholesterol" not in small
