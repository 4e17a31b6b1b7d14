"""The fact-quality detectors, in English and Chinese, on sentences like the ones extraction
produced from LoCoMo and from hand-written Chinese conversations."""

from __future__ import annotations

import pytest

from memstrata.curate.quality import (
    addresses_listener,
    assess,
    broken_verb,
    dangling_referent,
    is_question,
)


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("It's special to Melanie.", "Melanie"),
        ("they keep Melanie motivated.", "Melanie"),
        ("Yup, we just did it yesterday!", None),
        ("Here's a pic John snapped during one of our practices.", "John"),
        ("Melanie loves it so much.", "Melanie"),
        ("Melanie loves it so much.", None),
        ("Caroline thinks this is great!", "Caroline"),
        ("That was so fun for Caroline.", "Caroline"),
        ("These really help John stay centered.", "John"),
        ("Lately Jon has been networking and it's gotten Jon some good stuff.", "Jon"),
        ("Absolutely, it means a lot and keeps Joanna going.", "Joanna"),
        ("Lin Wei很喜欢这个。", "Lin Wei"),
        ("它让Lin Wei很放松。", "Lin Wei"),
        ("他们周末也会来。", "Lin Wei"),
        ("我们昨天刚去过。", None),
    ],
)
def test_dangling_referents_are_found(text: str, subject: str | None) -> None:
    assert dangling_referent(text, subject)


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("Melanie painted a lake sunrise last year and it holds special meaning.", "Melanie"),
        ("Melanie's kids are excited and they want to go camping.", "Melanie"),
        ("Caroline is reading this book about adoption.", "Caroline"),
        ("Caroline is thankful for this amazing community - it's shown her a lot.", "Caroline"),
        ("These critters also make Nate appreciate life's little joys.", "Nate"),
        ("Those people inspire Caroline.", "Caroline"),
        ("Melanie adopted a puppy named Max last week.", "Melanie"),
        ("Nature totally inspires Joanna and it's so calming.", "Joanna"),
        ("Lin Wei养了一只猫，它很可爱。", "Lin Wei"),
        ("Lin Wei喜欢这个城市的夜景。", "Lin Wei"),
        ("下个月Lin Wei打算去爬黄山。", "Lin Wei"),
    ],
)
def test_named_referents_are_not_dangling(text: str, subject: str | None) -> None:
    assert not dangling_referent(text, subject)


@pytest.mark.parametrize(
    "text",
    [
        "Caroline love that you chose pottery for your art.",
        "Melanie is so happy for you.",
        "Thanks, Caroline appreciates it, you're a great friend!",
        "Lin Wei觉得你的画真好看。",
        "Lin Wei祝您一路顺风。",
    ],
)
def test_the_listener_addressed_is_found(text: str) -> None:
    assert addresses_listener(text)


@pytest.mark.parametrize(
    "text",
    [
        "Melanie loves camping with her family.",
        "Lin Wei是一名后端工程师。",
        "Young people love it.",
    ],
)
def test_no_listener_in_a_fact_about_a_person(text: str) -> None:
    assert not addresses_listener(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What got Caroline into painting?", True),
        ("Have you been to the beach lately?", True),
        ("Lin Wei去过黄山吗", True),
        ("Lin Wei的猫叫什么？", True),
        ("Melanie ran a charity race last Saturday.", False),
        ("Lin Wei周末去爬了梧桐山。", False),
    ],
)
def test_questions(text: str, expected: bool) -> None:
    assert is_question(text) is expected


@pytest.mark.parametrize(
    "text",
    [
        "The user love hiking in the mountains.",
        "Melanie love camping trips with Melanie's fam.",
        "Caroline love that you chose pottery for your art.",
        "Lin Wei really love hiking in the mountains.",
        "Sure, Melanie think it is great.",
        "Caroline went to the park and Melanie enjoy the view.",
        "Jon got a temp job to help cover expenses while Jon look for investors.",
    ],
)
def test_broken_verbs_are_found(text: str) -> None:
    assert broken_verb(text)


@pytest.mark.parametrize(
    "text",
    [
        "Melanie loves camping with her family.",
        "Melanie and Caroline love camping.",
        "Melanie's kids love the beach.",
        "They love the new house.",
        "Caroline wants to work in counseling.",
        "Melanie will love the new park.",
        "Lin Wei喜欢爬山。",
        "Taking care of yourself helps Maria be strong.",
        "Feeling like it's an uphill battle is tough for John.",
    ],
)
def test_agreeing_verbs_are_not_broken(text: str) -> None:
    assert not broken_verb(text)


@pytest.mark.parametrize(
    ("text", "subject", "expected"),
    [
        ("Things have been great since we last talked - Tim has been reading.", "Tim", False),
        ("Stuff like this mural are really special to Caroline!", "Caroline", False),
        ("Whenever Caroline hear this jam, Caroline think about the paths.", "Caroline", True),
        ("When things get tough, John try to remember why.", "John", True),
        ("Lin Wei really love hiking in the mountains.", "Lin Wei", True),
    ],
)
def test_a_known_subject_is_the_only_name(text: str, subject: str, expected: bool) -> None:
    assert broken_verb(text, subject) is expected


def test_assess_combines_the_detectors() -> None:
    flaws = assess("Caroline love that you chose pottery for your art.", "Caroline")
    assert (flaws.dangling, flaws.listener, flaws.question, flaws.broken_verb) == (
        False,
        True,
        False,
        True,
    )
    assert flaws.any
    assert not assess("Melanie adopted a puppy named Max last week.", "Melanie").any


@pytest.mark.parametrize(
    ("text", "dangling"),
    [
        ("Yeah the user's parents are there", True),  # a place the fact does not name
        ("The user went there last year", True),
        ("There is a park nearby", False),  # existential
        ("knowing there's people who understand their work means a lot", False),
        ("The user's sister lives in Victoria and the user can sleep there", False),
        ("The user's friends are out there somewhere", False),
    ],
)
def test_there_stands_for_a_place_only_when_one_is_named(text: str, dangling: bool) -> None:
    from memstrata.curate.quality import dangling_referent

    assert dangling_referent(text) is dangling


def test_extraction_files_no_fact_whose_there_names_no_place() -> None:
    from tests.unit.said import facts

    assert facts("Yeah my parents are there, my sister is moving back for it.") == []
    kept = facts("My parents live in Ottawa and I visit them there every summer.")
    assert kept and all("Ottawa" in text for _, text in kept)
