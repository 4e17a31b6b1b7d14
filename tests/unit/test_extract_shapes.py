"""Which statements the offline extractor takes as facts: plans with a time, statements before a
question, attributes of what is the speaker's, habits, and what something does to the speaker.

English examples are sentences said in LoCoMo conversations; Chinese ones are hand-written.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.curate.discourse import (
    restore_subject,
    self_contained,
    statement_before_question,
)
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.ids import new_id
from memstrata.model import Category, Episode, Role, Scope


def _extract(text: str, speaker: str = "Caroline") -> list[tuple[str, str | None]]:
    episode = Episode(
        new_id("ep"),
        Scope("s"),
        "chat",
        "s1",
        speaker,
        Role.USER,
        text,
        datetime(2024, 5, 1, tzinfo=UTC),
    )
    return [(c.text, c.rule) for c in RuleExtractor().extract([episode]).candidates]


def _facts(text: str, speaker: str = "Caroline") -> list[str]:
    return [text for text, _ in _extract(text, speaker)]


# --- a plan has a time; a promise is not a plan ----------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "I'll do my best to make sure these kids have a safe and loving home.",
        "Thanks, Jon! I'll keep plugging away and stay optimistic.",
        "I'll make sure to spread the word about it.",
        "我会尽力的。",
    ],
)
def test_a_promise_without_a_time_is_not_a_plan(said: str) -> None:
    assert [rule for _, rule in _extract(said)] == []


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        (
            "I'll have to look into shelters near me soon.",
            "Caroline will have to look into shelters near Caroline soon.",
        ),
        (
            "I'm gonna explore more and volunteer at shelters next month.",
            "Caroline is gonna explore more and volunteer at shelters next month.",
        ),
        ("I'm off to go swimming with the kids.", "Caroline is off to go swimming with the kids."),
        ("我下个月要去上海参加会议。", "Caroline下个月要去上海参加会议。"),
    ],
)
def test_a_plan_with_a_time_or_on_its_way_is_a_plan(said: str, fact: str) -> None:
    # a plan read as a state of the speaker's life (what it is known by, when) is a frame's
    [(text, rule)] = _extract(said)
    assert text == fact and rule in ("plan", "frame:plan")


# --- what is stated before a question ------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (
            "FYI, I finished another pottery project - want to see a pic?",
            "I finished another pottery project",
        ),
        ("I love camping, do you?", "I love camping"),
        ("我上周去了杭州，你去过吗？", "我上周去了杭州"),
    ],
)
def test_the_statement_before_a_question_is_kept(said: str, kept: str) -> None:
    assert self_contained(said) == [kept]


@pytest.mark.parametrize(
    "said",
    [
        "Did you know I went to Paris, and it was great?",
        "Since you love art, have you tried pottery?",
        "What's your plan to pitch in?",
        "你知道吗，我上周去了杭州？",
        "你最近怎么样，工作忙吗？",
    ],
)
def test_a_sentence_that_asks_from_its_start_leaves_nothing(said: str) -> None:
    assert self_contained(said) == []


def test_a_question_with_no_break_has_no_statement() -> None:
    assert statement_before_question("Ever been to one?") == ""


# --- attributes of what is the speaker's ---------------------------------------------------


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        (
            "My art is about expressing my trans experience.",
            "Caroline's art is about expressing their trans experience.",
        ),
        (
            "Playing video games and watching movies are my main hobbies.",
            "Playing video games and watching movies are Caroline's main hobbies.",
        ),
        ("我的老家在成都。", "Caroline的老家在成都。"),
        ("画画是我的爱好。", "画画是Caroline的爱好。"),
    ],
)
def test_an_attribute_of_what_is_the_speakers_is_a_fact(said: str, fact: str) -> None:
    assert _extract(said) == [(fact, "attribute")]


def test_a_favourite_said_after_its_value_is_a_favourite_with_its_slot() -> None:
    """ "X is my top pick" and "X is my go-to for Y" name a favourite, as "my favourite Y is X"."""
    assert _extract("Iron Man is my top pick.") == [
        ("Iron Man is Caroline's top pick.", "frame:favorite")
    ]
    assert _extract("Dance is pretty much my go-to for stress relief.") == [
        ("Dance is pretty much Caroline's go-to for stress relief.", "frame:favorite")
    ]


def test_an_attribute_sentence_about_a_pronoun_is_not_one() -> None:
    assert _facts("It is my favorite.") == []
    assert _facts("That was my chance.") == []


# --- habits and what something does to the speaker -----------------------------------------


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        (
            "I mentor a transgender teen just like me.",
            "Caroline mentors a transgender teen just like Caroline.",
        ),
        ("I cherish time with family.", "Caroline cherishes time with family."),
        (
            "I make this yummy honey garlic chicken with roasted veg a lot.",
            "Caroline makes this yummy honey garlic chicken with roasted veg a lot.",
        ),
    ],
)
def test_a_habit_is_a_fact(said: str, fact: str) -> None:
    assert _facts(said) == [fact]


@pytest.mark.parametrize(
    ("said", "fact"),
    [
        (
            "The support group has made me feel accepted and given me courage to embrace myself.",
            "The support group has made Caroline feel accepted and given Caroline courage to "
            "embrace themselves.",
        ),
        ("Family time matters to me.", "Family time matters to Caroline."),
        (
            "I'm thrilled to make a family for kids who need one.",
            "Caroline is thrilled to make a family for kids who need one.",
        ),
        ("画画让我很放松。", "画画让Caroline很放松。"),
    ],
)
def test_what_something_does_to_the_speaker_is_a_fact(said: str, fact: str) -> None:
    assert _extract(said) == [(fact, "attitude")]


# --- words that only look like a past or a plan -----------------------------------------------


@pytest.mark.parametrize(
    "said",
    [
        "I'll reach out if I need anything.",  # "need" is not a past in -ed
        "Thanks, Gina! I won't quit.",  # "won't" is not "won"
        "I'm gonna keep pushing and staying positive.",  # a resolution, not a plan
        "I'm going to keep using my voice to make a change and lift others up.",
    ],
)
def test_a_resolution_or_a_present_need_is_not_an_event_or_a_plan(said: str) -> None:
    assert _facts(said) == []


def test_gonna_be_does_not_lose_its_subject() -> None:
    # "gonna be a great night" was said of the show, not of the speaker
    said = "Gonna be a great night featuring LGBTQ artists."
    assert restore_subject(said) == said
    assert _facts(said) == []


@pytest.mark.parametrize(
    ("said", "restored"),
    [
        ("Vegetarian since uni.", "I'm vegetarian since uni."),
        ("Engaged!", "I'm engaged!"),
        ("Single again.", "I'm single again."),
        ("Still at Google.", "I'm still at Google."),
        ("Back in Toronto for good.", "I'm back in Toronto for good."),
        ("Based in Berlin these days.", "I'm based in Berlin these days."),
        # a passing place, a phrase that opens a sentence, a subject in -ing, a verb of its own
        ("At the park with the kids.", "At the park with the kids."),
        ("In other news, the cat.", "In other news, the cat."),
        ("Painting helps me unwind.", "Painting helps me unwind."),
        ("Single origin coffee is the best.", "Single origin coffee is the best."),
    ],
)
def test_a_state_said_without_im_gets_it(said: str, restored: str) -> None:
    assert restore_subject(said) == restored


# --- more ways of saying an event or a liking ------------------------------------------------


@pytest.mark.parametrize(
    ("said", "rule", "fact"),
    [
        (
            "I've done weight training so far too.",
            "event",
            "Caroline has done weight training so far too.",
        ),
        (
            "I even went out and got a physical copy!",
            "event",
            "Caroline even went out and got a physical copy!",
        ),
        (
            "And nothing too soon, but my colleague Rob invited me to a beginner's yoga class.",
            "event",
            "And nothing too soon, but Caroline's colleague Rob invited Caroline to a beginner's "
            "yoga class.",
        ),
        (
            "Besides writing, I also enjoy reading, watching movies, and exploring nature.",
            "frame:like",
            "Besides writing, Caroline also enjoys reading, watching movies, and exploring nature.",
        ),
        (
            "I'm inspired by chatting to people, volunteering, and listening to music.",
            "preference",
            "Caroline is inspired by chatting to people, volunteering, and listening to music.",
        ),
        ("我去年去过一次日本。", "frame:trip", "Caroline去年去过一次日本。"),
        ("我也喜欢看电影。", "frame:like", "Caroline也喜欢看电影。"),
    ],
)
def test_an_event_or_a_liking_said_another_way_is_a_fact(said: str, rule: str, fact: str) -> None:
    assert _extract(said) == [(fact, rule)]


def test_what_something_does_to_the_speaker_is_a_note_not_a_preference() -> None:
    # a feeling has no object to prefer: it is kept out of the essentials' preferences
    episode = Episode(
        new_id("ep"),
        Scope("s"),
        "chat",
        "s1",
        "Melanie",
        Role.USER,
        "The colors make me feel calm. I love camping trips with my fam.",
        datetime(2024, 5, 1, tzinfo=UTC),
    )
    found = [(c.rule, c.category) for c in RuleExtractor().extract([episode]).candidates]
    assert found == [("attitude", Category.OTHER), ("frame:like", Category.PREFERENCE)]
