"""Health states said the way people say them: a condition without "I have" (it comes on, a
doctor names it, it heads an elliptical clause), a medicine carried, prescribed or swapped, a
food one cannot eat, and whose they are. Never the user's when the sentence is about someone
else, never a medicine that is an activity, a hospital stay or visit that is no home or trip."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.api import Memory
from memstrata.curate.frame_reader import frames_in
from memstrata.model import Role, Scope, Turn
from tests.conftest import FixedClock
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
    assert ("routine:badminton", "用户停了羽毛球") in _facts("羽毛球最近不打了，带娃没时间")


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
    assert _facts("医生说甲巯咪唑可以停了") == [("medication:methimazole", "用户停了甲巯咪唑")]
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


@pytest.mark.parametrize(
    ("said", "slot"),
    [
        # an allergy said by the reaction it gives
        ("Shellfish gives me hives.", "allergy:shellfish"),
        ("Penicillin makes me break out in a rash.", "allergy:penicillin"),
        ("I react badly to latex.", "allergy:latex"),
        # a diet kept, a medicine after a transplant
        ("I keep halal, so no pork or alcohol in recipes.", "diet"),
        (
            "I had a kidney transplant, so I'm on immunosuppressants.",
            "medication:immunosuppressants",
        ),
        # a condition said with nothing but 我 before it, by its months, in Latin letters
        ("我甲亢，在吃甲巯咪唑。", "condition:thyroid condition"),
        ("我甲亢，在吃甲巯咪唑。", "medication:methimazole"),
        ("我怀孕五个月了。", "condition:pregnancy"),
        ("我有 type 2 diabetes，在吃 metformin。", "condition:diabetes"),
        ("我有 type 2 diabetes，在吃 metformin。", "medication:metformin"),
    ],
)
def test_the_everyday_ways_a_health_need_is_said_are_read(said: str, slot: str) -> None:
    assert slot in [s for s, _ in _facts(said)]


@pytest.mark.parametrize(
    "said", ["My job gives me hives lol", "The kids make me itch", "我有 iPhone"]
)
def test_a_figure_of_speech_or_a_thing_owned_is_no_health_need(said: str) -> None:
    assert [s for s, _ in _facts(said) if s] == []


@pytest.mark.parametrize(
    ("said", "slot", "value"),
    [
        # what a doctor or a therapist says must not be done, in English and Chinese
        (
            "The doctor says I mustn't lift anything heavy for six weeks.",
            "restriction:lift anything",
            "not to lift anything heavy for six weeks",
        ),
        ("Physio says no running for 6 weeks.", "restriction:running", "no running for 6 weeks"),
        (
            "I'm not allowed to fly until after the scan.",
            "restriction:fly",
            "not to fly until after the scan",
        ),
        ("医生让我三个月别提重物", "restriction:提重物", "别提重物"),
        ("医生说 28 周以后最好不要长途飞行", "restriction:长途飞行", "最好不要长途飞行"),
        ("医生说吃华法林期间别做剧烈运动", "restriction:做剧烈运动", "别做剧烈运动"),
        # breastfeeding, in either language
        (
            "I'm breastfeeding, so I have to check every medicine.",
            "condition:breastfeeding",
            "breastfeeding",
        ),
        ("我在喂奶，吃药要注意", "condition:breastfeeding", "喂奶"),
        ("我在 breastfeeding，所以吃药还是要小心", "condition:breastfeeding", "breastfeeding"),
    ],
)
def test_a_restriction_and_breastfeeding_are_safety_needs(said: str, slot: str, value: str) -> None:
    from tests.unit.said import candidates

    found = {c.slot: c.value for c in candidates(said)}
    assert found.get(slot) == value


def test_a_doctors_word_that_comforts_or_names_a_medicine_or_stops_a_habit_is_no_restriction() -> (
    None
):
    for said in (
        "医生说别担心 没什么大问题",
        "医生说别嘌醇不吃了，换成非布司他",
        "医生说羽毛球以后也别打了",
    ):
        assert not [s for s, _ in _facts(said) if s and s.startswith("restriction")]


def test_the_continued_words_of_a_doctor_are_restrictions_too() -> None:
    found = [s for s, _ in _facts("医生说别久坐 别弯腰搬重物")]
    assert found == ["restriction:久坐", "restriction:弯腰搬重物"]


@pytest.mark.parametrize(
    ("said", "slot"),
    [
        # a chat leaves out its "I'm", names the allergy first, or says it by what is avoided
        ("allergic to penicillin btw", "allergy:penicillin"),
        ("also allergic to latex", "allergy:latex"),
        ("Peanut allergy here, so be careful with recipes.", "allergy:peanut"),
        ("I have a severe allergy to sesame.", "allergy:sesame"),
        ("no nuts for me, I'm the epipen kind of allergic", "allergy:tree nut"),
        ("nuts are a no-go for me, anaphylactic", "allergy:tree nut"),
        ("can't do dairy, it wrecks my stomach", "avoids:milk"),
        ("gotta avoid shellfish, last time I ended up in A&E", "avoids:shellfish"),
        ("I'm T1D, on an insulin pump", "condition:diabetes"),
        ("I'm intolerant to gluten.", "condition:gluten intolerance"),
        ("I'm recovering from knee surgery.", "condition:knee surgery"),
        ("I've got a bad back so I can't lift heavy stuff", "condition:back pain"),
        ("我 allergic to peanuts", "allergy:peanut"),
        ("海鲜我碰不得，一吃就过敏", "allergy:shellfish"),
        ("我吃不了辣，胃受不了", "avoids:spicy food"),
        ("降压药一天一片，早上吃", "medication:blood pressure medication"),
        ("我有过敏性鼻炎", "condition:allergic rhinitis"),
    ],
)
def test_a_safety_need_said_the_way_a_chat_says_it_is_read(said: str, slot: str) -> None:
    assert slot in [s for s, _ in _facts(said)]


def test_the_value_of_an_allergy_leaves_the_chats_fillers_out() -> None:
    from tests.unit.said import candidates

    assert [c.value for c in candidates("allergic to penicillin btw") if c.slot] == ["penicillin"]


@pytest.mark.parametrize(
    "said",
    [
        "I'm recovering from a breakup",
        "这药一天三次",
        "我不是对虾子过敏",
    ],
)
def test_no_safety_need_is_read_where_none_is_said(said: str) -> None:
    found = [s for s, _ in _facts(said) if s and not s.startswith("allergy:shrimp")]
    assert not [
        s for s in found if s.split(":")[0] in ("condition", "medication", "avoids", "allergy")
    ]


def test_a_restriction_said_for_a_while_leaves_l1_when_its_time_is_over(
    memory: Memory, clock: FixedClock
) -> None:
    said = datetime(2026, 2, 10, 9, tzinfo=UTC)
    turns = ["Physio says no running for 6 weeks.", "医生让我三个月别提重物"]
    woken = {}
    for user, day in (
        ("march", datetime(2026, 3, 1, tzinfo=UTC)),
        ("april", datetime(2026, 4, 20, tzinfo=UTC)),
    ):
        clock.value = day
        memory.remember([Turn(text=t, role=Role.USER, time=said) for t in turns], Scope(user))
        memory.extract(Scope(user))
        memory.consolidate(Scope(user))
        woken[user] = memory.wake_up(Scope(user)).text
    [running] = [
        f
        for f in memory.list(Scope("march"), "fact")
        if getattr(f, "slot", None) == "restriction:running"
    ]
    assert running.when is not None and running.when.text == "for 6 weeks"
    assert running.when.end.date().isoformat() == "2026-03-25"
    assert "no running" in woken["march"] and "别提重物" in woken["march"]
    # six weeks on, the running one is over; three months on, the lifting one is not yet
    assert "no running" not in woken["april"] and "别提重物" in woken["april"]


def test_a_length_of_time_is_no_medicine_and_a_condition_ends_where_its_name_does() -> None:
    """ "开了十四年" (a shop open fourteen years) names no medicine, though 开了 is how a
    prescription is said; "是糖尿病前期 叫我注意": the condition is 糖尿病前期, not what the
    doctor said next."""
    shop = candidates("在春熙路那边开了个服装店 开了十四年了 要是去三亚就得把店转出去")
    assert not [c for c in shop if c.slot and c.slot.startswith("medication")]
    assert ("medication:allopurinol", "别嘌醇") in [
        (c.slot, c.value) for c in candidates("医生给我开了别嘌醇")
    ]
    said = candidates("上个月体检医生还说我血糖有点高 是糖尿病前期 叫我注意")
    assert ("condition:prediabetes", "糖尿病前期") in [(c.slot, c.value) for c in said]
    assert "用户有糖尿病前期" in [c.text for c in said]


def test_a_correction_of_a_childs_allergy_is_theirs_and_the_test_result_names_the_new_one() -> None:
    """ "乐乐其实不是花生过敏，过敏原检测出来是腰果和开心果，花生没事": every clause is 乐乐's, the
    peanut allergy ends, the cashew and pistachio one is read from the test; the name the
    user gave is the child's key ("我儿子乐乐花生过敏" is 乐乐's, not "儿子"'s)."""
    said = [
        (c.slot, c.value, c.ended is not None)
        for c in candidates(
            "我儿子乐乐今年七岁",
            "我儿子乐乐花生过敏，很严重",
            "纠正一下，乐乐其实不是花生过敏，过敏原检测出来是腰果和开心果，花生没事",
        )
        if c.slot and c.slot.startswith("allergy")
    ]
    assert said == [
        ("allergy:乐乐/peanut", "花生", False),
        ("allergy:乐乐/peanut", "花生", True),
        ("allergy:乐乐/cashew+pistachio", "腰果和开心果", False),
    ]
    mine = [(c.slot, c.ended is not None) for c in candidates("我其实不是花生过敏")]
    assert mine == [("allergy:peanut", True)]
