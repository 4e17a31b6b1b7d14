"""A Chinese life over months, as a teacher's chat says it: a move planned then made, a job
moved to, a routine's day changed, a trip put off twice, what a child does and what is only
for tonight. Each read as the state it sets, dated by the day it was said."""

from __future__ import annotations

from datetime import UTC, datetime

from memstrata import timeref
from memstrata.api import Memory
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.curate.frames import PASSING_IMPORTANCE
from memstrata.model import Candidate, FactFilter, Role, Scope, Turn
from tests.unit.said import user_turns

SAID = datetime(2026, 9, 25, 12, tzinfo=UTC)


def _read(*texts: str) -> list[Candidate]:
    return list(RuleExtractor().extract(user_turns(*texts, at=SAID)).candidates)


def test_a_direction_after_the_verb_is_no_past_tense() -> None:
    """ "八月搬过去" (move over there in August): 过 of a direction, not of experience."""
    june = datetime(2026, 6, 20, tzinfo=UTC)
    [august] = timeref.mentions("我们打算八月搬过去", june)
    assert august.start == datetime(2026, 8, 1, tzinfo=UTC)
    [once] = timeref.mentions("我八月去过上海", june)
    assert once.start == datetime(2025, 8, 1, tzinfo=UTC)


def test_a_move_made_is_a_home_and_a_month_named_is_no_month_to_come() -> None:
    [home] = _read("我们八月底搬到广州天河了")
    assert (home.slot, home.value) == ("residence", "广州天河")
    assert home.when is not None and home.when.start == datetime(2026, 8, 21, tzinfo=UTC)
    [plan] = _read("月底搬去杭州")
    assert plan.slot == "plan:搬去杭州"


def test_a_clause_about_a_child_named_before_is_no_job_of_the_users() -> None:
    said = _read("我儿子乐乐今年七岁", "乐乐转到了天河的一所小学")
    assert [c.slot for c in said] == ["child:乐乐"]


def test_tonight_and_a_word_that_holds_xiang_are_no_plans_that_last() -> None:
    [tonight] = _read("晚上要去接乐乐，先不聊啦")
    assert tonight.importance == PASSING_IMPORTANCE
    assert _read("教研员的工作比想象中忙，天天开会") == []


def test_a_job_moved_to_names_the_role_and_the_place() -> None:
    said = {c.slot: c.value for c in _read("我调去区教育局当语文教研员了，九月开始")}
    assert said == {"job": "语文教研员", "employer": "区教育局"}


def test_a_routine_moved_to_another_day_and_a_trip_put_off_again(memory: Memory) -> None:
    scope = Scope("hj")
    days = [datetime(2026, 1, 8, tzinfo=UTC), datetime(2026, 3, 15, tzinfo=UTC), SAID]
    said = [
        ["寒假想带乐乐去云南玩，大理丽江那边"],
        ["我现在每周六上午去游泳，一次一个小时"],
        ["游泳现在改成周日晚上了，离家近的那个馆", "云南又推了，改到明年五一，搬家太忙了"],
    ]
    for n, (day, texts) in enumerate(zip(days, said, strict=True)):
        memory.remember(
            [Turn(t, speaker="user", role=Role.USER, time=day) for t in texts],
            scope,
            session_id=f"s{n}",
        )
    memory.extract(scope)
    held = {
        f.slot: f.value
        for f in memory.store.iter_facts(scope, FactFilter(current_only=True))
        if f.slot
    }
    assert held["routine:swimming"] == "游泳，周日晚上"
    assert held["plan:云南"] == "云南，改到明年五一"
