"""A health matter said in words no state frame reads is kept as a health note, never lost:
what names one, what a note keeps of its sentence, whose it is, and where L1 serves it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.api import Memory
from memstrata.curate.safety_net import health_matter
from memstrata.model import Category, Role, Scope, Turn
from tests.unit.said import candidates


@pytest.mark.parametrize(
    ("sentence", "matter"),
    [
        ("Ron takes metformin with breakfast", "metformin"),
        ("the GP has put the losartan up to 50mg", "losartan"),
        ("allergy season is killing me", "allergy"),
        ("my GP says to rest it, easy runs only", "said"),
        ("his drinks stay thickened, mildly thick", "care"),
        ("医生说半月板有点磨损", "said"),
        ("晚上还要吸氧八个钟头", "care"),
        ("我最近在吃二甲双胍", "metformin"),
        ("我对酒精不耐受", "intolerance"),
        ("I break out in hives whenever I eat strawberries", "reaction"),
        ("Dairy wrecks my stomach, so I skip the cheese", "reaction"),
        ("Peanuts make my throat swell up", "reaction"),
        ("我一吃芒果嘴就肿", "reaction"),
        ("吃了辣的就会胃疼", "reaction"),
        ("last time I ended up in the ER", "care"),
        ("My A1C came back at 7.2", "measure"),
        ("我血糖有点高", "measure"),
        ("I've been sober for three years now", "sobriety"),
        ("Doctor 说我 cholesterol 太高了", "measure"),
        ("Doctor 说我要多走路", "said"),
        ("我左耳听力不太好", "hearing"),
        ("我右眼视力不太好", "vision"),
        ("I've had two panic attacks this month", "anxiety"),
        ("开始吃 statin", "statins"),
        ("I have a pacemaker, so no MRI", "care"),
        ("I sleep with a CPAP machine", "care"),
        ("我爸装了起搏器", "care"),
        ("Garlic and onion don't agree with me at all", "reaction"),
        ("My partner Sam is type 2 and watches his carbs", "condition"),
        ("我爸心脏不好", "heart condition"),
        ("我这腰不行了", "back pain"),
        ("我奶奶耳朵不好", "hearing"),
        ("我怀二胎了", "pregnancy"),
        ("医生话系早期", "said"),
        ("I've got lupus so I stay out of the sun", "condition"),
        ("I have fibromyalgia, some days I can't get out of bed", "condition"),
        ("I have psoriasis on my elbows", "condition"),
        ("I have MS, diagnosed in 2019", "condition"),
        ("I've got a blood clot in my leg", "condition"),
        ("I'm immunocompromised after the transplant", "condition"),
        ("he had a reaction at nursery", "reaction"),
        ("我得了带状疱疹，疼死了", "condition"),
        ("我有红斑狼疮", "condition"),
        ("我做过肾移植", "condition"),
        ("我得过乳腺癌", "condition"),
        ("我耳鸣好几年了", "condition"),
    ],
)
def test_what_names_a_health_matter(sentence: str, matter: str) -> None:
    assert health_matter(sentence) == matter


@pytest.mark.parametrize(
    "sentence",
    [
        "I'm late for a doctor's appointment",
        "今天天气不错，我们去海边走走",
        "The operation team shipped the release on Friday",
        "I patched the fence this weekend",
        "That was a rash decision",
        "I almost threw up watching that movie",
        "I stayed sober to drive us home",
        "我们吃完饭就吐槽了一下老板",
        "我刚吃了饭就去跑步",
        "ERROR: the build failed",
        "Let's break out into groups",
        "我买了个手机支架",
        "I'm a dog walker on weekends",
        "This is a type 2 error",
        "I tried hypnosis once for fun",
        "I have a diploma in design",
        "I have NASA stickers on my laptop",
        "我有点炎热难耐",
        "电脑中病毒了",
        "我这人有个毛病，爱迟到",
        "今天有点热",
    ],
)
def test_small_talk_names_none(sentence: str) -> None:
    assert health_matter(sentence) is None


def _notes(*texts: str) -> list[str]:
    return [c.text for c in candidates(*texts) if c.rule == "health-said"]


def test_a_health_matter_no_frame_reads_is_a_health_fact_in_the_speakers_words() -> None:
    said = candidates("广场舞不跳了 膝盖受不了 医生说半月板有点磨损 叫我别蹦别爬山")
    [note] = [c for c in said if c.rule == "health-said"]
    assert note.category == Category.HEALTH and note.slot is None and note.value is None
    assert (
        note.text == "广场舞不跳了 膝盖受不了 医生说半月板有点磨损 叫用户别蹦别爬山"
    )  # short: whole
    # a long one: the clause that names it, what the doctor said after it, the one before
    [long] = _notes(
        "今天降温了 早上去菜市场买了点排骨 回来路上又买了两斤橘子 膝盖受不了 医生说半月板有点磨损 "
        "叫我别蹦别爬山 晚上炖汤"
    )
    assert long == "膝盖受不了 医生说半月板有点磨损 叫用户别蹦别爬山"
    [english] = _notes("Speaking of, my iron came back super low, my doctor wants me eating eggs.")
    assert "the user" in english and "doctor wants the user eating eggs" in english


def test_a_note_leaves_out_the_clauses_that_ask() -> None:
    assert _notes("三亚的房子租好了 在三亚湾 十月二十五号的飞机 制氧机能不能带上飞机嘛") == []
    [note] = _notes(
        "五一我打算带我爸妈去日本 大阪京都那边 他们俩还没出过国 "
        "帮我想想行程 我爸膝盖做过手术 别安排爬坡爬楼的"
    )
    assert note == "用户爸膝盖做过手术 别安排爬坡爬楼的"


@pytest.mark.parametrize(
    "text",
    [
        "Do you know if ibuprofen is safe with my meds?",  # a question
        "If I ever need surgery I'd go private",  # a hypothetical
        "你帮我给老周写个用药的单子嘛",  # a request to the listener
        "My colleague had surgery last week, he's off until May",  # not this household's
        "朋友说她对花生过敏",  # a friend's
        "The nurse said the weather will be nice.",  # no first person, nobody named
    ],
)
def test_no_note_from_what_is_not_a_health_state_of_the_household(text: str) -> None:
    assert _notes(text) == []


def test_a_state_the_frames_read_gets_no_second_note() -> None:
    said = candidates("I'm allergic to penicillin.", "我对青霉素过敏。")
    assert [c.rule for c in said if c.category == Category.HEALTH] == ["frame:allergy"] * 2
    assert _notes("I'm allergic to penicillin.") == []


def test_what_the_assistant_says_is_no_note(memory: Memory) -> None:
    scope = Scope("amy")
    memory.remember(
        [
            Turn(
                "Since you're on warfarin, avoid ibuprofen.",
                speaker="assistant",
                role=Role.ASSISTANT,
            ),
            Turn("Thanks, good to know.", speaker="user", role=Role.USER),
        ],
        scope,
    )
    memory.extract(scope)
    assert not [f for f in memory.facts(scope) if f.fact.category == Category.HEALTH]


def test_a_health_note_is_served_in_safety_after_who_the_user_is(memory: Memory) -> None:
    scope = Scope("bev")
    memory.remember(
        [
            Turn("I'm Bev, I live in Ilkley with my husband Ron.", speaker="user", role=Role.USER),
            Turn(
                "Ron had his review with the neurologist yesterday and she's added a patch at "
                "night, rotigotine, Neupro it's called.",
                speaker="user",
                role=Role.USER,
            ),
        ],
        scope,
    )
    memory.extract(scope)
    memory.consolidate(scope)
    text = memory.wake_up(scope).text
    lines = text.splitlines()
    safety = lines.index("## Safety")
    assert "rotigotine" in lines[safety + 1]
    assert any(line.startswith("- residence: Ilkley") for line in lines)
    # at a budget too small for both, who the user is comes before the note
    small = memory.wake_up(scope, budget=80).text
    assert "residence: Ilkley" in small and "rotigotine" not in small


def test_a_note_leaves_out_what_is_said_to_the_listener() -> None:
    [note] = _notes(
        "I look after my husband Ron.",
        "I must correct something I told you, his last co-careldopa isn't at 7, it's at 6, "
        "the neurologist moved it ages ago and I had got muddled.",
    )
    assert "told you" not in note and "co-careldopa isn't at 7" in note


def test_a_hypothetical_is_no_fact_of_any_rule() -> None:
    """ "If I ever win the lottery I'm buying a narrowboat": the generic rules, like the state
    frames, read nothing said as not so."""
    said = candidates(
        "If I ever win the lottery I'm buying a narrowboat and taking Ron up the canal."
    )
    assert said == ()


def test_a_sentence_of_several_health_matters_keeps_what_no_state_read() -> None:
    """A state read from one clause does not silence the health matter of another; a clause
    a state already says is not said again as a note."""
    said = candidates("我儿子乐乐今年七岁，花生过敏，很严重 医生说半月板有点磨损 叫我别蹦别爬山")
    assert ("allergy:乐乐/peanut", "花生") in [(c.slot, c.value) for c in said]
    [note] = [c.text for c in said if c.rule == "health-said"]
    assert "医生说半月板有点磨损 叫用户别蹦别爬山" in note and "花生" not in note
    again = candidates(
        "I'm allergic to penicillin, and my GP says my cholesterol is borderline, started on "
        "rosuvastatin."
    )
    assert [c.rule for c in again] == ["frame:allergy"]  # its line says the rest already


def test_a_chinese_clause_without_its_subject_goes_on_about_the_person_before() -> None:
    said = {
        c.slot: c.text
        for c in candidates("我老公王磊是医生，对青霉素过敏", "我儿子乐乐今年七岁，花生过敏")
        if c.slot and c.slot.startswith("allergy")
    }
    assert said == {
        "allergy:王磊/penicillin": "用户的老公王磊对青霉素过敏",
        "allergy:乐乐/peanut": "用户的儿子乐乐对花生过敏",
    }
    mine = [c.slot for c in candidates("我儿子乐乐今年七岁，我自己对花生过敏") if c.slot]
    assert mine == ["child:乐乐", "allergy:peanut"]


def test_a_note_of_a_medicine_ended_since_leaves_l1(memory: Memory) -> None:
    scope = Scope("gao")
    turns = [
        (
            "血糖控制得还可以 医生说二甲双胍减成一天一次了 早饭后吃",
            datetime(2025, 3, 3, tzinfo=UTC),
        ),
        ("我停了二甲双胍", datetime(2025, 9, 16, tzinfo=UTC)),
    ]
    for n, (text, day) in enumerate(turns):
        memory.remember(
            [Turn(text, speaker="user", role=Role.USER, time=day)], scope, session_id=f"s{n}"
        )
    memory.extract(scope)
    memory.consolidate(scope)
    text = memory.wake_up(scope).text
    assert "减成一天一次" not in text  # the note of the medicine stopped since
    assert "用户停了二甲双胍" in text
    assert any("减成一天一次" in f.fact.text for f in memory.facts(scope))  # still archived


@pytest.mark.parametrize(
    "text",
    [
        "I had knee surgery in June and still can't run.",
        "我去年做了心脏支架手术。",
        "Bee stings are dangerous for me, I had anaphylaxis once.",
    ],
)
def test_a_health_matter_said_as_an_event_is_a_health_fact(text: str) -> None:
    """A sentence a generic rule reads as an event or a statement, and that names a health
    matter, is one health fact at the note's importance, never an event that a budget cuts."""
    said = candidates(text)
    health = [c for c in said if c.category == Category.HEALTH]
    assert len(health) == 1 and health[0].importance >= 0.9
    assert len(said) == 1  # said once, not an event beside a note


@pytest.mark.parametrize(
    "text",
    [
        "We keep kosher at home.",
        "Mum 最近 memory 好差，医生话系早期 dementia。",
        "我女儿 peanut allergy，学校要备 EpiPen。",
    ],
)
def test_a_health_matter_of_the_household_is_kept(text: str) -> None:
    """The household said without a first person ("we ... at home", a parent called Mum),
    and a health matter said inside another kind of state (the daughter named), are health
    facts of their own."""
    assert [c for c in candidates(text) if c.category == Category.HEALTH]


@pytest.mark.parametrize(
    "text",
    [
        "Our team lead had surgery last week, so we are short-staffed.",
        "Our neighbours' family has a kid on dialysis.",
        "Mum says the weather will be nice.",
    ],
)
def test_a_team_a_neighbour_or_small_talk_is_not_the_households_health(text: str) -> None:
    assert [c for c in candidates(text) if c.category == Category.HEALTH] == []


@pytest.mark.parametrize(
    ("text", "slot", "said"),
    [
        (
            "Since I'm allergic to penicillin, what else can I take for a sore throat?",
            "allergy:penicillin",
            "The user is allergic to penicillin",
        ),
        ("I'm celiac, so what pasta brands are safe?", "condition:celiac disease", None),
        ("Given my diabetes, is it ok to have fruit smoothies?", "condition:diabetes", None),
        ("我对青霉素过敏，感冒了能吃什么药？", "allergy:penicillin", "用户对青霉素过敏"),
        ("我怀孕了，哪些水果不能吃？", "condition:pregnancy", None),
        ("I moved to Berlin last month, any tips for meeting people?", "residence", None),
    ],
)
def test_what_a_question_states_before_it_asks_is_a_state(
    text: str, slot: str, said: str | None
) -> None:
    """People state what holds and then ask about it; the asking clause is no fact, what it
    states is, told without the reason word that led into the question."""
    found = {c.slot: c.text for c in candidates(text)}
    assert slot in found
    if said is not None:
        assert found[slot] == said


@pytest.mark.parametrize(
    "text",
    [
        "Do you think I should quit my job, or wait?",
        "Did I tell you I'm vegan, or not?",
        "Is penicillin safe for kids, or should I avoid it?",
        "你觉得我对花生过敏吗？",
    ],
)
def test_a_question_from_its_start_states_nothing(text: str) -> None:
    assert candidates(text) == ()


@pytest.mark.parametrize(
    "text",
    [
        "allergic to penicillin btw",
        "Also: no dairy, lactose intolerant.",
        "Penicillin - can't go near it.",
        "Still on the sertraline, 50mg.",
        "New meds from the GP: lisinopril 10mg.",
        "Off the metformin now, diet controlled.",
        "Wheelchair user, so step-free only.",
        "Still can't eat shellfish, obviously.",
    ],
)
def test_a_chat_fragment_without_its_subject_is_the_speakers(text: str) -> None:
    """English chat leaves out "I" as Chinese does: a fragment naming a health matter, with
    no subject of its own, is the speaker's."""
    assert [c for c in candidates(text) if c.category == Category.HEALTH]


@pytest.mark.parametrize(
    "text",
    [
        "Penicillin is great for infections.",
        "My sister called. Pregnant! 12 weeks today.",  # goes on about the sister
        "Tom's back from the hospital. Still on antibiotics.",
    ],
)
def test_a_sentence_with_a_subject_or_after_someone_else_is_no_fragment_of_the_speaker(
    text: str,
) -> None:
    assert _notes(text) == []


def test_a_note_consolidation_left_out_is_ranked_with_the_key_facts(memory: Memory) -> None:
    """The essentials hold at most six health notes; a seventh that consolidation read and
    left out is no longer served ahead of who the user is, but ranked with the key facts;
    before any consolidation, every note is served under Safety."""
    scope = Scope("notes")
    said = [
        "I live in Leeds with my wife Anna.",
        "My GP says my cholesterol is a bit high.",
        "I had knee surgery in June.",
        "I sleep with a CPAP machine.",
        "My A1C came back at 7.2.",
        "I've been sober for three years now.",
        "I have psoriasis on my elbows.",
        "I've had two panic attacks this month.",
    ]
    for n, text in enumerate(said):
        day = datetime(2025, 1 + n, 3, tzinfo=UTC)
        memory.remember(
            [Turn(text, speaker="user", role=Role.USER, time=day)], scope, session_id=f"s{n}"
        )
    memory.extract(scope)
    notes = ("cholesterol", "knee surgery", "CPAP", "A1C", "sober", "psoriasis", "panic")

    def placed(text: str) -> dict[str, str]:
        heading, where = "", {}
        for line in text.splitlines():
            if line.startswith("## "):
                heading = line[3:]
            for note in notes:
                if note in line:
                    where[note] = heading
        return where

    before = placed(memory.wake_up(scope).text)
    assert set(before.values()) == {"Safety"} and len(before) == len(notes)
    memory.consolidate(scope)
    text = memory.wake_up(scope).text
    after = placed(text)
    assert len(after) == len(notes)  # nothing lost: the budget holds them all
    assert list(after.values()).count("Safety") == 6
    assert list(after.values()).count("Key facts") == 1
    lines = text.splitlines()
    assert lines.index("## Profile") < lines.index("## Key facts")


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("Is it normal that my asthma gets worse in spring?", "condition:asthma", "asthma"),
        ("Does my PCOS mean I should avoid dairy?", "condition:pcos", "PCOS"),
        ("Can I drink on my Lexapro?", "medication:antidepressants", "Lexapro"),
        ("我的哮喘春天会不会加重？", "condition:asthma", "哮喘"),
        ("我这个胃食管反流能不能喝咖啡？", "condition:gerd", "胃食管反流"),
    ],
)
def test_a_condition_or_medicine_called_mine_is_the_speakers_even_in_a_question(
    text: str, slot: str, value: str
) -> None:
    assert (slot, value) in [(c.slot, c.value) for c in candidates(text)]


@pytest.mark.parametrize(
    "text",
    [
        "Is my mom's asthma genetic?",
        "My asthma went away when I moved.",
        "My GP switched my inhaler.",
        "What should I pack for my trip?",
    ],
)
def test_no_state_from_someone_elses_a_past_or_a_generic_medicine(text: str) -> None:
    assert not [c for c in candidates(text) if c.slot]


def test_a_note_keeps_what_a_presupposed_state_does_not_say() -> None:
    said = candidates("Since my ADHD diagnosis I've been on Adderall 20mg.")
    assert ("condition:adhd", "ADHD") in [(c.slot, c.value) for c in said]
    assert any("Adderall 20mg" in c.text for c in said if c.rule == "health-said")


def test_a_condition_asked_about_is_in_safety(memory: Memory) -> None:
    scope = Scope("asked")
    memory.remember(
        [Turn("Is it normal that my asthma gets worse in spring?", speaker="user", role=Role.USER)],
        scope,
    )
    memory.extract(scope)
    memory.consolidate(scope)
    lines = memory.wake_up(scope).text.splitlines()
    assert lines[lines.index("## Safety") + 1].startswith("- The user has asthma")


@pytest.mark.parametrize(
    ("text", "note"),
    [
        ("And my GP switched my inhaler.", "The user's GP switched their inhaler."),
        (
            "Oh and one more medical thing, the GP found my vitamin D low.",
            "The GP found the user's vitamin D low.",
        ),
    ],
)
def test_a_note_leaves_out_what_links_it_to_the_sentence_before(text: str, note: str) -> None:
    assert [c.text for c in candidates(text) if c.rule == "health-said"] == [note]


def test_a_matter_named_with_nothing_said_of_it_is_no_note() -> None:
    assert candidates("allergy update!!") == ()


def test_a_note_of_a_state_closed_since_leaves_l1(memory: Memory) -> None:
    """A note naming only a state that was closed since, with nothing of it held (a pregnancy
    a child's birth closed), is left to the archive, in the essentials and in the facts
    wake_up ranks."""
    scope = Scope("jess")
    said = [
        ("我怀孕了！12 周", datetime(2025, 11, 12, tzinfo=UTC)),
        ("我对青霉素过敏。怀孕本来也不能乱吃药", datetime(2025, 11, 12, 0, 5, tzinfo=UTC)),
        ("Baby 出生啦！！是个女儿，英文名 Chloe", datetime(2026, 7, 20, tzinfo=UTC)),
    ]
    for n, (text, day) in enumerate(said):
        memory.remember(
            [Turn(text, speaker="user", role=Role.USER, time=day)], scope, session_id=f"s{n}"
        )
    memory.extract(scope)
    assert any("怀孕本来" in f.fact.text and f.fact.slot is None for f in memory.facts(scope))
    memory.consolidate(scope)
    text = memory.wake_up(scope).text
    assert "怀孕" not in text and "Chloe" in text
    assert any("怀孕本来" in f.fact.text for f in memory.facts(scope))  # still archived
