"""The time a fact speaks of (``When``) and the state it sets (``slot``): validated in the
model, encoded by the codec, taken and checked by the Python API, filtered by the store."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.codec import fact_from_json, fact_to_json, when_from_json, when_to_json
from memstrata.errors import InvalidInputError
from memstrata.ids import new_id
from memstrata.model import (
    Candidate,
    Category,
    Fact,
    FactFilter,
    Scope,
    When,
    check_slot,
    interval_text,
    slot_kind,
)

MAY = datetime(2026, 5, 1, tzinfo=UTC)
JUNE = datetime(2026, 6, 1, tzinfo=UTC)
SHANGHAI = timezone(timedelta(hours=8))


def _fact(**extra: Any) -> Fact:
    return Fact(
        new_id("fa"),
        Scope("alice"),
        "Alice is allergic to shrimp",
        Category.HEALTH,
        0.9,
        0.8,
        None,
        (new_id("ep"),),
        MAY,
        None,
        None,
        MAY,
        MAY,
        **extra,
    )


class TestWhen:
    def test_keeps_its_words_and_an_interval_in_utc(self) -> None:
        when = When("下个月", datetime(2026, 5, 1, 8, tzinfo=SHANGHAI), JUNE)
        assert when.text == "下个月"
        assert when.start == MAY and when.start.tzinfo is UTC and when.end.tzinfo is UTC

    @pytest.mark.parametrize(
        ("text", "start", "end", "message"),
        [
            ("", MAY, JUNE, "empty"),
            ("   ", MAY, JUNE, "empty"),
            ("x" * 201, MAY, JUNE, "201 characters"),
            ("in May \ud800", MAY, JUNE, "surrogate"),
            (5, MAY, JUNE, "must be text"),
            ("in May", JUNE, MAY, "before its end"),
            ("in May", MAY, MAY, "before its end"),
            ("in May", datetime(2026, 5, 1), JUNE, "no time zone"),
            ("in May", "2026-05-01", JUNE, "must be a datetime"),
        ],
    )
    def test_refuses(self, text: Any, start: Any, end: Any, message: str) -> None:
        with pytest.raises(InvalidInputError, match=message):
            When(text, start, end)

    def test_two_hundred_characters_are_enough(self) -> None:
        assert len(When("周" * 200, MAY, JUNE).text) == 200

    @pytest.mark.parametrize(
        ("start", "end", "text"),
        [
            (MAY, MAY + timedelta(days=1), "2026-05-01"),
            (MAY, JUNE, "2026-05"),
            (datetime(2026, 12, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC), "2026-12"),
            (datetime(2026, 1, 1, tzinfo=UTC), datetime(2027, 1, 1, tzinfo=UTC), "2026"),
            (MAY, MAY + timedelta(days=7), "2026-05-01/2026-05-08"),
            (
                MAY + timedelta(hours=9),
                MAY + timedelta(hours=10, minutes=30),
                "2026-05-01T09:00:00Z/2026-05-01T10:30:00Z",
            ),
            (
                MAY,
                MAY + timedelta(microseconds=5),
                "2026-05-01/2026-05-01T00:00:00.000005Z",
            ),
        ],
    )
    def test_between_renders_the_interval_as_its_words(
        self, start: datetime, end: datetime, text: str
    ) -> None:
        assert interval_text(start, end) == text
        assert When.between(start, end) == When(text, start, end)

    def test_between_refuses_an_empty_or_naive_interval(self) -> None:
        with pytest.raises(InvalidInputError, match="before its end"):
            When.between(JUNE, MAY)
        with pytest.raises(InvalidInputError, match="no time zone"):
            When.between(datetime(2026, 5, 1), JUNE)

    def test_the_last_year_renders(self) -> None:
        start = datetime(9999, 12, 1, tzinfo=UTC)
        assert interval_text(start, start + timedelta(days=30)) == "9999-12-01/9999-12-31"


class TestSlot:
    @pytest.mark.parametrize(
        "slot", ["employer", "allergy:shrimp", "plan:trip to kyoto", "Routine:Running", "过敏:虾"]
    )
    def test_accepts(self, slot: str) -> None:
        check_slot(slot)
        assert _fact(slot=slot).slot == slot  # case kept

    @pytest.mark.parametrize(
        ("slot", "message"),
        [
            ("", "1-200 characters"),
            (" employer", "surrounding spaces"),
            ("employer\u3000", "surrounding spaces"),
            ("a\tb", "control characters"),
            ("a\x85b", "control characters"),
            ("x" * 201, "1-200 characters"),
            ("allergy:\udc80", "surrogate"),
            (7, "must be text"),
        ],
    )
    def test_refuses(self, slot: Any, message: str) -> None:
        with pytest.raises(InvalidInputError, match=message):
            check_slot(slot)
        with pytest.raises(InvalidInputError):
            _fact(slot=slot)

    def test_kind(self) -> None:
        assert slot_kind("allergy:shrimp") == "allergy" and slot_kind("employer") == "employer"
        assert slot_kind("plan:trip: kyoto") == "plan"

    def test_a_fact_refuses_a_when_that_is_not_one(self) -> None:
        with pytest.raises(InvalidInputError, match="must be a When"):
            _fact(when={"text": "in May", "start": MAY, "end": JUNE})

    def test_filters_are_checked(self) -> None:
        assert FactFilter(slot="allergy:shrimp", slot_kind="allergy").slot_kind == "allergy"
        with pytest.raises(InvalidInputError, match="colon"):
            FactFilter(slot_kind="allergy:shrimp")
        with pytest.raises(InvalidInputError, match="slot filter"):
            FactFilter(slot=" x")


def test_a_candidate_carries_when_slot_and_exclusive() -> None:
    when = When("since last May", MAY, JUNE)
    made = Candidate(
        "Is only allergic to shrimp",
        Category.HEALTH,
        0.9,
        0.8,
        ("ep_1",),
        when=when,
        slot="allergy:shrimp",
        exclusive=True,
    )
    assert (made.when, made.slot, made.exclusive) == (when, "allergy:shrimp", True)
    plain = Candidate("Likes tea", Category.PREFERENCE, 0.9, 0.5, ("ep_1",))
    assert (plain.when, plain.slot, plain.exclusive) == (None, None, False)
    with pytest.raises(InvalidInputError):
        Candidate("x", Category.OTHER, 0.9, 0.5, ("ep_1",), slot="a\nb")


class TestCodec:
    def test_round_trip(self) -> None:
        fact = _fact(when=When("上周五 last Friday", MAY, MAY + timedelta(days=1)), slot="过敏:虾")
        data = fact_to_json(fact)
        assert data["when"] == {
            "text": "上周五 last Friday",
            "start": "2026-05-01T00:00:00.000000Z",
            "end": "2026-05-02T00:00:00.000000Z",
        }
        assert data["slot"] == "过敏:虾"
        assert fact_from_json(data) == fact

    def test_a_record_written_before_has_neither_and_reads_none(self) -> None:
        data = fact_to_json(_fact())
        assert data["when"] is None and data["slot"] is None
        del data["when"], data["slot"]
        old = fact_from_json(data)
        assert old.when is None and old.slot is None

    @pytest.mark.parametrize(
        "bad",
        [
            "in May",
            {"text": "in May", "start": "2026-05-01T00:00:00Z"},
            {"text": "in May", "start": "2026-06-01T00:00:00Z", "end": "2026-05-01T00:00:00Z"},
            {"text": "in May", "start": "May", "end": "2026-06-01T00:00:00Z"},
            {"text": "", "start": "2026-05-01T00:00:00Z", "end": "2026-06-01T00:00:00Z"},
        ],
    )
    def test_a_malformed_when_is_bad_input(self, bad: Any) -> None:
        with pytest.raises(InvalidInputError):
            when_from_json(bad)

    def test_a_time_without_a_zone_reads_as_utc(self) -> None:
        when = when_from_json({"text": "t", "start": "2026-05-01T00:00", "end": "2026-06-01"})
        assert when == When("t", MAY, JUNE) and when_to_json(None) is None


class TestMemory:
    def test_add_fact_takes_a_when_or_a_mapping_and_a_slot(self, memory: Memory) -> None:
        given = When("in May", MAY, JUNE)
        fact = memory.add_fact("Alice moves to Kyoto", "alice", when=given, slot=" residence ")
        assert fact.when == given and fact.slot == "residence"
        assert memory.get(fact.id, "alice") == fact
        mapped = memory.add_fact(
            "Alice starts at Acme",
            "alice",
            when={"text": "  下个月 ", "start": "2026-05-01T08:00:00+08:00", "end": "2026-06-01"},
            slot="employer",
        )
        assert mapped.when == When("下个月", MAY, JUNE)
        bare = memory.add_fact("Alice ran", "alice", when={"start": MAY, "end": JUNE})
        assert bare.when == When("2026-05", MAY, JUNE)

    @pytest.mark.parametrize(
        ("when", "slot", "message"),
        [
            ({"start": "2026-06-01", "end": "2026-05-01"}, None, "when start .* before its end"),
            ({"start": "2026-05-01"}, None, "when needs its end"),
            ({"start": "soon", "end": "2026-05-01"}, None, "when start"),
            ({"start": MAY, "end": JUNE, "at": 1}, None, "unknown when field"),
            ({"text": 3, "start": MAY, "end": JUNE}, None, "when text must be text"),
            ({"text": " ", "start": MAY, "end": JUNE}, None, "when text is empty"),
            ("last Friday", None, "when must be"),
            (None, "x" * 10_000, "slot .* 1-200 characters"),
            (None, "a\x00b", "slot"),
            (None, ["employer"], "slot must be text"),
            (None, "   ", "slot"),
        ],
    )
    def test_bad_values_are_bad_input_naming_the_field(
        self, memory: Memory, when: Any, slot: Any, message: str
    ) -> None:
        with pytest.raises(InvalidInputError, match=message):
            memory.add_fact("Alice likes tea", "alice", when=when, slot=slot)
        assert memory.list("alice", "fact") == []

    def test_update_sets_and_clears_them(self, memory: Memory) -> None:
        fact = memory.add_fact("Alice works at Acme", "alice")
        changed = memory.update(
            fact.id, "alice", when={"text": "since May", "start": MAY, "end": JUNE}, slot="employer"
        )
        assert isinstance(changed, Fact)
        assert changed.when == When("since May", MAY, JUNE) and changed.slot == "employer"
        assert changed.version == 2
        history = memory.history(fact.id, "alice")
        assert history[-1].data["slot"] == "employer"
        assert history[-1].data["when"] == {
            "text": "since May",
            "start": "2026-05-01T00:00:00.000000Z",
            "end": "2026-06-01T00:00:00.000000Z",
        }
        with pytest.raises(InvalidInputError, match="when start"):
            memory.update(fact.id, "alice", when={"start": JUNE, "end": MAY})
        cleared = memory.update(fact.id, "alice", when=None, slot=None)
        assert isinstance(cleared, Fact) and cleared.when is None and cleared.slot is None
        assert memory.update(fact.id, "alice", slot=None).version == cleared.version

    def test_slot_and_the_words_of_a_time_are_scrubbed(self, memory: Memory) -> None:
        fact = memory.add_fact(
            "Alice has a contact",
            "alice",
            slot="contact:alice@example.com",
            when={"text": "when alice@example.com wrote", "start": MAY, "end": JUNE},
        )
        assert fact.slot is not None and "alice@example.com" not in fact.slot
        assert fact.when is not None and "alice@example.com" not in fact.when.text

    def test_facts_filter_by_slot_and_kind(self, memory: Memory) -> None:
        shrimp = memory.add_fact("Allergic to shrimp", "alice", slot="allergy:shrimp")
        allergy = memory.add_fact("Has allergies", "alice", slot="allergy")
        memory.add_fact("Allergic-ish", "alice", slot="allergyish")
        memory.add_fact("Works at Acme", "alice", slot="employer")
        memory.add_fact("No slot", "alice")

        def ids(**filters: str) -> list[str]:
            return [v.fact.id for v in memory.facts("alice", valid="all", **filters)]

        assert ids(slot="allergy:shrimp") == [shrimp.id]
        assert ids(slot=" allergy:shrimp ") == [shrimp.id]
        assert ids(slot_kind="allergy") == [shrimp.id, allergy.id]
        assert ids(slot_kind="Allergy") == []
        fact_filter = FactFilter(slot_kind="allergy")
        assert [f.id for f in memory.list("alice", "fact", fact_filter=fact_filter)] == [
            shrimp.id,
            allergy.id,
        ]
        with pytest.raises(InvalidInputError, match="colon"):
            memory.facts("alice", slot_kind="allergy:shrimp")

    def test_health_is_a_category_with_its_own_threshold(self, memory: Memory) -> None:
        from memstrata.curate.guards import DEFAULT_THRESHOLDS
        from memstrata.settings import load_settings

        assert DEFAULT_THRESHOLDS[Category.HEALTH] == 0.6
        assert set(DEFAULT_THRESHOLDS) == set(Category)
        every = {c.value: 0.5 for c in Category}
        assert load_settings(confidence_thresholds=every).confidence_thresholds == every
        fact = memory.add_fact("Takes insulin daily", "alice", category="health")
        assert fact.category is Category.HEALTH


def test_export_and_import_carry_them(memory: Memory, tmp_path: Path) -> None:
    """A scope exported as a directory comes back with its facts' times and slots: into an
    empty scope of the same user as it was, into another user renumbered; a facts.jsonl
    written before (neither key) reads back with neither, and a malformed one is refused."""
    when = When("上周五 last Friday", MAY, MAY + timedelta(days=1))
    fact = memory.add_fact(
        "Alice is allergic to shrimp", "alice", category="health", when=when, slot="allergy:shrimp"
    )
    plain = memory.add_fact("Alice likes tea", "alice", category="preference")
    out = tmp_path / "export"
    memory.export_markdown("alice", out)
    rows = [json.loads(line) for line in (out / "facts.jsonl").read_text("utf-8").splitlines()]
    assert [r["slot"] for r in rows] == ["allergy:shrimp", None]

    assert memory.import_markdown(out, user="bob") == Scope("bob")
    [bobs, bobs_plain] = memory.list("bob", "fact")
    assert bobs.id != fact.id and (bobs.when, bobs.slot) == (when, "allergy:shrimp")
    assert bobs.category is Category.HEALTH and bobs_plain.when is None

    memory.forget_scope(Scope("alice"))
    memory.import_markdown(out)
    assert memory.get(fact.id, "alice") == fact and memory.get(plain.id, "alice") == plain

    for row in rows:
        del row["when"], row["slot"]
    (out / "facts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    memory.import_markdown(out, user="carol")
    assert [(f.when, f.slot) for f in memory.list("carol", "fact")] == [(None, None)] * 2

    rows[0]["when"] = {"text": "in May", "start": "2026-06-01T00:00:00Z", "end": "2026-05-01"}
    (out / "facts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    with pytest.raises(InvalidInputError, match="before its end"):
        memory.import_markdown(out, user="dave")
    rows[0]["when"] = None
    rows[0]["slot"] = "allergy:\tshrimp"
    (out / "facts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    with pytest.raises(InvalidInputError, match="slot"):
        memory.import_markdown(out, user="dave")
    assert memory.list("dave", "fact") == []


def test_a_health_fact_without_a_topic_is_served_and_consolidated(memory: Memory) -> None:
    """Every table keyed by category has health: its default topic document and section."""
    from memstrata.consolidate.measures import SECTIONS
    from memstrata.document.coverage import DEFAULT_TOPICS

    assert set(SECTIONS) == set(Category) == set(DEFAULT_TOPICS)
    fact = memory.add_fact("Takes insulin every morning", "alice", category="health")
    assert fact.id in memory.wake_up("alice", budget=400).facts_included
    memory.consolidate("alice")
    markdown, _ = memory.doc_markdown("health", "alice")
    assert "## Health" in markdown and "Takes insulin every morning" in markdown


@pytest.mark.parametrize(
    ("said", "at", "words", "day"),
    [
        # the time a change puts it at, not the other time of the clause
        (
            "转正答辩推迟了 我导师下周出差 改到4月9号",
            datetime(2026, 3, 17, tzinfo=UTC),
            "4月9号",
            "2026-04-09",
        ),
        # a week said, then the day in it
        (
            "下下周小雯生日 三月十号 我想给她寄点芒果干",
            datetime(2026, 2, 24, tzinfo=UTC),
            "三月十号",
            "2026-03-10",
        ),
        # a plan said in the progressive is a coming one, whatever was said before it
        (
            "we found an apartment in mount pleasant, moving the last week of may",
            datetime(2026, 4, 20, tzinfo=UTC),
            "the last week of may",
            "2026-05-25",
        ),
        # a Chinese clause after a pause says its own tense: "三月底交房" is the coming March
        (
            "房子定了 在三亚湾买了个两室一厅 三月底交房",
            datetime(2026, 2, 24, tzinfo=UTC),
            "三月底",
            "2026-03-21",
        ),
    ],
)
def test_a_fact_is_dated_by_the_time_its_words_put_it_at(
    said: str, at: datetime, words: str, day: str
) -> None:
    from memstrata.curate.extract_rules import RuleExtractor
    from tests.unit.said import user_turns

    dated = [c.when for c in RuleExtractor().extract(user_turns(said, at=at)).candidates if c.when]
    assert dated and all(w.text == words and w.start.date().isoformat() == day for w in dated)
