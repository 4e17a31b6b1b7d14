"""Chinese and mixed conversations get the same filters and rewrites as English ones.

Each filter (reaction, small talk, question, listener, unresolved referent) and each rewrite
(我 -> the name or 用户, 我的 -> 名字的, 我们 resolved from the turn before) is shown on
hand-written Chinese turns beside an English sentence said in a LoCoMo conversation.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.curate.extract_rules import RuleExtractor
from memstrata.curate.person import third_person
from memstrata.ids import new_id
from memstrata.model import Episode, Role, Scope


def _turns(*said: tuple[str | None, str]) -> list[Episode]:
    return [
        Episode(
            new_id("ep"),
            Scope("s"),
            "chat",
            "s1",
            speaker,
            Role.USER,
            text,
            datetime(2024, 5, 1, tzinfo=UTC),
        )
        for speaker, text in said
    ]


def _facts(*said: tuple[str | None, str]) -> list[tuple[str | None, str]]:
    return [(c.subject, c.text) for c in RuleExtractor().extract(_turns(*said)).candidates]


def _one(text: str, speaker: str | None = "李雷") -> list[str]:
    return [fact for _, fact in _facts((speaker, text))]


# --- filters, in both languages -------------------------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        # reactions and small talk
        "哈哈，太好了！",
        "太棒了，恭喜恭喜！",
        "我最近挺好的。",
        "Wow, that's great!",
        "I'm doing OK, thanks.",
        # questions
        "你周末去哪儿玩了？",
        "我是不是应该换个工作呢",
        "我下周要不要去北京吗",
        "What got you into painting?",
        # the listener
        "你的画真好看，我很喜欢。",
        "我为你感到骄傲。",
        "Caroline, I love that you chose pottery for your art.",
        # unresolved referents
        "这个我很喜欢。",
        "他们让我很感动。",
        "它陪了我十年。",
        "我们上周一起去了海边。",
        "我们聊了很久。",
        "They keep me motivated.",
        "Yup, we just did it yesterday!",
    ],
)
def test_what_is_not_a_fact_leaves_nothing(said: str) -> None:
    assert _one(said) == []


def test_a_reaction_before_a_statement_is_trimmed_in_both_languages() -> None:
    assert _one("哈哈，我上周去了海边。") == ["李雷上周去了海边。"]
    assert _one("Yeah, I started a pottery class last week.", "Melanie") == [
        "Melanie started a pottery class last week."
    ]


def test_a_question_after_a_statement_leaves_the_statement_in_both_languages() -> None:
    assert _one("我上周去了杭州，你去过吗？") == ["李雷上周去了杭州"]
    assert _one("FYI, I finished another pottery project - want to see a pic?", "Melanie") == [
        "Melanie finished another pottery project"
    ]


def test_a_clause_to_the_listener_is_dropped_and_the_rest_kept_in_both_languages() -> None:
    assert _one("你说得对，我下个月开始学游泳。") == ["李雷下个月开始学游泳。"]
    assert _one("You're right, I'm going to a transgender conference this month.", "Caroline") == [
        "Caroline is going to a transgender conference this month."
    ]


# --- rewrites, in both languages --------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "speaker", "fact"),
    [
        ("我是一名护士。", "李雷", "李雷是一名护士。"),
        ("我的女儿今年上小学了。", "李雷", "李雷的女儿今年上小学了。"),
        ("我对花生过敏。", None, "用户对花生过敏。"),
        ("我的老家在成都。", None, "用户的老家在成都。"),
        ("I'm allergic to peanuts.", None, "The user is allergic to peanuts."),
        (
            "I love camping trips with my fam.",
            "Melanie",
            "Melanie loves camping trips with their fam.",
        ),
    ],
)
def test_the_speaker_is_named_without_breaking_the_sentence(
    said: str, speaker: str | None, fact: str
) -> None:
    assert _one(said, speaker) == [fact]


def test_a_word_that_holds_wo_is_left_whole() -> None:
    assert third_person("我一直在学着接纳自我。", "王芳") == "王芳一直在学着接纳自我。"
    assert third_person("我工作起来很忘我。", "王芳") == "王芳工作起来很忘我。"


def test_women_is_resolved_from_the_turn_before_in_both_languages() -> None:
    assert _facts(("王芳", "你家人最近好吗？"), ("李雷", "挺好的，我们上周去了杭州。")) == [
        ("李雷", "李雷和家人上周去了杭州。")
    ]
    assert _facts(
        ("Maria", "What do you enjoy doing with your family?"),
        ("John", "We love climbing, sliding, and playing games."),
    ) == [("John", "John and their family love climbing, sliding, and playing games.")]


def test_women_of_people_in_general_stays_unresolved() -> None:
    assert _facts(("王芳", "你家人最近好吗？"), ("李雷", "我们都应该多陪陪家人。")) == []


# --- mixed conversations --------------------------------------------------------------------


def test_a_mixed_conversation_attributes_each_fact_to_its_speaker() -> None:
    facts = _facts(
        ("Amy", "Hi Wei! I just moved to Shanghai last month."),
        ("王伟", "欢迎！我在上海住了五年了，我很喜欢这里的咖啡馆。"),
        ("Amy", "That's great. My husband works at a bank here."),
        ("王伟", "我上周去了 Costco 买东西，你去过吗？"),
    )
    assert facts == [
        ("Amy", "Amy just moved to Shanghai last month."),
        ("王伟", "王伟在上海住了五年了，王伟很喜欢这里的咖啡馆。"),
        ("Amy", "Amy's husband works at a bank here."),
        ("王伟", "王伟上周去了 Costco 买东西"),
    ]


def test_a_companion_is_not_carried_across_languages() -> None:
    # the listener asked in English; 我们 stays unresolved rather than become 我和my kids
    assert (
        _facts(
            ("Amy", "How are your kids doing?"),
            ("王伟", "我们上周去了动物园。"),
        )
        == []
    )
    assert (
        _facts(
            ("王伟", "你的孩子们还好吗？"),
            ("Amy", "We went to the zoo last week."),
        )
        == []
    )


def test_a_deed_done_told_with_women_is_the_speakers_in_both_languages() -> None:
    assert _one("我们上周去了海边。") == ["李雷上周去了海边。"]
    assert _one("Oh yeah, we went to the beach recently.", "Melanie") == [
        "Melanie went to the beach recently."
    ]
