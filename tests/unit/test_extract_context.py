"""The offline extractor reads a sentence with the turns before it: who "we" are, leading
markers, left-out subjects and coordinated subjects.

English examples are sentences said in LoCoMo conversations; Chinese ones are hand-written.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memstrata.curate.discourse import (
    dangling,
    restore_subject,
    self_contained,
    strip_markers,
    strip_vocative,
)
from memstrata.curate.extract_rules import RuleExtractor
from memstrata.curate.person import third_person
from memstrata.curate.referents import companion_in, companions, resolve_we
from memstrata.ids import new_id
from memstrata.model import Episode, Role, Scope


def _turns(*said: tuple[str, str], session: str = "s1") -> list[Episode]:
    return [
        Episode(
            new_id("ep"),
            Scope("s"),
            "chat",
            session,
            speaker,
            Role.USER,
            text,
            datetime(2024, 5, 1, tzinfo=UTC),
        )
        for speaker, text in said
    ]


def _facts(*said: tuple[str, str]) -> list[str]:
    return [c.text for c in RuleExtractor().extract(_turns(*said)).candidates]


# --- who "we" are -------------------------------------------------------------------------


def test_we_is_the_companion_named_earlier_in_the_same_turn() -> None:
    facts = _facts(
        (
            "Melanie",
            "My kids are so excited about summer break! We're thinking about going "
            "camping next month.",
        ),
    )
    assert "Melanie and their kids are thinking about going camping next month." in facts


def test_we_is_the_companion_the_listener_named_in_the_turn_before() -> None:
    facts = _facts(
        ("Maria", "What do you enjoy doing with your family?"),
        ("John", "We love climbing, sliding, and playing games."),
    )
    assert facts == ["John and their family love climbing, sliding, and playing games."]


def test_we_is_the_companion_the_speaker_named_in_their_previous_turn() -> None:
    facts = _facts(
        ("John", "It was an awesome day at the park with my kids."),
        ("Maria", "Sounds lovely!"),
        ("John", "We went back the next day."),
    )
    assert "John and their kids went back the next day." in facts


def test_we_doing_something_with_a_companion_is_the_speaker() -> None:
    facts = _facts(
        ("Melanie", "I had a quiet weekend after we went camping with my fam two weekends ago."),
    )
    assert facts == [
        "Melanie had a quiet weekend after Melanie went camping with their fam two weekends ago."
    ]


def test_we_stays_unresolved_when_uncertain() -> None:
    # no companion anywhere before
    assert _facts(("Jon", "Thanks! We do all kinds of dances, from contemporary to hip-hop.")) == []
    # two companions in the nearest context that names any
    assert companion_in([("My son and my husband came along.", True)]) is None
    # we of people in general, of speaker and listener
    assert resolve_we("Together, we can make a real difference.", "my family") == (
        "Together, we can make a real difference."
    )
    assert resolve_we("We both love helping others.", "my team") == "We both love helping others."
    # a third person said before "we" may be one of them
    sentence = "So, I sat with her and we talked."
    assert resolve_we(sentence, "my family") == sentence
    # nor a third person after it: the companion may be the one who is not "we"
    sentence = "We were so lucky he was okay."
    assert resolve_we(sentence, "my son") == sentence
    # two companions in Chinese: no pair is named, but the deed done is still the speaker's
    said = "我老公和我的孩子们都放假了。我们去了海边。"
    assert companion_in([("我老公和我的孩子们都放假了。", True)]) is None
    assert _facts(("Li", said)) == ["Li老公和Li的孩子们都放假了。", "Li去了海边。"]


def test_companions_are_read_from_the_speaker_or_the_listener() -> None:
    assert companions("Here's a pic of my family camping at the beach.") == {"my family"}
    assert companions("Mel and I had a blast.") == {"Mel"}
    assert companions("How are your kids doing?", own=False) == {"my kids"}
    assert companions("How are your kids doing?") == set()


def test_resolution_rewrites_the_first_we_and_leaves_the_rest_to_the_named_group() -> None:
    out = resolve_we("We love it, it brings us closer!", "my family")
    assert out == "I and my family love it, it brings us closer!"
    assert (
        third_person(out, "Melanie") == "Melanie and their family love it, it brings them closer!"
    )
    assert resolve_we("Our one-year-old is so cute, we adore the little guy.", "my wife") == (
        "My one-year-old is so cute, I and my wife adore the little guy."
    )
    assert resolve_we("We were road tripping along the coast.", "Max") == (
        "Max and I were road tripping along the coast."
    )


# --- "it" is a thing, not a person ---------------------------------------------------------


def test_it_does_not_point_back_at_a_person() -> None:
    assert dangling("My family and I love it.")
    assert dangling("I asked my friends and they loved it.")
    assert not dangling("I bought a new camera and I love it.")


# --- leading markers ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        (
            "Actually, I just took my fam camping in the mountains last week.",
            "I just took my fam camping in the mountains last week.",
        ),
        ("Thankfully, my son's ok.", "my son's ok."),
        ("FYI, I finished another pottery project.", "I finished another pottery project."),
        ("其实，我上个月换了工作。", "我上个月换了工作。"),
        ("对了，我下周去北京出差。", "我下周去北京出差。"),
    ],
)
def test_leading_markers_are_trimmed(said: str, kept: str) -> None:
    assert strip_markers(said) == kept


def test_a_marker_word_that_starts_the_sentence_proper_stays() -> None:
    assert strip_markers("对我来说，家人最重要。") == "对我来说，家人最重要。"


# --- left-out subjects ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "restored"),
    [
        (
            "Been running longer since our last chat.",
            "I've been running longer since our last chat.",
        ),
        ("Gonna keep pushing and working hard.", "I'm gonna keep pushing and working hard."),
        ("Just got some new shoes, too!", "I just got some new shoes, too!"),
        ("Never had a chance to visit it.", "I never had a chance to visit it."),
        (
            "Always been interested in different cultures and countries.",
            "I've always been interested in different cultures and countries.",
        ),
    ],
)
def test_a_left_out_subject_is_said_again(said: str, restored: str) -> None:
    assert restore_subject(said) == restored


def test_a_sentence_opening_with_a_gerund_keeps_it() -> None:
    said = "Just seeing the sun dip below the horizon was calming."
    assert restore_subject(said) == said


def test_a_left_out_subject_yields_a_fact() -> None:
    assert _facts(("Melanie", "Thanks, Caroline! Just got some new running shoes.")) == [
        "Melanie just got some new running shoes."
    ]


# --- a subject of two ---------------------------------------------------------------------------


def test_a_coordinated_subject_keeps_its_plural_verb() -> None:
    assert third_person("Mel and I love camping with our kids.", "Caroline") == (
        "Mel and Caroline love camping with their kids."
    )
    # "and" joining two clauses: "I" is the subject of its own clause
    assert third_person("The team has been really nice and I am having fun.", "John") == (
        "The team has been really nice and John is having fun."
    )


# --- what "these" and "this" cannot point to -------------------------------------------------


def test_the_listener_named_is_not_an_antecedent() -> None:
    # "Gina, I'm stoked about this!": this is not Gina
    facts = [
        c.text
        for c in RuleExtractor()
        .extract(
            _turns(
                ("Gina", "Guess what, I got a new job!"), ("Jon", "Gina, I'm stoked about this!")
            )
        )
        .candidates
        if c.subject == "Jon"
    ]
    assert facts == []
    assert strip_vocative("Yeah, Caroline, my family's been great.", ["Caroline"]) == (
        "Yeah, Caroline, my family's been great."
    )
    assert strip_vocative("Caroline, my family's been great.", ["Caroline"]) == (
        "my family's been great."
    )
    assert self_contained("Yeah, Caroline, my family's been great.", ["Caroline"]) == [
        "my family's been great."
    ]


@pytest.mark.parametrize(
    "said",
    [
        "Moments like these remind me to appreciate the ones I love.",
        "Moments like that make me love sports and admire the players' determination.",
    ],
)
def test_a_noun_compared_with_these_is_not_what_these_point_to(said: str) -> None:
    assert dangling(said)
    assert _facts(("Tim", said)) == []


def test_like_this_before_a_noun_is_a_determiner() -> None:
    assert not dangling("Stuff like this mural is really special to me.")


# --- a past deed told with "we" is the speaker's -----------------------------------------------


@pytest.mark.parametrize(
    ("said", "facts"),
    [
        ("Oh yeah, we went to the beach recently.", ["Melanie went to the beach recently."]),
        (
            "We roasted marshmallows and shared stories around the campfire.",
            ["Melanie roasted marshmallows and shared stories around the campfire."],
        ),
        (
            # "it" is not the team: the clause that leans on it is left out
            "We played a top team and it was tough, but we got the win!",
            ["Melanie played a top team", "Melanie got the win!"],
        ),
    ],
)
def test_a_past_deed_told_with_we_is_the_speakers(said: str, facts: list[str]) -> None:
    assert _facts(("Melanie", said)) == facts


@pytest.mark.parametrize(
    "said",
    [
        "We had so much fun making them together.",  # together: more than one
        "We had a lot in common and hit it off.",
        "Since we talked, we met up twice.",  # talking and meeting take two
        "We are going to the beach next week.",  # not a past deed
        "We can make a difference and help lots of people.",
    ],
)
def test_we_that_takes_more_than_the_speaker_stays_unresolved(said: str) -> None:
    assert resolve_we(said, None) == said


def test_an_irregular_past_keeps_its_form() -> None:
    assert third_person("I fought hard and caught the last train.", "John") == (
        "John fought hard and caught the last train."
    )


@pytest.mark.parametrize(
    "said",
    [
        "Makes me feel connected.",
        "Reminds me it's important to cultivate a loving and accepting environment for our kids.",
        "Made me feel great.",
        "Sounds like a great way to relax.",
    ],
)
def test_a_clause_that_left_out_its_subject_it_is_unresolved(said: str) -> None:
    assert dangling(said)
    assert restore_subject(said) == said
    assert _facts(("Caroline", said)) == []


def test_a_feeling_that_left_out_its_subject_is_said_with_i_am() -> None:
    assert restore_subject("Excited to see what's next.") == "I'm excited to see what's next."
    assert restore_subject("Used to go there a lot.") == "I used to go there a lot."
    assert _facts(("John", "Thanks! Excited to see what's next.")) == [
        "John is excited to see what's next."
    ]


def test_a_resolved_group_is_not_cut_at_its_and() -> None:
    # "me and my kids" is one object: no clause starts at "and my kids"
    assert self_contained("It keeps me and my kids on track.") == []
