"""Mixed Chinese and English as users write it: the speaker's Chinese "I" before English words
is read as the English clause it stands for, and the English and Chinese readers stop where
the other language's clause begins."""

from __future__ import annotations

import pytest

from memstrata.curate.code_switch import english_reading
from memstrata.curate.frame_reader import frames_in
from tests.unit.said import candidates, facts


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("我 shellfish allergy，每次都好紧张", "I have a shellfish allergy"),
        ("我做 ICU nurse 在 St Paul's，五年了", "I work as ICU nurse at St Paul's"),
        ("我现在是 data scientist at Grab", "I'm a data scientist at Grab"),
        ("我是 diabetic", "I'm diabetic"),
        ("我 just started at Shopify", "I just started at Shopify"),
        ("我 vegetarian 已经三年了", "I'm vegetarian"),
        ("我有 EpiPen", "I have EpiPen"),
    ],
)
def test_the_speakers_chinese_i_before_english_words_reads_as_english(
    text: str, reading: str
) -> None:
    assert english_reading(text) == reading


@pytest.mark.parametrize(
    "text", ["我的 doctor 说要复查", "我们 moved to Melbourne", "我老公 Ben 是 dentist", "我很好"]
)
def test_no_english_reading_without_the_speaker_as_its_subject(text: str) -> None:
    assert english_reading(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("想叫外卖 but 我 shellfish allergy，每次都好紧张", ("allergy:shellfish", "shellfish")),
        ("我 sesame allergy 好严重", ("allergy:sesame", "sesame")),
        ("我做 software engineer 在 Shopee", ("employer", "Shopee")),
        ("我做 ICU nurse 喺 St Paul's，五年了", ("job", "ICU nurse")),
        ("我係 pharmacist", ("job", "pharmacist")),
        ("我 moved to Toronto last month", ("residence", "Toronto")),
        ("我 just started at Shopify", ("employer", "Shopify")),
        ("我 vegetarian 已经三年了", ("diet", "vegetarian")),
        ("我 work at Google 做 PM", ("employer", "Google")),
        ("我现在是 data scientist at Grab", ("job", "data scientist")),
        ("我 have asthma，所以跑步要小心", ("condition:asthma", "asthma")),
        ("我 take metformin every morning", ("medication:metformin", "metformin")),
        ("我自己 celiac，所以 gluten 完全不能碰", ("condition:celiac disease", "celiac")),
        ("我做 accountant 十几年了", ("job", "accountant")),
    ],
)
def test_a_mixed_state_of_the_speaker_is_read(text: str, expected: tuple[str, str]) -> None:
    assert expected in [(c.slot, c.value) for c in candidates(text)]


def test_an_english_conjunction_ends_a_chinese_plan() -> None:
    said = facts("想叫外卖 but 我 shellfish allergy")
    [plan] = [text for slot, text in said if slot and slot.startswith("plan")]
    assert "allergy" not in plan and "but" not in plan


def test_an_allergy_after_but_is_read() -> None:
    """A clause that opens with "but" (as the mixed reading of "… but 我 shellfish allergy"
    does) is no allergen named "but I have a shellfish"."""
    [allergy] = frames_in("but I have a shellfish allergy")
    assert (allergy.kind, allergy.key) == ("allergy", "shellfish")


@pytest.mark.parametrize(
    "text", ["上个礼拜同 Kevin 分咗手", "我跟阿杰分了手，两个礼拜前", "去年我跟他离了婚"]
)
def test_a_break_up_with_its_verb_split_ends_the_partner(text: str) -> None:
    [ended] = [c for c in candidates(text) if c.slot == "partner"]
    assert ended.ended is not None


@pytest.mark.parametrize("text", ["我妹跟男朋友分手了", "我同事跟男朋友分手了", "我同学结婚了"])
def test_someone_elses_break_up_is_not_the_speakers(text: str) -> None:
    assert not [c for c in candidates(text) if c.slot == "partner"]


@pytest.mark.parametrize(
    ("text", "employer", "job"),
    [
        ("Got the offer!! Stripe, start March 3.", "Stripe", None),
        ("拿到 offer 了！Shopee 的 data analyst，下个月 start", "Shopee", "data analyst"),
    ],
)
def test_an_offer_got_then_who_made_it_and_a_start_is_the_employer(
    text: str, employer: str, job: str | None
) -> None:
    read = {c.slot: c.value for c in candidates(text) if c.slot}
    assert read.get("employer") == employer and read.get("job") == job


@pytest.mark.parametrize("text", ["Got the offer! Mum is so happy.", "拿到 offer 了！Mum 好开心"])
def test_an_offer_without_a_start_names_no_employer(text: str) -> None:
    assert "employer" not in {c.slot for c in candidates(text)}


@pytest.mark.parametrize(
    ("text", "left"),
    [
        ("Last shift at St Mike's is Dec 20.", "St Mike's"),
        ("VGH last shift 是 12月20", "VGH"),
        ("我在腾讯的 last day 是周五", "腾讯"),
    ],
)
def test_a_last_day_or_shift_at_a_place_ends_the_employer(text: str, left: str) -> None:
    [ended] = [c for c in candidates(text) if c.slot == "employer"]
    assert ended.ended == left


@pytest.mark.parametrize(
    "text",
    ["Last day at the beach!", "Mom's last day of chemo is Friday", "Chemo last day is Friday"],
)
def test_a_last_day_away_from_work_ends_no_employer(text: str) -> None:
    assert not [c for c in candidates(text) if c.slot == "employer"]


def test_an_er_nurse_is_a_job_and_a_visit_to_the_er_no_trip() -> None:
    read = [(c.slot, c.value) for c in candidates("我做 ER nurse 在 VGH，三年了")]
    assert ("job", "ER nurse") in read and ("employer", "VGH") in read
    assert not [c for c in candidates("I'm an ER nurse at St Mike's.") if c.rule == "health-said"]
    visit = candidates("上个礼拜去了 ER，doctor 说是 kidney stone")
    assert not [c for c in visit if c.slot and c.slot.startswith("trip")]
