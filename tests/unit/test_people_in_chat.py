"""The people of a user's life as chats speak of them: a relation and its name ("My wife is
Niamh"), kin called by what they are in lower case ("mam is on warfarin"), a fragment that goes
on about the person the sentence before spoke of, a named person's allergy, a Chinese sentence
about someone else whose every clause is theirs; and the words around them that are no state
("跟我們住 for good", "比想像中好喝", words in quotes)."""

from __future__ import annotations

import pytest

from memstrata.curate.person import third_person
from memstrata.curate.safety_net import health_matter
from tests.unit.said import SAID_AT, candidates


def _states(*turns: str) -> set[tuple[str | None, str | None]]:
    return {(c.slot, c.value) for c in candidates(*turns)}


def _slots(*turns: str) -> set[str]:
    return {c.slot for c in candidates(*turns) if c.slot}


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("My wife is Niamh.", ("partner", "wife Niamh")),
        ("Wife is Niamh, she's 40 in October.", ("partner", "wife Niamh")),
        ("my wife's name is niamh", ("partner", "wife niamh")),
        ("My son is called Cian.", ("child:Cian", "son Cian")),
        ("My daughter is Aoife, she's 14.", ("child:Aoife", "daughter Aoife")),
    ],
)
def test_a_relation_and_the_name_it_is_given(text: str, state: tuple[str, str]) -> None:
    assert state in _states(text)


@pytest.mark.parametrize(
    "text", ["My wife is Chinese.", "My wife is tired.", "My wife is American."]
)
def test_what_a_relation_is_said_to_be_is_no_name(text: str) -> None:
    assert not any(" " in (value or "") for slot, value in _states(text) if slot == "partner")


@pytest.mark.parametrize(
    ("turns", "state"),
    [
        (("mam is on warfarin",), ("medication:mam/blood thinners", "warfarin")),
        (
            ("speaking of mam. she's 78, lives on her own. on warfarin for her heart, the afib.",),
            ("medication:mam/blood thinners", "warfarin"),
        ),
        (
            ("my dad is 80. takes metformin and a statin.",),
            ("medication:dad/metformin", "metformin"),
        ),
        (
            ("my mum is 80. she's on warfarin for her heart.",),
            ("medication:mum/blood thinners", "warfarin"),
        ),
    ],
)
def test_kin_in_lower_case_and_the_fragment_that_goes_on_about_them(
    turns: tuple[str, ...], state: tuple[str, str]
) -> None:
    assert state in _states(*turns)


def test_a_fragment_after_someone_elses_news_stays_the_speakers() -> None:
    slots = _slots("My sister called. Still on the sertraline, 50mg.")
    assert not any(slot.startswith("medication:sister") for slot in slots)


def test_a_named_persons_allergy_is_theirs_and_said_by_their_name() -> None:
    made = candidates(
        "cian's allergic to strawberries btw so the hotel buffet would need watching."
    )
    allergy = [c for c in made if (c.slot or "").startswith("allergy:")]
    assert [(c.slot, c.text) for c in allergy] == [
        ("allergy:cian/strawberry", "Cian is allergic to strawberries")
    ]
    assert not any(
        (slot or "").startswith("allergy")
        for slot, _ in _states("Everyone's allergic to something.")
    )


@pytest.mark.parametrize(
    ("text", "state"),
    [
        (
            "im hooked on audiobooks now, niamh put me onto them.",
            ("like:audiobooks", "hooked on audiobooks"),
        ),
        ("guinness 0.0 now, honestly cant tell the difference", ("drink:beer", "guinness 0.0")),
        ("also off the pints since the blood pressure thing.", ("drink:beer", "beer")),
        ("I'm on warfarin for my heart.", ("medication:blood thinners", "warfarin")),
    ],
)
def test_what_a_chat_says_it_drinks_likes_and_takes(text: str, state: tuple[str, str]) -> None:
    assert state in _states(text)


@pytest.mark.parametrize(
    ("text", "present", "absent"),
    [
        (
            "我妈跟我住 今年78了 高血压好多年了 每天早上一片硝苯地平缓释片 我得盯着她吃",
            {"condition:妈/hypertension", "medication:妈/硝苯地平"},
            {"age"},
        ),
        (
            "我妈上个月又摔了一下 还好没骨折 现在出门得坐轮椅了 昆明那边你得帮我找能推轮椅的地方",
            {"accessibility:妈/wheelchair"},
            {"accessibility:wheelchair"},
        ),
        (
            "我妈的药换了 上周三带她去复查 医生说硝苯地平让她脚脖子肿 换成氨氯地平了 5毫克",
            {"medication:妈/amlodipine", "medication:妈/硝苯地平"},
            {"medication:amlodipine", "medication:硝苯地平"},
        ),
        (
            "Mom 的 cardiologist 把她從 warfarin 換成 Eliquis, 5 mg 一天兩次.",
            {"medication:mom/blood thinners"},
            {"medication:blood thinners"},
        ),
    ],
)
def test_a_chinese_sentence_about_someone_else_is_theirs(
    text: str, present: set[str], absent: set[str]
) -> None:
    slots = _slots(text)
    assert present <= slots
    assert not (absent & slots)


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("我高血压好多年了", ("condition:hypertension", "高血压")),
        ("我每天早上一片硝苯地平缓释片", ("medication:硝苯地平", "硝苯地平")),
    ],
)
def test_chinese_said_as_chats_say_it(text: str, state: tuple[str, str]) -> None:
    assert state in _states(text)


@pytest.mark.parametrize(
    ("text", "slot"),
    [
        ("1/10 之後她就跟我們住 for good", "residence"),
        ("My mom 現在住 Cupertino 跟我哥 Eric 一起.", "family"),
        ("Also 我超討厭香菜, please no cilantro 哈哈 not allergy, just 討厭", "allergy:coriander"),
        ("自己 cold brew 無糖烏龍, 放冰箱, 下午倒一杯. honestly 比想像中好喝", "plan"),
    ],
)
def test_words_around_a_state_that_are_none(text: str, slot: str) -> None:
    assert not any(s == slot or s.startswith(f"{slot}:") for s in _slots(text))


def test_words_in_quotes_stay_as_said() -> None:
    assert third_person('She said "I am done with this" and I laughed.', "The user") == (
        'She said "I am done with this" and the user laughed.'
    )
    told = [c.text for c in candidates("Jerry 的學生送他一個 mug, 上面寫 'I teach chemistry, ok'")]
    assert not any("teaches chemistry" in t for t in told)


def test_a_latin_word_beside_chinese_characters_is_a_whole_word() -> None:
    assert health_matter("还要带Ventolin在书包里急用") is not None


@pytest.mark.parametrize(
    ("turns", "present", "absent"),
    [
        (
            ("turns out it's cashews I'm allergic to, not peanuts.",),
            {("allergy:cashew", "cashews"), ("allergy:peanut", "peanuts")},
            {("allergy:cashew+peanut", "cashews, not peanuts")},
        ),
        (
            (
                "cian's allergic to strawberries btw",
                "cian had the tests done. it's actually kiwi he's allergic to, not strawberries.",
            ),
            {("allergy:cian/kiwi", "kiwi")},
            set(),
        ),
        (
            ("It's really my sister who is allergic to cats.",),
            {("allergy:sister/cats", "cats")},
            {("family:cats", "sister cats")},
        ),
    ],
)
def test_an_allergy_said_with_the_allergen_first(
    turns: tuple[str, ...], present: set[tuple[str, str]], absent: set[tuple[str, str]]
) -> None:
    states = _states(*turns)
    assert present <= states
    assert not (absent & states)


def test_the_allergen_an_allergy_is_not_ends_it() -> None:
    made = candidates(
        "cian's allergic to strawberries btw",
        "cian had the tests. it's actually kiwi he's allergic to, not strawberries.",
    )
    assert any(c.slot == "allergy:cian/strawberry" and c.ended is not None for c in made)
    assert any(c.slot == "allergy:cian/kiwi" and c.ended is None for c in made)


@pytest.mark.parametrize(
    ("text", "home"),
    [
        ("We're moving to Boulder in June.", "Boulder"),
        ("and we're moving into ratoath in two weeks, keys on the 29th.", "ratoath"),
    ],
)
def test_a_move_on_a_date_said_is_the_home_from_then(text: str, home: str) -> None:
    made = [c for c in candidates(text) if c.slot == "residence"]
    assert [c.value for c in made] == [home]
    assert made[0].when is not None and made[0].when.start > SAID_AT  # from then, not before


@pytest.mark.parametrize(
    "text", ["We're thinking of moving to Leeds next year.", "We're moving to Leeds eventually."]
)
def test_a_move_not_decided_is_a_plan_only(text: str) -> None:
    assert "residence" not in _slots(text)


@pytest.mark.parametrize(
    ("text", "value"), [("So 我把 boba 戒了", "boba"), ("我把咖啡戒了", "咖啡")]
)
def test_a_drink_given_up_with_ba_is_the_drink(text: str, value: str) -> None:
    assert any(slot.startswith("drink:") and v == value for slot, v in _states(text))


def test_a_name_before_apostrophe_s_is_the_name() -> None:
    assert ("family:gerry", "brother gerry") in _states(
        "my brother gerry's having a barbecue saturday, he always burns the sausages"
    )


def test_a_wish_someone_else_said_is_no_plan_of_the_speakers() -> None:
    assert not any(
        s.startswith("plan") for s in _slots("老周说过年想换个新电视 我说家里那个还能看")
    )
    assert "plan:换工作" in _slots("我打算明年换工作")
