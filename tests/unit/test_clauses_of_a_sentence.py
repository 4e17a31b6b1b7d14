"""A sentence of several clauses: each clause's state is read as its own, the clause no state
was read from is still read by the other rules, a name ends before "and I", how often one
thing is done is not said of another, and "and I" after an object is a new clause of the same
"I", whose verb agrees."""

from __future__ import annotations

import pytest

from memstrata.curate.person import third_person
from tests.unit.said import candidates, facts


def test_the_clause_no_state_was_read_from_is_read_by_the_other_rules() -> None:
    found = facts("I work at Klook and I volunteer at the food bank on Tuesdays.")
    assert ("employer", "The user works at Klook") in found
    assert ("volunteer:food bank", "The user volunteers at the food bank on Tuesdays.") in found
    assert not [slot for slot, _ in found if slot and slot.startswith("routine")]


@pytest.mark.parametrize(
    ("said", "employer"),
    [
        ("I work at Klook and I love it", "Klook"),
        ("I work at Procter and Gamble.", "Procter and Gamble"),
        ("I work at Johnson & Johnson now", "Johnson & Johnson"),
    ],
)
def test_a_name_ends_before_and_i(said: str, employer: str) -> None:
    assert [c.value for c in candidates(said) if c.slot == "employer"] == [employer]


def test_a_routine_is_its_own_clause() -> None:
    [routine] = candidates("I swim twice a week and I love it")
    assert (routine.slot, routine.value) == ("routine:swimming", "swim")  # not "… and I love it"


@pytest.mark.parametrize(
    ("said", "told"),
    [
        (
            "I work at Klook and I volunteer on Tuesdays",
            "The user works at Klook and the user volunteers on Tuesdays",
        ),
        ("I go to the gym and I swim", "The user goes to the gym and the user swims"),
        ("Mel and I love camping", "Mel and the user love camping"),
        ("I think Mel and I love camping", "The user thinks Mel and the user love camping"),
    ],
)
def test_and_i_after_an_object_is_the_same_i(said: str, told: str) -> None:
    assert third_person(said, "The user") == told


@pytest.mark.parametrize(
    ("said", "told"),
    [
        (
            "I have a kidney transplant and take tacrolimus",
            "The user has a kidney transplant and takes tacrolimus",
        ),
        ("I'm anaemic and take iron", "The user is anaemic and takes iron"),
        (
            "I work at Klook and volunteer on Tuesdays",
            "The user works at Klook and volunteers on Tuesdays",
        ),
        ("I live in Leeds, and work in York", "The user lives in Leeds, and works in York"),
        # the verb after "and" goes with a helper, "to", another subject or clause, or is a noun
        ("I like to read and write", "The user likes to read and write"),
        ("I can swim and run", "The user can swim and run"),
        ("I make coffee and tea", "The user makes coffee and tea"),
        ("I have a son and you have a daughter", "The user has a son and you have a daughter"),
        ("I'm gonna stay and make it work", "The user is gonna stay and make it work"),
        (
            "I love the self-acceptance and love theme",
            "The user loves the self-acceptance and love theme",
        ),
        (
            "I don't surf, but reading helps me escape and feel free",
            "The user doesn't surf, but reading helps the user escape and feel free",
        ),
    ],
)
def test_a_second_verb_of_the_same_i_agrees(said: str, told: str) -> None:
    assert third_person(said, "The user") == told


def test_a_home_told_by_the_room_rented_or_the_time_since_one_came() -> None:
    found = facts("来北京快一个月了 在五道口租了个单间 跟同组的王凯住一个小区")
    assert [t for slot, t in found if slot == "residence"] == ["用户住在北京", "用户住在五道口"]
    assert facts("来三亚玩了一周了，明天回成都") == []  # a stay on a trip is no home


def test_an_introduction_lists_age_and_home() -> None:
    found = dict(facts("Hi, I'm Margaret, retired teacher, 71, living in Leeds with my husband"))
    assert found["age"] == "The user is 71 years old"
    assert found["residence"] == "The user lives in Leeds"
    assert found["job"] == "The user is a retired teacher"
    assert dict(facts("I'm retired now."))["job"] == "The user is retired now."


def test_the_person_of_a_part_goes_on_into_the_next_and_their_doctor_s_switch_is_theirs() -> None:
    found = facts(
        "I live in Leeds with my husband Dennis.",
        "Dennis has type 2 diabetes and takes metformin.",
        "Dennis's doctor changed his metformin to Jardiance after his kidney test.",
    )
    assert ("medication:dennis/metformin", "The user's husband Dennis takes metformin") in found
    assert (
        "medication:dennis/metformin",
        "The user's husband Dennis no longer takes metformin",
    ) in found
    assert ("medication:dennis/empagliflozin", "The user's husband Dennis takes Jardiance") in found
    # a switch of something else is no medicine
    assert not [s for s, _ in facts("I switched from the night shift to days.") if s]


def test_an_activity_started_on_a_day_is_a_routine_and_a_group_joined_no_employer() -> None:
    found = facts("I've started aqua aerobics on Wednesday mornings, good for the joints.")
    assert [s for s, _ in found] == ["routine:aqua aerobics"]
    assert [s for s, _ in facts("I joined a choir on Tuesday evenings")] == ["routine:choir"]
    assert [s for s, _ in facts("I joined Google last month")] == ["employer"]


def test_a_forum_joined_is_no_employer_and_a_clause_about_the_one_before_not_alone() -> None:
    found = facts("Last night I joined a fantasy literature forum and had a great talk.")
    assert "employer" not in [s for s, _ in found]
    assert ("employer", "The user joined Google") in facts("I joined Google and my team is great")
    found = facts("In my downtime, I love to get lost in books, and this series is one of my faves")
    assert not [t for _, t in found if t.casefold().startswith(("and this", "this series"))]


def test_we_as_i_and_my_kids_is_no_routine_and_and_is_no_verb() -> None:
    found = facts(
        "Seeing my kids' faces so happy at the beach was the best!",
        "We don't go often, usually only once or twice a year.",
    )
    # "we" is the user and the kids; "and" after "I" is no verb to read a routine from
    assert (
        "child:kids",
        "The user and their kids don't go often, usually only once or twice a year.",
    ) in found
    assert not [s for s, _ in found if s and s.startswith("routine")]
    assert (
        third_person("I and my kids go camping", "Melanie") == "Melanie and their kids go camping"
    )


def test_a_value_of_how_many_alone_is_no_value() -> None:
    from memstrata.curate.frames import complete

    assert not complete("a few") and not complete("some") and complete("a few paintings")
    assert not [s for s, _ in facts("I'm planning a few.") if s and s.startswith("plan")]


@pytest.mark.parametrize(
    ("said", "slot", "value"),
    [
        (
            "I'm still volunteering at the homeless shelter.",
            "volunteer:homeless shelter",
            "homeless shelter",
        ),
        (
            "I gave a few talks at the homeless shelter I volunteer at.",
            "volunteer:homeless shelter",
            "homeless shelter",
        ),
        ("I volunteer with Meals on Wheels", "volunteer:meals", "Meals on Wheels"),
        (
            "I still volunteer as a docent at the Air Force museum in Dayton on Thursdays.",
            "volunteer:air force museum",
            "Air Force museum in Dayton",
        ),
        (
            "I just started volunteering at a local dog shelter once a month.",
            "volunteer:local dog shelter",
            "local dog shelter",
        ),
        ("我每周二下午在社区中心做志愿者，教书法", "volunteer:社区中心", "社区中心"),
        ("我周末去养老院当义工", "volunteer:养老院", "养老院"),
    ],
)
def test_where_one_volunteers_is_a_lasting_place_of_ones_life(
    said: str, slot: str, value: str
) -> None:
    """Volunteering is where a person gives their time: a slot of their profile, neither an
    employer nor a routine beside it; what was volunteered at once is an event."""
    found = [(c.slot, c.value) for c in candidates(said) if c.slot]
    assert found == [(slot, value)]


def test_volunteering_once_or_stopped_is_no_current_place() -> None:
    assert [c.slot for c in candidates("I volunteered at a shelter during an event for kids")] == [
        None
    ]
    [stopped] = candidates("I stopped volunteering at the library")
    assert stopped.slot == "volunteer:library" and stopped.ended is not None


@pytest.mark.parametrize(
    ("said", "employer"),
    [
        ("I got an offer from BC Children's, I start Jan 6.", "BC Children's"),
        ("Got the offer from Canva! Starting on March 3.", "Canva"),
        ("I got an offer from Canva but I turned it down.", None),
        ("I got an offer from Canva, still deciding.", None),
    ],
)
def test_an_offer_with_a_start_is_the_new_employer(said: str, employer: str | None) -> None:
    found = [c.value for c in candidates(said) if c.slot == "employer"]
    assert found == ([employer] if employer else [])


def test_an_english_clause_of_mixed_text_keeps_its_subject() -> None:
    """A Latin comma inside an English run of mixed text does not cut the run: "I'm Lucas,
    ICU nurse at the Royal Melbourne" keeps its "I'm" for the job it says."""
    said = {
        c.slot: c.value
        for c in candidates("I'm Lucas, ICU nurse at the Royal Melbourne, 做夜班 mostly.")
        if c.slot
    }
    assert said == {"name": "Lucas", "job": "ICU nurse", "employer": "Royal Melbourne"}


@pytest.mark.parametrize(
    ("said", "job"),
    [
        (
            "I GOT IT. Clinical nurse educator, start March 16. No more night shifts!!",
            "Clinical nurse educator",
        ),
        ("I got the job! Senior data engineer, starting in May.", "Senior data engineer"),
        ("Clinical nurse educator, start March 16.", None),  # nothing says it was got
        ("I applied for it. Senior data engineer, starting in May if they say yes.", None),
    ],
)
def test_a_role_got_and_started_is_the_job(said: str, job: str | None) -> None:
    found = [c.value for c in candidates(said) if c.slot == "job"]
    assert found == ([job] if job else [])
