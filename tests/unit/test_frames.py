"""Frames: the states of a life read from what a person says, in English, Chinese and mixed."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memstrata.curate.extract_rules import RuleExtractor, capital_i, chat_spelling
from memstrata.curate.frame_reader import frames_in
from memstrata.curate.frames import Frame, complete, importance, passing
from memstrata.model import Episode, Role, Scope


def _states(text: str, earlier: list[Frame] | None = None) -> list[tuple[str, str, str]]:
    marks = []
    for f in frames_in(text, earlier or []):
        mark = "not" if f.negated else "only" if f.exclusive else ""
        marks.append((f.slot, f.value, mark))
    return marks


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            "I'm Lin Wei, a product manager at Tencent in Shenzhen.",
            [
                ("name", "Lin Wei", ""),
                ("job", "product manager", ""),
                ("employer", "Tencent in Shenzhen", ""),
            ],
        ),
        ("I'm severely allergic to shellfish.", [("allergy:shellfish", "shellfish", "")]),
        ("I'm only allergic to shrimp", [("allergy:shrimp", "shrimp", "only")]),
        ("We moved from Shenzhen to Ningde last week.", [("residence", "Ningde", "")]),
        ("I'm an assistant manager", [("job", "assistant manager", "")]),
        ("I quit my job at Google", [("employer", "Google", "not")]),
        (
            "I'm a nurse at St Mary's Hospital",
            [("job", "nurse", ""), ("employer", "St Mary's Hospital", "")],
        ),
        (
            "I have type 2 diabetes and take metformin twice a day",
            [
                ("condition:diabetes", "type 2 diabetes", ""),
                ("medication:metformin", "metformin", ""),
            ],
        ),
        ("I never eat pork.", [("avoids:pork", "pork", "")]),
        ("I use a wheelchair", [("accessibility:wheelchair", "wheelchair", "")]),
        ("I don't like coffee anymore", [("drink:coffee", "coffee", "not")]),
        ("I've completely gone off coffee", [("drink:coffee", "coffee", "not")]),
        ("My dog Max is 3", [("pet:Max", "dog Max", "")]),
        (
            "The Kyoto trip is postponed to October.",
            [("plan:kyoto", "Kyoto trip, postponed to October", "")],
        ),
        ("I go running every morning at 6:30.", [("routine:running", "go running", "")]),
        (
            "apparently I'm NOT lactose intolerant, the breath test was normal",
            [("condition:lactose intolerance", "lactose intolerant", "not")],
        ),
        ("I'm learning German now", [("language:German", "German (learning)", "")]),
    ],
)
def test_english_states(said: str, expected: list[tuple[str, str, str]]) -> None:
    assert _states(said) == expected


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("我叫李明", [("name", "李明", "")]),
        (
            "在杭州的阿里巴巴做后端工程师",
            [("job", "后端工程师", ""), ("employer", "杭州的阿里巴巴", "")],
        ),
        ("我对花生过敏", [("allergy:peanut", "花生", "")]),
        ("虾和螃蟹都不能吃，吃了会过敏休克。", [("allergy:crab+shrimp", "虾和螃蟹", "")]),
        ("我现在不喝咖啡了", [("drink:coffee", "咖啡", "not")]),
        ("只喝绿茶", [("drink:green tea", "绿茶", "only")]),
        ("其实螃蟹没问题", [("allergy:crab", "螃蟹", "not")]),
        (
            "我有糖尿病，每天打胰岛素",
            [("condition:diabetes", "糖尿病", ""), ("medication:insulin", "胰岛素", "")],
        ),
        (
            "医生说别嘌醇不吃了，换成非布司他，每天一片40毫克",
            [
                ("medication:febuxostat", "非布司他", ""),
                ("medication:allopurinol", "别嘌醇", "not"),
            ],
        ),
        ("我女儿小雨下个月上小学。", [("child:小雨", "女儿小雨", "")]),
        ("我家养了一只猫，叫咪咪", [("pet:咪咪", "猫，叫咪咪", "")]),
        ("我们十月去了京都，玩得很开心。", [("trip:京都", "十月去了京都，玩得很开心", "")]),
        ("大理推到国庆了", [("plan:大理", "大理，改到国庆", "")]),
        ("我妈住两个月", []),  # for how long, not where
        ("国庆大理定下来了，10月2号飞，玩五天，住在双廊", []),  # a stay on a trip is no home
    ],
)
def test_chinese_states(said: str, expected: list[tuple[str, str, str]]) -> None:
    assert _states(said) == expected


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("我现在武大计算机专业大四", [("school", "武大"), ("major", "计算机")]),
        ("我是北京大学大三的学生", [("job", "学生"), ("school", "北京大学")]),  # no employer
        ("我现在大四", []),
        ("我在北京大学当老师", [("job", "老师"), ("employer", "北京大学")]),
    ],
)
def test_a_year_of_study_names_the_school(said: str, expected: list[tuple[str, str]]) -> None:
    assert [(slot, value) for slot, value, _ in _states(said)] == expected


@pytest.mark.parametrize(
    ("said", "name"),
    [
        ("我是李明", "李明"),
        ("我是小雨", "小雨"),
        ("我是王磊，在杭州上班", "王磊"),
        ("我是王金生", "王金生"),
        ("我是思琪", "思琪"),
        ("我是 Amy", "Amy"),
        ("我是色盲，分不清红绿", None),  # a condition of the lexicon
        ("我是高血压", None),
        ("我是回族，不吃猪肉", None),  # a people
        ("我是汉族", None),
        ("我是金牛座", None),  # a sign
        ("我是党员", None),
        ("我是孕妇", None),
        ("我是路痴", None),
        ("我是新手", None),
        ("我是白领", None),
        ("我是高中生", None),
        ("我是球迷", None),
    ],
)
def test_what_the_speaker_is_is_not_their_name(said: str, name: str | None) -> None:
    names = [value for slot, value, _ in _states(said) if slot == "name"]
    assert names == ([name] if name else [])


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("我对 ibuprofen 过敏，吃了会喘不上气", [("allergy:ibuprofen", "ibuprofen", "")]),
        ("现在住 Tiong Bahru", [("residence", "Tiong Bahru", "")]),
        (
            "还有 Daniel（my husband）想明年四月去 Bali",
            [("partner", "husband Daniel", ""), ("plan:Bali", "去Bali", "")],
        ),
        ("5 月正式转到 McKinsey Singapore office", [("employer", "McKinsey Singapore office", "")]),
        (
            "I work full time (data engineer at shopify, remote, from my place in toronto)",
            [
                ("job", "data engineer", ""),
                ("employer", "shopify", ""),
                ("residence", "toronto", ""),
            ],
        ),
        ("my boyfriend marcus says I'm crazy", [("partner", "boyfriend marcus", "")]),
        ("My husband cooks dinner", [("partner", "husband", "")]),  # "cooks" is no name
        # a chat's own spelling: a date written "nov 3"
        ("I'm starting at culture amp nov 3", [("employer", "culture amp", "")]),
        ("my last day at routefox was friday", [("employer", "routefox", "not")]),
        ("the new place in geelong is tiny", [("residence", "geelong", "")]),
        # a habit given up is not an employer left; an employer left is not a routine
        ("I quit coffee completely, like two weeks ago", [("drink:coffee", "coffee", "not")]),
        ("I quit Routefox last week", [("employer", "Routefox", "not")]),
        ("i quit pilates last month", [("routine:pilates", "pilates", "not")]),
        ("I left my job at the bank in March", [("employer", "bank", "not")]),
        (
            "I've joined a watercolour group at the village hall",
            [("hobby:watercolour", "watercolour group", "")],
        ),
        (
            "The GP replaced the amlodipine with losartan",
            [
                ("medication:amlodipine", "amlodipine", "not"),
                ("medication:losartan", "losartan", ""),
            ],
        ),
        ("I carry an EpiPen everywhere", [("medication:epinephrine", "EpiPen", "")]),
        ("no more excuses, the doctor says I need to exercise", []),  # no medicine named
        ("我停了羽毛球先", [("routine:badminton", "羽毛球", "not")]),
        ("用户停了思力华", [("medication:tiotropium", "思力华", "not")]),
        ("我跟林晓分手了", [("partner", "分手", "not")]),
        # the everyday ways of saying a state
        ("我在深圳定居五年了", [("residence", "深圳", "")]),
        ("我戒烟了", [("routine:吸烟", "吸烟", "not")]),
        ("我自己有高血压", [("condition:hypertension", "高血压", "")]),
        ("I work remotely for a startup in Berlin", [("employer", "startup in Berlin", "")]),
        (
            "I live with my partner Alex in Brooklyn",
            [("residence", "Brooklyn", ""), ("partner", "partner Alex", "")],
        ),
        ("We just had a baby girl, Emma", [("child:Emma", "daughter Emma", "")]),
        ("I got a golden retriever puppy named Max", [("pet:Max", "puppy Max", "")]),
        ("I'm training for a marathon in October", [("goal:run marathon", "run a marathon", "")]),
        (
            "I just started a new job at Stripe as a data scientist",
            [("job", "data scientist", ""), ("employer", "Stripe", "")],
        ),
    ],
)
def test_mixed_and_lower_case_states(said: str, expected: list[tuple[str, str, str]]) -> None:
    assert _states(said) == expected


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("im allergic to sesame", [("allergy:sesame", "sesame")]),  # "im": "I'm"
        ("yep, starting at culture amp nov 3", [("employer", "culture amp")]),  # no subject
        ("ive been living in geelong since may", [("residence", "geelong")]),
    ],
)
def test_a_chat_that_drops_the_apostrophe_or_the_subject_is_still_the_first_person(
    said: str, expected: list[tuple[str, str]]
) -> None:
    episode = Episode(
        "ep_1", Scope("u"), "chat", "s1", None, Role.USER, said, datetime(2026, 1, 5, tzinfo=UTC)
    )
    found = RuleExtractor().extract([episode]).candidates
    assert [(c.slot, c.value) for c in found if c.slot] == expected


def test_an_elliptical_update_reads_the_turn_it_is_part_of() -> None:
    shrimp = frames_in("I'm only allergic to shrimp")
    assert _states("crab is fine", shrimp) == [("allergy:crab", "crab", "not")]
    turn = "allergist results!! it's only cashew and pistachio. almonds walnuts all fine"
    assert [
        (f.slot, f.exclusive) for f in frames_in("it's only cashew and pistachio", [], "", turn)
    ] == [("allergy:cashew+pistachio", True)]


@pytest.mark.parametrize(
    "said",
    [
        "I'm really grateful to have a job I enjoy every day",  # "every day" is no object
        "Sometimes I even use it when I'm playing games with friends",
        "I love it",
        "I hope so",
        "I'm off to do some taekwondo!",
        "Reminds me it's important to cultivate a loving environment for our kids.",
    ],
)
def test_what_points_away_or_names_nothing_is_no_state(said: str) -> None:
    """A value must stand on its own: no pronoun, no time alone, no phrase cut open."""
    episode = Episode(
        "ep_1", Scope("u"), "chat", "s1", "Nate", Role.USER, said, datetime(2024, 5, 1, tzinfo=UTC)
    )
    assert [c for c in RuleExtractor().extract([episode]).candidates if c.slot] == []


def test_complete_values_and_passing_moments() -> None:
    assert complete("CATL") and complete("husband 王磊") and complete("阿里巴巴")
    assert not complete("Tencent in") and not complete("goes to") and not complete("这个")
    assert not complete("their dog") and not complete("a")
    assert passing("I'm gonna head out soon") and passing("今晚要加班") and passing("groceries")
    assert not passing("I'm moving to Ningde next month")
    plan = Frame("plan", "grab dinner tonight", "dinner")
    assert importance(plan, "I'm going to grab dinner tonight") == 0.2
    assert importance(Frame("allergy", "shrimp", "shrimp"), "…") == 0.95


def test_the_lower_case_i_of_a_chat_is_the_first_person() -> None:
    assert capital_i("ok so i need a plan. i'm vegan, i.e. fine") == (
        "ok so I need a plan. I'm vegan, i.e. fine"
    )
    assert capital_i("im tired, ive been up since 5. ill go") == (
        "I'm tired, I've been up since 5. ill go"
    )
    assert chat_spelling("turns out its only sesame, dont worry, thats it") == (
        "turns out it's only sesame, don't worry, that's it"
    )
    assert chat_spelling("the dog wagged its tail") == "the dog wagged its tail"  # possessive


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=400))
def test_extraction_never_raises_on_any_text(text: str) -> None:
    episode = Episode(
        "ep_1",
        Scope("u"),
        "chat",
        "s1",
        "user",
        Role.USER,
        text or " ",
        datetime(2026, 1, 1, tzinfo=UTC),
    )
    for candidate in RuleExtractor().extract([episode]).candidates:
        assert candidate.text.strip()
        assert candidate.slot is None or len(candidate.slot) <= 200


def test_a_run_on_turn_of_thousands_of_characters_is_no_value() -> None:
    text = "I live in " + "mount pleasant " * 3000
    episode = Episode(
        "ep_1", Scope("u"), "chat", "s1", "user", Role.USER, text, datetime(2026, 1, 1, tzinfo=UTC)
    )
    for candidate in RuleExtractor().extract([episode]).candidates:
        assert candidate.value is None or len(candidate.value) <= 120


def test_a_run_on_clause_is_said_plainly_and_a_state_is_dated_only_by_its_own_words() -> None:
    said = (
        "I drink far too much tea, builder's, six cups a day at least, the GP said my blood "
        "pressure was up again last month and she's put me on amlodipine, 5mg"
    )
    episode = Episode(
        "ep_1", Scope("u"), "chat", "s1", None, Role.USER, said, datetime(2025, 6, 3, tzinfo=UTC)
    )
    texts = {c.slot: c.text for c in RuleExtractor().extract([episode]).candidates}
    assert texts["medication:amlodipine"] == "The user takes amlodipine"
    carer = "I look after my husband Ron who has Parkinson's, he was diagnosed four years ago"
    episode = Episode(
        "ep_2", Scope("u"), "chat", "s1", None, Role.USER, carer, datetime(2025, 6, 3, tzinfo=UTC)
    )
    found = {c.slot: c for c in RuleExtractor().extract([episode]).candidates}
    assert found["partner"].when is None  # the diagnosis is four years old, not the marriage


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        # a home said in the everyday ways: how long one has lived there, a room bought, "this"
        ("但我在上海住了十几年了", [("residence", "上海", "")]),
        ("我到广州一个多月啦 住在闺女家 海珠区", [("residence", "广州", "")]),
        ("在三亚湾买了个两室一厅 二手的", [("residence", "三亚湾", "")]),
        ("香港这个flat小得可怜 but 楼里有pool", [("residence", "香港", "")]),
        ("metrotown 呢间屋好细", [("residence", "metrotown", "")]),
        # no home: a verb whose result 住 is, a stay that ends, someone else's home, an opinion
        ("没事，年轻人扛得住哈哈", []),
        ("现在住月子中心 住到二月底", []),
        ("对了上回我说闺女住天河区", []),
        ("我觉得这房子太贵", []),
    ],
)
def test_a_chinese_home_is_where_the_speaker_lives_not_a_stay_nor_another_persons(
    said: str, expected: list[tuple[str, str, str]]
) -> None:
    assert _states(said) == expected


def test_a_greeting_from_where_one_has_been_for_weeks_is_a_home_a_trips_is_not() -> None:
    from tests.unit.said import facts

    moved = "Hello from Tucson! We've been here a little over a month now. The house is unpacked."
    assert ("residence", "The user lives in Tucson") in facts(moved)
    trip = "Hello from Lisbon! We've been here two days and the hotel is lovely."
    assert not [slot for slot, _ in facts(trip) if slot == "residence"]
    # a move wished for is no home ("if 我有日 move 返香港，一定要住西贡")
    wished = facts("if 我有日 move 返香港，一定要住西贡，近海")
    assert not [slot for slot, _ in wished if slot == "residence"]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        # a drink named first and then given up; someone's advice is not what one drinks
        ("茉莉花茶我也不喝了", [("drink:tea", "茉莉花茶", "not")]),
        ("啤酒干脆戒了", [("drink:beer", "啤酒", "not")]),
        ("闺女说广州天气燥 让我喝菊花茶", []),
        (
            "医生说吃止痛药期间别喝酒",
            [("medication:painkillers", "止痛药", ""), ("drink:alcohol", "酒", "not")],
        ),
        # an activity stopped as the doctor says, or not done for long; one taken up instead
        ("医生说羽毛球以后也别打了", [("routine:badminton", "羽毛球", "not")]),
        ("篮球好久没打了", [("routine:basketball", "篮球", "not")]),
        ("改游泳了 一周两三次", [("routine:swimming", "游泳，一周两三次", "")]),
        # a medicine stopped at once is no medicine named 马上; one taken as a child is not taken
        ("马上停了", []),
        ("我小时候吃磺胺的药也起过疹子", []),
        ("说是磺胺过敏", [("allergy:sulfa drugs", "磺胺", "")]),
        # a plan known by what it is, not by its holiday or its adverb
        ("国庆日本也不去了", [("plan:日本", "日本，取消了", "not")]),
        ("刚入职请不了假", []),  # what follows joining is no employer
    ],
)
def test_chinese_changes_of_habit_medicine_and_plan(
    said: str, expected: list[tuple[str, str, str]]
) -> None:
    assert _states(said) == expected


def test_a_state_is_told_in_the_speakers_own_clause_not_in_the_advice_given_them() -> None:
    from tests.unit.said import facts

    said = "茉莉花茶我也不喝了 闺女说广州天气燥 让我喝菊花茶 我喝了一阵觉得挺好 现在天天喝菊花茶"
    told = dict(facts(said))
    assert told["drink:herbal tea"] == "用户喝菊花茶"
    assert told["drink:tea"] == "用户不再喝茉莉花茶"


def test_a_wish_says_nothing_from_its_if_on_but_what_comes_before_it_stands() -> None:
    from tests.unit.said import candidates, facts

    said = candidates(
        "我在成都住了一辈子 在春熙路那边开了个服装店 要是去三亚就得把店转出去 舍不得哦"
    )
    assert [(c.slot, c.value) for c in said if c.slot == "residence"] == [("residence", "成都")]
    english = facts("I live in Paris, but if I moved to Rome I would learn Italian")
    assert [slot for slot, _ in english if slot] == ["residence"]
    assert facts("If I ever move to Canada, I will get a dog") == []


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        # a job and where it is, in the ways a person says them
        ("Started my new role as head of design last week.", [("job", "head of design")]),
        (
            "I teach history at the local high school.",
            [("job", "history teacher"), ("employer", "local high school")],
        ),
        ("I've been at Deloitte for three years now.", [("employer", "Deloitte")]),
        ("My new job is at a startup called Routefox.", [("employer", "Routefox")]),
        ("I'm a stay-at-home mum now.", [("job", "stay-at-home mum")]),
        ("我换工作了，去了阿里。", [("employer", "阿里")]),
        # a bond begun or ended: the partner the clause ends is not kept beside the end
        ("He proposed last night and I said yes!", [("partner", "engaged")]),
        ("我们领证了！", [("partner", "结婚")]),
        ("My boyfriend and I broke up last month.", [("partner", "broke up")]),
        # not a job, not an employer
        ("I've been at the gym for two hours", []),
        ("换工作以后 周末去爬山", [("routine:hiking", "周末去爬山")]),
    ],
)
def test_work_and_bonds_said_the_everyday_way(said: str, expected: list[tuple[str, str]]) -> None:
    from tests.unit.said import candidates

    assert [(c.slot, c.value or "") for c in candidates(said) if c.slot] == expected


def test_a_bond_said_without_a_name_takes_the_partners_name() -> None:
    from tests.unit.said import candidates

    said = candidates(
        "my boyfriend marcus says i'm crazy for running in january lol",
        "and marcus proposed on saturday!!!!! we're engaged",
    )
    assert [(c.slot, c.value) for c in said if c.slot] == [
        ("partner", "boyfriend marcus"),
        ("partner", "engaged to marcus"),
    ]
    assert [c.value for c in candidates("I proposed to mara on saturday!!!") if c.slot] == [
        "engaged to mara"
    ]
    [married] = [
        c for c in candidates("我男朋友叫王磊", "我们领证了！") if c.value == "结婚（王磊）"
    ]
    assert married.text == "用户和王磊结婚了"


def test_a_clause_without_its_subject_after_someone_else_is_theirs() -> None:
    from tests.unit.said import candidates

    said = candidates(
        "过年我们打算带乐乐回山东烟台看我妈 我妈今年九十了 想重外孙想得不行 闺女说早点走"
    )
    assert [c.slot for c in said if c.slot] == ["plan:带乐乐回山东烟台"]


def test_a_chinese_diet_is_said_in_the_words_given() -> None:
    from tests.unit.said import candidates

    assert [(c.value, c.text) for c in candidates("医生让我控糖") if c.slot == "diet"] == [
        ("控糖", "用户控糖")
    ]


@pytest.mark.parametrize(
    ("value", "told"),
    [
        ("passionate about dance and fashion", "Gina is passionate about dance and fashion"),
        ("a big fan of jazz", "Gina is a big fan of jazz"),
        ("love hiking", "Gina loves hiking"),
    ],
)
def test_a_liking_said_with_to_be_is_told_with_is_not_as_a_verb(value: str, told: str) -> None:
    from memstrata.curate.statements import statement

    assert statement(Frame("like", value, "x"), "Gina", chinese=False) == told
