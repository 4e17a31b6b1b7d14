"""The offline extractor keeps only self-contained statements and rewrites them grammatically.

Examples are sentences said in LoCoMo conversations (and the issue that reported them) and
hand-written Chinese ones; each filter and each rewrite rule has its own cases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memstrata.curate.discourse import (
    addresses_listener,
    dangling,
    is_question,
    self_contained,
    strip_markers,
)
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.curate.person import agree, third_person
from memstrata.ids import new_id
from memstrata.model import Episode, Role, Scope


def _episode(text: str, speaker: str | None) -> Episode:
    return Episode(
        new_id("ep"),
        Scope("s"),
        "chat",
        "s1",
        speaker,
        Role.USER,
        text,
        datetime(2024, 5, 1, tzinfo=UTC),
    )


def _facts(text: str, speaker: str | None = "Melanie") -> list[str]:
    return [c.text for c in RuleExtractor().extract([_episode(text, speaker)]).candidates]


@pytest.mark.parametrize(
    "text",
    [
        "Thanks!",
        "Yup, we just did it yesterday!",
        "哈哈太好了",
        "Wow, that's great!",
        "谢谢！",
        "I'm doing OK, thanks.",
        "I've been doing great!",
        "我最近挺好的。",
    ],
)
def test_reactions_and_small_talk_leave_nothing(text: str) -> None:
    assert self_contained(text) == []
    assert _facts(text) == []


def test_leading_markers_and_vocatives_are_stripped() -> None:
    assert strip_markers("Woah Joanna, I won an international tournament yesterday!") == (
        "I won an international tournament yesterday!"
    )
    assert strip_markers("Oh Melanie, when I paint I feel calm.") == "when I paint I feel calm."
    assert strip_markers("哈哈，我上周去了海边。") == "我上周去了海边。"
    assert strip_markers("And btw - I have been working hard on my online store.") == (
        "I have been working hard on my online store."
    )
    assert strip_markers("Don't worry, I won't let anything get me down.") == (
        "I won't let anything get me down."
    )
    assert strip_markers("What can I say, I love turtles.") == "I love turtles."
    assert strip_markers("First of all, I moved to Leeds in May.") == "I moved to Leeds in May."
    assert strip_markers("Secondly, I quit coffee.") == "I quit coffee."
    assert strip_markers("On another note, I just upgraded my equipment.") == (
        "I just upgraded my equipment."
    )
    assert _facts("Yeah, I started a pottery class last week.") == [
        "Melanie started a pottery class last week."
    ]


def _unresolved(text: str) -> bool:
    return dangling(strip_markers(text))


_QUESTIONS = (
    "Have you ever been to a pottery class?",
    "What a beautiful painting you made!",
    "你周末去爬山了吗",
    "你最近在忙什么呢。",
)
_ABOUT_THE_LISTENER = (
    "I love that you chose pottery for your art.",
    "I'm so proud of you for spreading awareness.",
    "I'll make sure to keep you updated.",
    "我真为你骄傲。",
    "我喜欢您的画。",
)
_UNRESOLVED = (
    "It's special to me.",
    "They keep me motivated.",
    "I love it!",
    "That's a memory I'll never forget.",
    "I chose them 'cause they help LGBTQ+ folks with adoption.",
    "I have watched a bunch of them.",
    "Yeah, I love to.",
    "I'm getting there, Caroline.",
    "I went there with my sister last year.",
    "I'm hoping so.",
    "We had so much fun making them together.",
    "我们一起去了海边。",
    "这个我很喜欢。",
    "他们让我很感动。",
)


@pytest.mark.parametrize(
    ("flaw", "text"),
    [(is_question, text) for text in _QUESTIONS]
    + [(addresses_listener, text) for text in _ABOUT_THE_LISTENER]
    + [(_unresolved, text) for text in _UNRESOLVED],
)
def test_questions_words_to_the_listener_and_unresolved_referents_are_not_facts(
    flaw: Callable[[str], bool], text: str
) -> None:
    assert flaw(text)
    assert _facts(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "I got a new puppy and he is so cute.",
        "My sister and her kids came over last weekend.",
        "Painting keeps me calm, it relaxes me.",
        "Max and I had a blast on our camping trip last summer.",
        "I moved to Boston and I love it there.",
        "There is a lake near my house.",
    ],
)
def test_a_pronoun_with_a_noun_before_it_is_resolved(text: str) -> None:
    assert not dangling(text)


@pytest.mark.parametrize(
    "text",
    [
        "Check out this moment I snapped!",
        "Here's a snap of the ice cream I made.",
        "Let me tell you about my trip.",
    ],
)
def test_what_is_said_to_show_or_ask_the_listener_is_dropped(text: str) -> None:
    assert _facts(text, "Nate") == []


def test_a_left_out_subject_is_said_again_before_the_rewrite() -> None:
    assert _facts("Lost my job as a banker yesterday.", "Jon") == [
        "Jon lost their job as a banker yesterday."
    ]
    assert _facts("Dyed my hair last week.", "Nate") == ["Nate dyed their hair last week."]
    assert _facts("Cooking is my favorite hobby.", "Nate") == ["Cooking is Nate's favorite hobby."]


def test_a_short_statement_with_its_object_is_a_fact() -> None:
    assert _facts("Yeah, I play clarinet!") == ["Melanie plays clarinet!"]


def test_a_closing_address_to_the_listener_is_not_part_of_the_fact() -> None:
    assert self_contained("I finished my first painting, Caroline!", ["Caroline"]) == [
        "I finished my first painting!"
    ]
    episodes = [
        _episode("I adopted a third turtle last week.", "Nate"),
        _episode("I love the idea of a turtle tank, Nate!", "Joanna"),
    ]
    facts = [c.text for c in RuleExtractor().extract(episodes).candidates]
    assert facts == [
        "Nate adopted a third turtle last week.",
        "Joanna loves the idea of a turtle tank!",
    ]


def test_only_the_self_contained_clauses_of_a_sentence_are_kept() -> None:
    said = (
        "A lot's happened since we last chatted - I just joined a new LGBTQ activist group "
        "last Tues."
    )
    assert _facts(said, "Caroline") == [
        "Caroline just joined a new LGBTQ activist group last Tues."
    ]
    # a clause whose subject stayed in the dropped clause before it is no fact
    assert _facts("It sets goals, tracks my achievements and helps me find areas to improve.") == []
    # "so much" is no clause: the sentence is not cut into "I made" before its dangling "it"
    assert _facts("I still can't believe I made so much money from it.") == []
    assert _facts("It was tough, but I'm still painting every weekend.") == [
        "Melanie is still painting every weekend."
    ]


@pytest.mark.parametrize(
    ("verb", "expected"),
    [
        ("love", "loves"),
        ("have", "has"),
        ("am", "is"),
        ("was", "was"),
        ("do", "does"),
        ("go", "goes"),
        ("try", "tries"),
        ("play", "plays"),
        ("watch", "watches"),
        ("fix", "fixes"),
        ("don't", "doesn't"),
        ("can", "can"),
        ("adopted", "adopted"),
        ("need", "needs"),
        ("succeed", "succeeds"),
        ("went", "went"),
    ],
)
def test_verbs_agree_with_a_third_person(verb: str, expected: str) -> None:
    assert agree(verb) == expected


@pytest.mark.parametrize(
    ("sentence", "name", "expected"),
    [
        (
            "I love camping trips with my family",
            "Melanie",
            "Melanie loves camping trips with their family",
        ),
        ("I prefer short answers", "The user", "The user prefers short answers"),
        ("I really enjoy hiking", "Nate", "Nate really enjoys hiking"),
        ("I usually go to the gym", "John", "John usually goes to the gym"),
        ("I try to do my best", "Gina", "Gina tries to do their best"),
        ("I've been painting for years", "Melanie", "Melanie has been painting for years"),
        ("I was nervous at my first play", "Joanna", "Joanna was nervous at their first play"),
        ("my kids love me", "Melanie", "Melanie's kids love Melanie"),
        (
            "Books guide me, motivate me and help me discover who I am.",
            "Caroline",
            "Books guide Caroline, motivate Caroline and help Caroline discover who Caroline is.",
        ),
        (
            "I have two kids and I go running",
            "The user",
            "The user has two kids and the user goes running",
        ),
        (
            "Max and I had a blast on our camping trip last summer.",
            "John",
            "Max and John had a blast on their camping trip last summer.",
        ),
        (
            "I recently read a book that really made a big impact on me",
            "Tim",
            "Tim recently read a book that really made a big impact on Tim",
        ),
        ("I read every night before bed", "Tim", "Tim reads every night before bed"),
        (
            "I have been taking regular me-time walks",
            "Maria",
            "Maria has been taking regular me-time walks",
        ),
        ("What can I say, I love turtles.", "Nate", "What can Nate say, Nate loves turtles."),
        (
            "I'd been wanting to try yoga for a while",
            "John",
            "John had been wanting to try yoga for a while",
        ),
        ("I'd love to visit Kyoto", "John", "John would love to visit Kyoto"),
        ("我喜欢我的狗。", "林伟", "林伟喜欢林伟的狗。"),
        ("我喜欢我的狗。", "The user", "用户喜欢用户的狗。"),
        ("我们去了海边。", "林伟", "我们去了海边。"),
    ],
)
def test_third_person_changes_only_person_and_agreement(
    sentence: str, name: str, expected: str
) -> None:
    assert third_person(sentence, name) == expected


def test_facts_from_the_issue_are_rewritten_grammatically() -> None:
    assert _facts("I love camping trips with my family, 'cause nature brings peace.") == [
        "Melanie loves camping trips with their family, 'cause nature brings peace."
    ]
    assert _facts("Melanie is so happy for you.") == []
    # two states (a job, a child), one fact each, each in the clause that says it
    assert _facts("我在一家医院工作，我的女儿今年五岁。", "林伟") == [
        "林伟在一家医院工作",
        "林伟的女儿今年五岁。",
    ]


def test_a_chinese_conversation_keeps_only_what_stands_alone() -> None:
    turns = [
        ("林伟", "哈哈，那个太好了，我上周去了海边。"),
        ("王芳", "你去海边了吗？"),
        ("林伟", "我们去了公园，我买了一只小狗。"),
        ("王芳", "你画得真好，我也在学画画。"),
        ("王芳", "我最喜欢的运动是游泳。"),
        ("林伟", "它真可爱。"),
    ]
    episodes = [_episode(text, speaker) for speaker, text in turns]
    facts = [(c.subject, c.text) for c in RuleExtractor().extract(episodes).candidates]
    assert facts == [
        ("林伟", "林伟上周去了海边。"),
        ("林伟", "林伟去了公园，林伟买了一只小狗。"),  # 我们去了: a deed the speaker did
        ("王芳", "王芳也在学画画。"),
        ("王芳", "王芳最喜欢的运动是游泳。"),
    ]


def test_a_reason_stands_without_its_because_and_a_clause_of_when_is_no_fact() -> None:
    from tests.unit.said import facts

    told = [
        text
        for _, text in facts("I'm starting a dance studio 'cause I'm passionate about dancing.")
    ]
    assert "The user is passionate about dancing." in told
    assert not [t for t in told if t.lower().startswith(("'cause", "cause", "because"))]
    later = facts(
        "It's been tough going since I lost my job, but I'm sure my business will pay off."
    )
    assert not [t for _, t in later if t.lower().startswith("since")]


def test_a_run_on_sentence_is_read_a_run_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """What :func:`self_contained` reads grows with the sentence, not with its square: a
    run-on of thousands of clauses (an attacker's, or a paste) is read in bounded runs."""
    from memstrata.curate import discourse

    read: list[int] = []
    shaped = discourse.is_fact_shaped

    def counted(sentence: str) -> bool:
        read.append(len(sentence))
        return shaped(sentence)

    monkeypatch.setattr(discourse, "is_fact_shaped", counted)

    def cost(times: int) -> int:
        read.clear()
        discourse.self_contained("is it normal that my asthma and my Lexapro and my cat " * times)
        return sum(read)

    small, large = cost(100), cost(400)
    assert large <= 5 * small  # four times the text: about four times the reading, not 16


def test_each_i_of_a_run_on_sentence_is_agreed_reading_only_the_words_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The third-person rewrite reads a window before each "I", so its work grows with the
    sentence, not with its square; what it writes is unchanged."""
    from memstrata.curate import person

    read: list[int] = []

    class Counted:
        def __init__(self, pattern: re.Pattern[str]) -> None:
            self.pattern = pattern

        def search(self, text: str, *args: int) -> re.Match[str] | None:
            read.append(len(text))
            return self.pattern.search(text, *args)

    monkeypatch.setattr(person, "_INVERTED", Counted(person._INVERTED))

    def cost(times: int) -> int:
        read.clear()
        said = third_person("I went to the shop and I bought milk and " * times, "Ann")
        assert said.startswith("Ann went to the shop and Ann bought milk")
        return sum(read)

    assert cost(400) <= 5 * cost(100)
