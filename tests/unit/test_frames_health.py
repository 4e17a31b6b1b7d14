"""Health states said the way people say them: a condition without "I have" (it comes on, a
doctor names it, it heads an elliptical clause), a medicine carried, prescribed or swapped, a
food one cannot eat, and whose they are. Never the user's when the sentence is about someone
else, never a medicine that is an activity, a hospital stay or visit that is no home or trip."""

from __future__ import annotations

import pytest

from memstrata.curate.frames import frames_in
from tests.unit.said import candidates
from tests.unit.said import facts as _facts


def _said(text: str, people: dict[str, str] | None = None) -> list[tuple[str, str, bool]]:
    found = frames_in(text, [], text, text, people if people is not None else {})
    return [(f.slot, f.value, f.negated) for f in found]


@pytest.mark.parametrize(
    ("said", "slot"),
    [
        ("Also migraines, twice a month", "condition:migraine"),
        ("my migraines are back", "condition:migraine"),
        ("I get migraines when I skip coffee", "condition:migraine"),
        ("got diagnosed with anaemia last month", "condition:anaemia"),
        ("the doctor says it's asthma", "condition:asthma"),
        ("偏头痛偶尔发作", "condition:migraine"),
        ("偏头痛最近很频繁，一周两三次", "condition:migraine"),
        ("体检血红蛋白偏低，医生说缺铁性贫血", "condition:anaemia"),
    ],
)
def test_a_condition_said_without_i_have_is_the_speakers(said: str, slot: str) -> None:
    assert slot in [s for s, _, negated in _said(said) if not negated]


@pytest.mark.parametrize(
    "said",
    [
        "My mom has migraines",
        "上礼拜五老周喘不上气 半夜送的华西 住了五天院 医生说是慢阻肺急性加重",
        "但Ethan上周哮喘发作了一次，半夜去了玛丽医院急诊",
        "体检结果出来了，一切正常，没有高血压",
        "她偏头痛发作了",
    ],
)
def test_a_condition_of_someone_else_or_denied_is_not_the_speakers(said: str) -> None:
    mine = [s for s, _, _ in _said(said) if s.startswith("condition") and "/" not in s]
    assert mine == []  # a person's own, as cared_for reads it, is "condition:mom/migraine"


def test_a_condition_read_from_a_clause_that_says_more_is_said_plainly() -> None:
    assert ("condition:anaemia", "用户有贫血") in _facts(
        "还有 体检血红蛋白偏低，医生说缺铁性贫血，让我吃铁剂，说vegetarian的话要特别注意"
    )


@pytest.mark.parametrize(
    ("said", "slot"),
    [
        ("still have to carry the epipen for cashew/pistachio tho", "medication:epinephrine"),
        ("I have to carry two EpiPens everywhere", "medication:epinephrine"),
        ("开了氯雷他定让我随身带着", "medication:loratadine"),
        ("我每天吃阿托伐他汀，控制血脂", "medication:statins"),
        ("每天早上吃一片氨氯地平", "medication:amlodipine"),
    ],
)
def test_a_medicine_carried_prescribed_or_named_by_its_class_is_read(said: str, slot: str) -> None:
    assert slot in [s for s, _, negated in _said(said) if not negated]


def test_a_medicine_swapped_for_another_ends_the_first() -> None:
    found = _said("医生说是氨氯地平的副作用，给我换成缬沙坦了")
    assert ("medication:valsartan", "缬沙坦", False) in found
    assert ("medication:amlodipine", "氨氯地平", True) in found


def test_an_activity_stopped_in_a_clause_about_medicine_is_no_medicine() -> None:
    found = _facts("看了医生 拍了核磁 腰椎间盘突出 开了塞来昔布 一天两次 羽毛球先停了")
    slots = [slot for slot, _ in found]
    assert "medication:celecoxib" in slots and "condition:back pain" in slots
    assert not [s for s in slots if s and s.startswith("medication:羽毛球")]


def test_a_drug_whose_name_holds_ta_is_no_one_else() -> None:
    """他 in 氯雷他定 or 阿托伐他汀 is no "he": the clause is still the speaker's."""
    assert ("medication:loratadine", "开了氯雷他定让用户随身带着") in _facts(
        "上周去医院过敏科做了检查 结果除了芒果还对腰果过敏 开了氯雷他定让我随身带着"
    )


def test_allergies_said_besides_each_other_are_both() -> None:
    assert _said("结果除了芒果还对腰果过敏")[0][0] == "allergy:cashew+mango"


@pytest.mark.parametrize(
    ("said", "slot"),
    [("我不能吃海鲜", "avoids:shellfish"), ("海鲜不能吃", "avoids:shellfish")],
)
def test_a_food_one_cannot_eat_is_avoided_whichever_side_it_is_said(said: str, slot: str) -> None:
    assert [s for s, _, _ in _said(said)] == [slot]


def test_a_need_of_a_person_named_before_is_theirs() -> None:
    daughter = {"朵朵": "女儿朵朵"}
    assert _said("朵朵鸡蛋过敏，吃了会起疹子", daughter) == [("allergy:朵朵/egg", "鸡蛋", False)]
    assert _said("对了朵朵鸡蛋过敏", daughter) == [("allergy:朵朵/egg", "鸡蛋", False)]
    assert _said("朵朵不能吃鸡蛋", daughter) == [("avoids:朵朵/egg", "鸡蛋", False)]
    # a word of time or of a checkup after the relation is no name
    assert _said("我妈体检查出高血压", {}) == [("condition:妈/hypertension", "高血压", False)]


def test_a_hospital_stay_is_no_home_and_a_visit_no_trip() -> None:
    assert [s for s, _, _ in _said("上礼拜住了五天院")] == []
    assert [s for s, _, _ in _said("半夜去了玛丽医院急诊")] == []
    assert [s for s, _, _ in _said("我住在杭州西湖区")] == ["residence"]


def test_a_reaction_to_what_was_taken_is_an_allergy_and_a_correction_ends_the_first() -> None:
    found = _facts(
        "我自己有高血压 吃的缬沙坦 我对青霉素过敏",
        "对了 上回我跟你说青霉素 说错了 是头孢 那年打头孢起了一身疹子 青霉素我打过的没得事",
    )
    assert ("allergy:cephalosporin", "用户对头孢过敏") in found
    assert ("allergy:penicillin", "用户对青霉素不过敏") in found  # it ends the earlier one


def test_every_condition_of_a_sentence_is_read() -> None:
    slots = [s for s, _ in _facts("fyi I'm lactose intolerant and I have mild asthma")]
    assert "condition:lactose intolerance" in slots and "condition:asthma" in slots


def test_a_switch_from_a_medicine_of_several_words() -> None:
    found = _said("doctor switched me from the blue inhaler to Symbicort, twice a day")
    assert ("medication:inhaler", "blue inhaler", True) in found
    assert ("medication:budesonide-formoterol", "Symbicort", False) in found


def test_what_was_found_out_of_a_person_named_before_is_theirs() -> None:
    found = _facts(
        "my partner Sam is coming too, he's a nurse",
        "also Sam found out he's allergic to penicillin, had a rash after the antibiotics",
    )
    assert ("allergy:sam/penicillin", "The user's partner Sam is allergic to penicillin") in found


@pytest.mark.parametrize("said", ["settled in Vancouver finally.", "moved to Vancouver last week"])
def test_a_move_said_without_its_subject_sets_the_home(said: str) -> None:
    assert "residence" in [s for s, _ in _facts(said)]


def test_not_allergic_said_before_the_allergen_ends_it() -> None:
    assert _said("我不是对虾子过敏") == [("allergy:shrimp", "虾子", True)]
    assert _facts("我不是对虾子过敏，是对螃蟹过敏") == [
        ("allergy:shrimp", "用户不是对虾子过敏"),
        ("allergy:crab", "用户对螃蟹过敏"),
    ]


def test_a_one_character_allergen_is_read() -> None:
    assert _said("我对猫过敏") == [("allergy:cats", "猫", False)]
    assert ("allergy:阿哲/cats", "猫", False) in _said("我男朋友阿哲对猫过敏", {})


def test_a_chinese_plan_moved_and_a_state_of_the_body_are_said_as_people_say_them() -> None:
    assert ("plan:日本", "用户日本的计划改到明年三月") in _facts("去日本的行程延到明年三月了。")
    assert _facts("最近胃不好，医生说是胃食道逆流") == [
        ("condition:stomach problems", "用户胃不好"),
        ("condition:gerd", "用户有胃食道逆流"),
    ]


def test_an_allergy_to_a_medicine_said_with_it_first() -> None:
    found = _facts("医生说别嘌醇换成非布司他，别嘌醇我过敏起疹子了")
    assert ("allergy:allopurinol", "用户对别嘌醇过敏") in found
    assert "medication:febuxostat" in [slot for slot, _ in found]
    assert _said("我对布洛芬过敏") == [("allergy:ibuprofen", "布洛芬", False)]


def _whens(*turns: str) -> dict[str | None, str | None]:
    return {c.slot: (c.when.text if c.when else None) for c in candidates(*turns)}


def test_a_state_is_dated_by_the_time_of_its_own_clause() -> None:
    whens = _whens("我老婆Lily怀孕了，预产期是六月，她对芒果过敏")
    assert whens["allergy:lily/mango"] is None  # June is the due date, not the allergy's
    assert _whens("Last Friday, I moved to Berlin.")["residence"] == "Last Friday"
    assert _whens("上周五，我搬到了杭州")["residence"] == "上周五"
    assert _whens("我跟林晓分手了 上周的事")["partner"] == "上周"  # said in the clause beside


def test_a_job_change_and_a_move_are_no_trips_and_a_stay_is_no_place() -> None:
    slots = _whens("我上个月跳槽去了蚂蚁，做senior PM")
    assert slots == {"employer": "上个月", "job": "上个月"}  # the job began then too
    assert ("job", "用户是senior PM") in _facts("我上个月跳槽去了蚂蚁，做senior PM")
    assert [s for s, _ in _facts("十月去了京都，玩了五天")] == ["trip:京都"]


def test_a_move_to_come_is_a_plan_and_a_move_made_a_home() -> None:
    assert _facts("我们下个月搬去杭州，离公司近一点") == [
        ("plan:搬去杭州", "用户打算下个月搬去杭州")
    ]
    assert [s for s, _ in _facts("我搬到杭州了")] == ["residence"]


def test_an_activity_stopped_with_a_word_between() -> None:
    assert ("routine:羽毛球", "用户停了羽毛球") in _facts("羽毛球最近不打了，带娃没时间")


def test_a_drink_said_without_a_verb_is_the_speakers_and_said_plainly() -> None:
    assert _facts("headaches for 3 days then fine. matcha in the morning now, mara got me a whisk")[
        -1
    ] == ("drink:green tea", "The user drinks matcha")
    assert _facts("staying strong tho, matcha only") == [
        ("drink:green tea", "The user only drinks matcha")
    ]
    assert _facts("the weather now") == []


def test_a_spouse_s_state_of_the_body_and_the_medicine_the_doctor_gave_them_are_theirs() -> None:
    assert _facts("我老伴血压高，医生让他吃氨氯地平，他老是忘") == [
        ("partner", "用户的老伴"),
        ("condition:老伴/hypertension", "用户的老伴血压高"),
        ("medication:老伴/amlodipine", "用户的老伴在用氨氯地平"),
    ]


def test_a_medicine_the_doctor_says_to_stop_and_a_condition_healed() -> None:
    assert _facts("医生说甲巯咪唑可以停了") == [("medication:甲巯咪唑", "用户停了甲巯咪唑")]
    assert _facts("我有甲亢，每天吃甲巯咪唑", "甲亢复查好了")[-1] == (
        "condition:thyroid condition",
        "用户的甲亢已经好了",
    )


def test_about_to_retire_is_no_retirement_and_an_age_said_this_year_is_one() -> None:
    found = dict(_facts("你好，我姓刘，今年58，在郑州一家医院当护士长，快退休了"))
    assert found["age"] == "用户58岁" and found["job"] == "用户是护士长"
    assert "life:退休" not in found
    assert dict(_facts("六月底正式退休了！"))["job"] == "用户六月底正式退休了！"


def test_a_medicine_taken_off_or_stopped_as_it_ends_and_a_negative_test_ends_an_allergy() -> None:
    found = _facts("the GP took me off the amlodipine and I'm on losartan now")
    assert ("medication:amlodipine", "The user no longer takes amlodipine") in found
    found = _facts("The metformin upset my stomach, so I stopped it and now I take Jardiance")
    assert ("medication:metformin", "The user no longer takes metformin") in found
    assert ("medication:empagliflozin", "The user takes Jardiance") in found  # said plainly
    [tested] = candidates("上次做了过敏原检测 芒果是阴性 削了皮吃就没事")
    assert (tested.slot, tested.ended) == ("allergy:mango", "")  # it ends the mango allergy
    assert _facts("no more ventolin, its symbicort now")[0] == (
        "medication:salbutamol",
        "The user no longer takes ventolin",
    )


def test_a_sport_with_no_more_ends_and_a_breakup_said_without_its_subject() -> None:
    assert ("routine:futsal", "The user has given up futsal") in _facts(
        "Physio says no more futsal. So Ben and I started badminton, Wednesday nights"
    )
    assert _facts("no more excuses") == []
    [(slot, _)] = _facts("跟林晓分手了 上周的事")
    assert slot == "partner"


def test_stopped_it_ends_no_medicine_it_does_not_name() -> None:
    found = _facts("I take warfarin every day. The cream gave me a rash so I stopped it.")
    assert ("medication:blood thinners", "The user takes warfarin every day.") in found
    assert not [
        c
        for c in candidates("I take warfarin. The cream gave me a rash so I stopped it.")
        if c.ended is not None
    ]
