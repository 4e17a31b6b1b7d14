"""A later statement that changes a state supersedes the earlier fact, never deletes it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memstrata.api import Memory
from memstrata.model import Fact, FactFilter, HistoryOp, Role, Scope, Turn

ME = Scope("me")
DAY = datetime(2026, 3, 1, 9, tzinfo=UTC)


def _say(memory: Memory, *sessions: list[str], speaker: str = "user", later: int = 0) -> None:
    """Each session a month after the one before, from ``later`` months after ``DAY``."""
    for n, turns in enumerate(sessions, start=later):
        memory.remember(
            [
                Turn(
                    text=t,
                    speaker=speaker,
                    role=Role.USER,
                    time=DAY + timedelta(days=30 * n),
                    session_id=f"s{n}",
                )
                for t in turns
            ],
            ME,
        )
    memory.extract(ME)


def _current(memory: Memory, kind: str) -> list[Fact]:
    return list(memory.store.iter_facts(ME, FactFilter(current_only=True, slot_kind=kind)))


def _values(memory: Memory, kind: str) -> list[str | None]:
    return sorted((f.value or f"ended: {f.text}") for f in _current(memory, kind))


def test_a_new_employer_closes_the_old_one_and_the_job_held_there(memory: Memory) -> None:
    _say(
        memory,
        ["I'm a product manager at Tencent in Shenzhen."],
        ["I accepted an offer from CATL, I'll be a battery product lead there."],
    )
    assert _values(memory, "employer") == ["CATL"]
    assert _values(memory, "job") == ["battery product lead"]
    old = next(f for f in memory.list(ME, "fact") if isinstance(f, Fact) and "Tencent" in f.text)
    assert old.valid_to is not None and old.superseded_by is not None  # closed, not deleted
    assert memory.history(old.id, ME)[-1].op == HistoryOp.SUPERSEDE


def test_an_employer_changed_keeps_a_job_stated_on_its_own(memory: Memory) -> None:
    _say(memory, ["I'm a nurse.", "I work at St Mary's Hospital."], ["I joined Guy's Hospital."])
    assert _values(memory, "employer") == ["Guy's Hospital"]
    assert _values(memory, "job") == ["nurse"]  # said apart from the old employer


def test_a_new_employer_alone_ends_the_role_held_at_the_old_one(memory: Memory) -> None:
    _say(memory, ["I'm an ICU nurse at St Mary's Hospital."], ["I joined Guy's Hospital."])
    assert _values(memory, "employer") == ["Guy's Hospital"]
    assert all(f.value != "ICU nurse" for f in _current(memory, "job"))


def test_a_new_role_alone_keeps_the_employer(memory: Memory) -> None:
    """A promotion or a move inside the same place names the role only."""
    _say(
        memory,
        ["I'm Lucas, ICU nurse at the Royal Melbourne."],
        ["I GOT IT. Clinical nurse educator, start March 16."],
    )
    assert _values(memory, "job") == ["Clinical nurse educator"]
    assert _values(memory, "employer") == ["Royal Melbourne"]


def test_being_laid_off_ends_the_employer_whatever_it_is(memory: Memory) -> None:
    _say(memory, ["I work at Google."], ["I got laid off last week."])
    [ended] = _current(memory, "employer")
    assert ended.value is None and "between jobs" in ended.text


def test_only_one_allergen_replaces_them_all_and_an_allergen_ruled_out_is_kept_apart(
    memory: Memory,
) -> None:
    _say(
        memory,
        ["I'm allergic to peanuts and shellfish."],
        ["Actually I'm only allergic to shrimp, my doctor retested me."],
    )
    assert _values(memory, "allergy") == ["shrimp"]
    _say(memory, ["我对芒果过敏，吃了嘴会肿。"], ["其实芒果没问题，医生说是花粉。"], later=2)
    allergies = {f.slot: f.value for f in _current(memory, "allergy")}
    assert allergies["allergy:shrimp"] == "shrimp"
    assert allergies["allergy:mango"] is None  # ruled out: the newer fact says so, the older closed


def test_a_drink_given_up_and_the_only_one_now(memory: Memory) -> None:
    _say(memory, ["I drink coffee every morning."], ["我现在不喝咖啡了，只喝绿茶。"])
    drinks = {f.slot: f.value for f in _current(memory, "drink")}
    assert drinks == {"drink:coffee": None, "drink:green tea": "绿茶"}  # the stop is said, once


def test_a_plan_postponed_then_made(memory: Memory) -> None:
    _say(
        memory,
        ["My husband and I are planning a trip to Kyoto in May."],
        ["The Kyoto trip is postponed to October."],
    )
    [plan] = _current(memory, "plan")
    assert "October" in plan.text and plan.when is not None and plan.when.start.month == 10
    _say(memory, ["We went to Kyoto in October, it was lovely."], later=8)
    assert _current(memory, "plan") == []  # the trip made closes the plan


def test_the_same_turn_and_another_speaker_are_not_superseded(memory: Memory) -> None:
    _say(memory, ["I live in Berlin."], speaker="Ana")
    _say(memory, ["I live in Lisbon."], speaker="Ben")
    assert _values(memory, "residence") == ["Berlin", "Lisbon"]  # two people, two homes
    _say(memory, ["我现在不喝咖啡了，只喝绿茶。"], speaker="Ana")
    drinks = {f.slot: f.value for f in _current(memory, "drink")}
    assert drinks["drink:coffee"] is None  # "只喝绿茶" said with it did not close it


def test_a_state_said_again_in_other_words_is_one_fact_with_more_support(memory: Memory) -> None:
    _say(memory, ["I'm from Sweden."], ["I'm from Sweden, it was hard to leave."])
    [home] = _current(memory, "hometown")
    assert home.value == "Sweden" and len(home.sources) == 2 and home.importance > 0.75


def test_an_activity_given_up_in_fewer_words_closes_it_whatever_kind_held_it(
    memory: Memory,
) -> None:
    """ "I'm giving up golf" ends "I play golf on Saturdays with Frank"; "我停了羽毛球" ends
    "我每周三晚上打羽毛球"; the ending is said plainly, with its "given up"."""
    _say(
        memory,
        [
            "I play golf on Saturdays with Frank.",
            "我每周三晚上打羽毛球",
            "I still do Saturdays at the Oxfam bookshop.",
        ],
        [
            "I'm giving up golf.",
            "我停了羽毛球先",
            "I've had to give up the Oxfam Saturdays, it's too far now.",
        ],
    )
    current = sorted(f.text for f in _current(memory, "routine"))
    assert current == [
        "The user has given up Oxfam Saturdays",
        "The user has given up golf",
        "用户停了羽毛球",
    ]


def test_a_medicine_replaced_under_its_brand_name_closes_the_one_it_replaces(
    memory: Memory,
) -> None:
    _say(
        memory,
        ["I have asthma, I do 2 puffs of ventolin before I climb."],
        ["My GP switched my inhaler. No more ventolin, it's symbicort now."],
    )
    assert _values(memory, "medication") == [
        "ended: The user no longer takes ventolin",
        "symbicort",
    ]


def test_a_break_up_said_in_chinese_ends_the_partner(memory: Memory) -> None:
    _say(memory, ["我女朋友林晓在上海读研"], ["我跟林晓分手了 上周的事"])
    assert [f.value for f in _current(memory, "partner")] == [None]  # ended, nobody current


def test_only_one_allergen_of_those_held_together_is_a_change_not_a_repeat(memory: Memory) -> None:
    _say(
        memory,
        ["im allergic to sesame and basically all seeds, poppy sunflower chia everything"],
        ["allergy update!! the allergist did the skin prick test, turns out its only sesame."],
    )
    assert _values(memory, "allergy") == ["sesame"]


def test_a_move_the_speaker_greets_from_and_a_home_shown_as_this_one_close_the_old_home(
    memory: Memory,
) -> None:
    _say(
        memory,
        ["I work full time (data engineer, remote, from my place in toronto)"],
        ["hi from vancouver 🌧 we've been here 3 weeks. started the new job last monday"],
    )
    assert _values(memory, "residence") == ["vancouver"]
    _say(memory, ["我在上海住了十几年了"], ["香港这个flat小得可怜 but 楼里有pool"], later=2)
    assert _values(memory, "residence") == ["香港"]


def test_an_activity_given_up_or_swapped_for_another_closes_the_habit_said_before(
    memory: Memory,
) -> None:
    _say(
        memory,
        ["And Sundays I play futsal with some guys in Carlton", "我每天晚上在小区跳广场舞"],
        [
            "Physio says no more futsal, too many sudden stops.",
            "医生说广场舞那种蹦蹦跳跳的别跳了 我现在改打太极拳了",
        ],
    )
    current = {f.slot: f.value for f in _current(memory, "routine")}
    assert current.get("routine:tai chi") == "太极拳"
    held = [v for v in current.values() if v and ("futsal" in v or "广场舞" in v)]
    assert held == []  # ended, not served beside their ends


def test_a_birth_and_breastfeeding_end_the_pregnancy(memory: Memory) -> None:
    _say(
        memory,
        ["我怀孕了！12 周，due date 是 7月2号"],
        ["Baby 出生啦！！是个女儿，英文名 Chloe，中文名叫小满"],
    )
    assert _current(memory, "condition") == []
    assert _values(memory, "child") == ["女儿Chloe/小满"]
    _say(
        memory,
        ["I'm pregnant, 14 weeks!"],
        ["I'm breastfeeding, so I check every medicine."],
        later=2,
    )
    assert _values(memory, "condition") == ["breastfeeding"]


def test_a_pastime_is_one_routine_in_either_language(memory: Memory) -> None:
    """ "我每周二打羽毛球" and, later, "badminton on pause": one routine, keyed by the pastime,
    so the pause ends it; the profile's interest keeps the words said."""
    _say(memory, ["我现在每周二和周四晚上去打羽毛球，跟同事一起"], ["badminton on pause obviously"])
    assert [f.value for f in _current(memory, "routine") if f.value] == []
    [played] = [f for f in memory.store.iter_facts(ME, FactFilter(slot_kind="routine")) if f.value]
    assert played.slot == "routine:badminton" and played.valid_to is not None


def test_a_value_said_again_with_the_name_keeps_the_name(memory: Memory) -> None:
    """ "staying in Tampines with my wife", then "My wife Meera is pregnant": the partner is
    one fact, and its value now names her."""
    _say(memory, ["I'm staying in Tampines with my wife."], ["My wife Meera is pregnant!"])
    [partner] = _current(memory, "partner")
    assert partner.value == "wife Meera" and len(partner.sources) == 2


def test_a_plan_off_for_now_and_moved_to_a_time_is_postponed(memory: Memory) -> None:
    _say(
        memory,
        ["thinking of signing up for the Standard Chartered marathon in December"],
        ["marathon is off for this year, postponed to Dec 2027, no way I can train"],
    )
    values = _values(memory, "plan")
    assert values == ["marathon, postponed to Dec 2027"], values


def test_a_drink_taken_up_again_or_switched_to_without_its_subject(memory: Memory) -> None:
    _say(
        memory,
        ["我每天早上一杯kopi C"],
        ["I've cut down coffee, switched to green tea mostly"],
        ["honestly back on coffee now, 2 cups a day"],
    )
    assert _values(memory, "drink") == ["coffee"]


def test_a_birth_and_breastfeeding_end_the_pregnancy_of_the_users_wife(memory: Memory) -> None:
    _say(
        memory,
        ["My wife Meera is pregnant! Due in October."],
        ["Our son Kabir was born on Oct 19!!", "Meera is breastfeeding so she avoids caffeine"],
    )
    conditions = [f.slot for f in _current(memory, "condition")]
    assert "condition:meera/pregnancy" not in conditions
    assert "condition:meera/breastfeeding" in conditions
    _say(memory, ["我老婆林悦怀孕了"], later=3)
    assert "condition:林悦/pregnancy" in [f.slot for f in _current(memory, "condition")]
    _say(memory, ["宝宝出生啦！是个女儿，叫小雨"], later=4)
    assert not [s for s in (f.slot for f in _current(memory, "condition")) if "pregnan" in s]


def test_a_london_nurses_year_read_as_she_says_it(memory: Memory) -> None:
    """A flatshare in Brixton, then the flat in Peckham moved into; a hospital started at "in
    August" (a month, not a place); dairy avoided, then had again; a wedding booked."""
    _say(
        memory,
        [
            "I live in a flatshare in Brixton with two other nurses, it's chaos but fun.",
            "And I can't do dairy, it wrecks my stomach, so oat milk in everything.",
        ],
        [
            "We got the flat in Peckham, moved in on the 1st.",
            "Starting at King's College Hospital in August as a cardiac research nurse.",
        ],
        [
            "Actually I've started having a bit of dairy again, small amounts of cheese seem ok.",
            "Wedding is booked for May 2027 in Bristol, near Tom's family.",
        ],
    )
    assert _values(memory, "residence") == ["Peckham"]
    assert _values(memory, "employer") == ["King's College Hospital"]
    assert [f.value for f in _current(memory, "avoids") if f.value] == []
    assert _values(memory, "plan") == ["Wedding, May 2027 in Bristol"]
    assert _current(memory, "hobby") == []  # "having a bit of dairy" is no pastime


def test_a_move_made_closes_the_plan_to_make_it(memory: Memory) -> None:
    _say(memory, ["We're moving to Tucson in December."], ["We moved to Tucson last week."])
    assert _values(memory, "plan") == []
    assert _values(memory, "residence") == ["Tucson"]
    _say(memory, ["我们下个月搬去杭州"], ["我们搬到杭州了"], later=3)
    assert _values(memory, "plan") == []
    assert _values(memory, "residence") == ["杭州"]


def test_a_disease_diagnosed_ends_the_state_that_led_to_it(memory: Memory) -> None:
    _say(
        memory,
        ["上个月体检医生说我血糖有点高 是糖尿病前期"],
        ["医生说我是二型糖尿病了，开了二甲双胍"],
    )
    conditions = [f.slot for f in _current(memory, "condition") if f.value]
    assert "condition:diabetes" in conditions and "condition:prediabetes" not in conditions
