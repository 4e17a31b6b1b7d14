"""The conversation files of ``bench handed``: a good file reads, each malformed one is refused
saying where and why, and the shipped sets load and keep the writing rules."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from memstrata.bench.handed_files import (
    CATEGORIES,
    SETS_DIR,
    load_conversation,
    load_paths,
    load_sets,
)
from memstrata.bench.handed_lines import holds
from memstrata.errors import ImportFormatError, InvalidInputError
from memstrata.model import Role

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "handed_mini.json"
GOOD: dict[str, Any] = json.loads(MINI.read_text(encoding="utf-8"))


def _write(tmp_path: Path, data: Any, name: str = "conv.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_good_file_reads_whole() -> None:
    conv = load_conversation(MINI, "dev")
    assert (conv.id, conv.language, conv.set) == ("mini-ana", "mixed", "dev")
    assert conv.speakers == {Role.USER: "Ana", Role.ASSISTANT: None}
    assert [len(s.turns) for s in conv.sessions] == [4, 3]
    assert [len(getattr(conv.expect, k)) for k in ("current", "stale", "safety")] == [3, 2, 1]
    assert conv.expect.events[0].date == "2026-10"
    assert conv.expect.slots[0].value == (("Tiago",),)
    assert conv.questions[1].stale == (("Porto",),) and conv.questions[0].stale == ()
    turns = conv.turns()
    # a turn's time is its session's date plus one minute per turn; speaker per the file
    assert turns[3].time == conv.sessions[0].date + timedelta(minutes=3)
    assert [t.session_id for t in turns] == ["s1"] * 4 + ["s2"] * 3
    assert (turns[0].speaker, turns[1].speaker) == ("Ana", None)


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        node[int(last) if last.isdigit() else last] = value

    return change


def _drop(path: str) -> Callable[[dict[str, Any]], None]:
    def change(data: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        node: Any = data
        for key in parents:
            node = node[int(key)] if key.isdigit() else node[key]
        del node[last]

    return change


MALFORMED = [
    (_drop("now"), "(top level): missing key 'now'"),
    (_drop("expect.slots"), "(expect): missing key 'slots'"),
    (_drop("expect.current.0.any"), "(expect.current[0]): missing key 'any'"),
    (_set("expect.current.0.any", []), "(expect.current[0].any): has no alternatives"),
    (_set("expect.safety.0.any", [[]]), "an alternative is a non-empty list of terms"),
    (_set("expect.trivia.0.any", [["groceries", " "]]), "expected a non-empty string"),
    (_set("questions.0.answer", []), "(questions[0].answer): has no alternatives"),
    (_set("expect.slots.0.value", []), "(expect.slots[0].value): has no alternatives"),
    (_set("expect.stale.1.id", "city"), "duplicate item id 'city' (also expect.current[0])"),
    (_set("expect.slots.0.id", "kyoto"), "duplicate item id 'kyoto' (also expect.events[0])"),
    (_set("sessions.1.date", "2026-01-10T09:02:00Z"), "(sessions[1].date): dates not in order"),
    (_set("now", "2026-03-02T18:32:00Z"), "(now): dates not in order"),
    (_set("sessions.1.date", "2026-03-02"), "has no time zone"),
    (_set("now", "yesterday"), "is not an ISO 8601 time"),
    (
        _set("sessions.1.turns", [{"role": "assistant", "text": "Hello?"}]),
        "(sessions[1]): the session has no user turn",
    ),
    (_set("sessions.1.turns", []), "(sessions[1].turns): is empty"),
    (_set("sessions", []), "(sessions): is empty"),
    (_set("sessions.0.turns.0.role", "system"), "'system' is not 'user' or 'assistant'"),
    (_set("sessions.0.turns.0.text", ""), "(sessions[0].turns[0].text): expected a non-empty"),
    (_set("expect.events.0.date", "2026-13"), "'2026-13' is not a date"),
    (_set("expect.events.0.date", "October"), "'October' is not a date"),
    (_drop("expect.events.0.date"), "(expect.events[0]): missing key 'date'"),
    (_set("expect.current.0.date", "2026-10"), "unknown key 'date'"),
    (_set("expect.stales", []), "(expect): unknown key 'stales'"),
    (_set("language", "fr"), "'fr' is not one of en, zh, mixed"),
    (_set("id", "Mini Ana"), "'Mini Ana' is not lowercase letters"),
    (_set("questions.0.kind", "trivia"), "'trivia' is not one of current, safety, event"),
    (_set("speakers", {"user": "Ana"}), "(speakers): missing key 'assistant'"),
    (_set("speakers.user", ""), "(speakers.user): expected a non-empty string"),
    (_set("expect.current", {"id": "city"}), "(expect.current): expected a list"),
]


@pytest.mark.parametrize(("change", "message"), MALFORMED)
def test_each_malformed_file_is_refused_saying_where(
    tmp_path: Path, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    data = copy.deepcopy(GOOD)
    change(data)
    path = _write(tmp_path, data)
    with pytest.raises(ImportFormatError) as caught:
        load_conversation(path)
    assert str(caught.value).startswith(str(path))
    assert message in str(caught.value)


def test_a_file_that_is_not_json_or_not_utf8_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"id": "x",\n  "language": }', encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"broken\.json:2: invalid JSON"):
        load_conversation(broken)
    latin = tmp_path / "latin.json"
    latin.write_bytes('{"id": "café"}'.encode("latin-1"))
    with pytest.raises(ImportFormatError, match="not UTF-8"):
        load_conversation(latin)


def test_a_file_nested_too_deeply_or_too_large_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(ImportFormatError, match="nested too deeply"):
        load_conversation(deep)
    from memstrata.bench import handed_files

    monkeypatch.setattr(handed_files, "MAX_FILE_BYTES", 10)
    big = tmp_path / "big.json"
    big.write_text('{"id": "a-long-one"}', encoding="utf-8")
    with pytest.raises(ImportFormatError, match="larger than"):
        load_conversation(big)


def test_a_conversation_id_is_unique_across_files(tmp_path: Path) -> None:
    _write(tmp_path, GOOD, "a.json")
    _write(tmp_path, GOOD, "b.json")
    with pytest.raises(ImportFormatError, match=r"b\.json \(id\): conversation id 'mini-ana'"):
        load_paths([tmp_path])
    with pytest.raises(InvalidInputError, match="no such file"):
        load_paths([tmp_path / "missing.json"])


def test_sets_are_chosen_by_name(tmp_path: Path) -> None:
    (tmp_path / "dev").mkdir()
    _write(tmp_path / "dev", GOOD, "a.json")
    assert [c.set for c in load_sets("all", tmp_path)] == ["dev"]  # heldout absent: skipped
    with pytest.raises(InvalidInputError, match=r"no conversation files in .*heldout"):
        load_sets("heldout", tmp_path)
    with pytest.raises(InvalidInputError, match="unknown set 'test'"):
        load_sets("test", tmp_path)
    (tmp_path / "heldout").mkdir()
    _write(tmp_path / "heldout", GOOD, "b.json")
    with pytest.raises(ImportFormatError, match="also the id of"):
        load_sets("all", tmp_path)


def test_the_shipped_sets_all_load() -> None:
    dev = load_sets("dev")
    assert len(dev) == 19
    assert sorted(c.language for c in dev) == ["en"] * 7 + ["mixed"] * 6 + ["zh"] * 6
    if any((SETS_DIR / "heldout").glob("*.json")):
        heldout = load_sets("heldout")
        assert heldout and {c.set for c in heldout} == {"heldout"}
        assert len(load_sets("all")) == len(dev) + len(heldout)


def test_the_dev_conversations_keep_the_writing_rules() -> None:
    """What the format asks of a conversation, and that every expected item rests on what the
    user said: some user turn holds one of its alternatives."""
    seen: dict[str, str] = {}
    for conv in load_sets("dev"):
        assert 4 <= len(conv.sessions) <= 7, conv.id
        assert all(8 <= len(s.turns) <= 30 for s in conv.sessions), conv.id
        first, last = conv.sessions[0].date, conv.sessions[-1].date
        assert (last - first).days >= 90 and 2025 <= first.year <= last.year <= 2026, conv.id
        assert 4 <= len(conv.questions) <= 8, conv.id
        assert len(conv.expect.trivia) >= 4 and conv.expect.safety, conv.id
        notes = [conv.description] + [
            item.note for name in CATEGORIES for item in getattr(conv.expect, name)
        ]
        assert all(re.search(r"[A-Za-z]{3}", note) for note in notes), conv.id  # in English
        user = [text for s in conv.sessions for role, text in s.turns if role is Role.USER]
        every = [text for s in conv.sessions for _, text in s.turns]
        for category in ("current", "stale", "safety", "trivia", "events"):
            for item in getattr(conv.expect, category):
                assert any(holds(item.any, t) for t in user), (conv.id, category, item.id)
        for slot in conv.expect.slots:
            assert any(holds(slot.value, t) for t in user), (conv.id, slot.id)
        for q in conv.questions:
            assert any(holds(q.answer, t) for t in every), (conv.id, q.q)
            assert not q.stale or any(holds(q.stale, t) for t in every), (conv.id, q.q)
        for text in user:  # no two conversations share a sentence
            assert seen.setdefault(text, conv.id) == conv.id, (conv.id, text)
