"""ChatGPT's conversations.json: the branch last seen, other branches on request, dry run,
idempotent import, a re-export adding only its new messages."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from memstrata import importers
from memstrata.api import Memory
from memstrata.errors import ImportFormatError, TooLargeError
from memstrata.model import Role, Scope

FIXTURE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "chatgpt_conversations.json"
)
TRIP = "6750a1f2-0b7c-8005-9d3e-1c2f3a4b5c6d"
RUST = "6752c000-2222-8005-bbbb-000000000003"


def _texts(memory: Memory, scope: Scope) -> list[str]:
    return [e.text for e in memory.list(scope, "episode", limit=100)]  # type: ignore[union-attr]


def _write(tmp_path: Path, data: Any, name: str = "conversations.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_the_branch_last_seen_is_read_root_first() -> None:
    batch = importers.load(FIXTURE, "chatgpt")
    trip, rust = batch.conversations
    assert trip.key == TRIP and rust.key == RUST
    ids = [t.metadata["message_id"] for t in trip.turns]
    assert ids == ["u-1", "a-1", "u-2b", "a-2b2", "u-3", "a-3", "a-4"]  # not u-2a, a-2a, a-2b1
    assert trip.turns[0].role == Role.USER and trip.turns[1].role == Role.ASSISTANT
    assert trip.turns[0].time is not None and trip.turns[0].time.timestamp() == 1733338100.5
    assert trip.turns[4].text == "[image]\nWhat dish is this? 这是什么菜？"
    assert trip.turns[5].text.startswith("search(")  # code keeps its text
    assert all(t.metadata["title"] == "Trip to Chengdu / 成都旅行" for t in trip.turns)
    # no current_node: the newest leaf; the hidden custom instructions and thoughts are skipped
    assert [t.metadata["message_id"] for t in rust.turns] == ["q3", "a3"]
    reasons = {(s.where.rsplit(" ", 1)[-1], s.reason) for s in batch.skipped}
    assert ("sys-1", "hidden system message") in reasons
    assert ("ctx3", "hidden user message") in reasons
    assert ("t-1", "non-text content (tether_browsing_display)") in reasons
    assert ("r3a", "non-text content (thoughts)") in reasons
    assert any(s.reason == "3 message(s) on other branches" for s in batch.skipped)
    assert any(s.reason == "no text messages" and "6751b000" in s.where for s in batch.skipped)


def test_all_branches_adds_the_other_branches_after_the_main_one() -> None:
    [trip, _] = importers.load(FIXTURE, "chatgpt", all_branches=True).conversations
    tail = [(t.metadata["message_id"], t.metadata["branch"]) for t in trip.turns[7:]]
    assert tail == [("u-2a", "alternate"), ("a-2a", "alternate"), ("a-2b1", "alternate")]
    assert trip.turns[8].metadata["parent_id"] == "u-2a"


def test_dry_run_then_import_then_nothing_more(memory: Memory) -> None:
    plan = memory.ingest(FIXTURE, "ana", fmt="chatgpt", dry_run=True)
    assert plan.dry_run and (plan.turns, plan.conversations, plan.present) == (9, 2, 0)
    assert {(s.source, s.turns) for s in plan.sources} == {(TRIP, 7), (RUST, 2)}
    assert plan.skipped and not _texts(memory, Scope("ana"))  # a dry run writes nothing

    done = memory.ingest(FIXTURE, "ana", fmt="chatgpt")
    assert (done.turns, done.present, done.dry_run) == (9, 0, False)
    assert len(_texts(memory, Scope("ana", TRIP))) == 7
    assert "我想在三个月内学会 Rust，每天能学一个小时。" in _texts(memory, Scope("ana", RUST))

    again = memory.ingest(FIXTURE, "ana", fmt="chatgpt")
    assert (again.turns, again.present) == (0, 9)
    assert len(_texts(memory, Scope("ana"))) == 9


def test_other_branches_on_request_add_only_those(memory: Memory) -> None:
    memory.ingest(FIXTURE, "ana", fmt="chatgpt")
    more = memory.ingest(FIXTURE, "ana", fmt="chatgpt", all_branches=True)
    assert (more.turns, more.present) == (3, 9)
    assert "Yes: ask for a mushroom broth (菌汤锅)." in _texts(memory, Scope("ana", TRIP))


def test_a_re_export_adds_only_its_new_messages(memory: Memory, tmp_path: Path) -> None:
    memory.ingest(FIXTURE, "ana", fmt="chatgpt")
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    mapping = data[0]["mapping"]
    mapping["a-4"]["children"] = ["u-5"]
    for node, parent, role, when, text in (
        ("u-5", "a-4", "user", 1733440000.0, "Booked Chen Mapo Tofu for Friday. 周五晚上七点。"),
        ("a-5", "u-5", "assistant", 1733440010.0, "Enjoy! Ask for 微辣 if you want it milder."),
    ):
        mapping[node] = {
            "id": node,
            "message": {
                "id": node,
                "author": {"role": role, "name": None, "metadata": {}},
                "create_time": when,
                "content": {"content_type": "text", "parts": [text]},
                "metadata": {},
            },
            "parent": parent,
            "children": ["a-5"] if node == "u-5" else [],
        }
    data[0]["current_node"] = "a-5"
    report = memory.ingest(_write(tmp_path, data), "ana", fmt="chatgpt")
    assert (report.turns, report.present) == (2, 9)
    assert [s.turns for s in report.sources] == [2, 0]


def test_isolated_in_the_given_user(memory: Memory) -> None:
    memory.ingest(FIXTURE, "ana", fmt="chatgpt")
    assert not _texts(memory, Scope("bo"))
    report = memory.ingest(FIXTURE, "bo", fmt="chatgpt")  # another user gets its own copy
    assert report.turns == 9 and len(_texts(memory, Scope("ana"))) == 9


def test_secrets_are_scrubbed_from_imported_turns(memory: Memory, tmp_path: Path) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data[0]["mapping"]["u-1"]["message"]["content"]["parts"] = ["my password: hunter22x ok"]
    memory.ingest(_write(tmp_path, data), "ana", fmt="chatgpt")
    assert not any("hunter22x" in t for t in _texts(memory, Scope("ana")))


def test_a_message_over_the_size_limit_refuses_the_file_and_stores_nothing(
    memory: Memory, tmp_path: Path
) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    data[2]["mapping"]["q3"]["message"]["content"]["parts"] = ["日志" * 60_000]
    with pytest.raises(TooLargeError, match=f"chatgpt:{RUST}:q3"):
        memory.ingest(_write(tmp_path, data), "ana", fmt="chatgpt")
    assert not _texts(memory, Scope("ana"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d[0]["mapping"].pop("a-2b2"), "node a-2b2 is named but not in the mapping"),
        (lambda d: d[0].pop("mapping"), "field 'mapping' should be an object"),
        (lambda d: d[0]["mapping"]["u-1"].update(parent="a-4"), "cycle"),
        (lambda d: d[0]["mapping"]["a-1"]["message"].pop("author"), "no author role"),
        (lambda d: d[0]["mapping"]["u-1"]["message"].update(create_time="noon"), "seconds"),
    ],
)
def test_malformed_files_name_the_place(tmp_path: Path, change: Any, message: str) -> None:
    data = json.loads(FIXTURE.read_text(encoding="utf-8"))
    change(data)
    with pytest.raises(ImportFormatError, match=message) as info:
        importers.load(_write(tmp_path, data), "chatgpt")
    assert f"conversation {TRIP}" in str(info.value)


def test_not_a_list_and_bad_json_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="list of conversations"):
        importers.load(_write(tmp_path, {"conversations": []}), "chatgpt")
    bad = tmp_path / "bad.json"
    bad.write_text('[{"title": "x",', encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"bad\.json:1"):
        importers.load(bad, "chatgpt")


def test_stable_ids_are_ulids_of_the_time_and_the_key() -> None:
    from datetime import UTC, datetime

    from memstrata.ids import ID_PATTERN, kind_of

    when = datetime(2024, 12, 4, 18, 48, 20, 500_000, tzinfo=UTC)
    first = importers.stable_id("ep", "ana\nchatgpt:c:m1", when)
    assert first == importers.stable_id("ep", "ana\nchatgpt:c:m1", when)
    assert first != importers.stable_id("ep", "bo\nchatgpt:c:m1", when)
    assert re.fullmatch(ID_PATTERN, first) and kind_of(first) == "episode"
    later = importers.stable_id("ep", "ana\nchatgpt:c:m0", datetime(2025, 1, 1, tzinfo=UTC))
    assert first < later  # the time leads, so ids sort by it
    # the leading 10 characters encode the milliseconds, as in any ULID
    ms = 0
    for char in first[3:13]:
        ms = ms * 32 + "0123456789ABCDEFGHJKMNPQRSTVWXYZ".index(char)
    assert ms == 1733338100500


def test_a_forgotten_turn_is_not_imported_again_and_the_report_says_so(memory: Memory) -> None:
    memory.ingest(FIXTURE, "ana", fmt="chatgpt")
    [turn] = [
        e
        for e in memory.list(Scope("ana", RUST), "episode", limit=10)
        if e.text == "我想在三个月内学会 Rust，每天能学一个小时。"  # type: ignore[union-attr]
    ]
    memory.forget(turn.id, Scope("ana"))
    for dry_run in (True, False):
        report = memory.ingest(FIXTURE, "ana", fmt="chatgpt", dry_run=dry_run)
        assert (report.turns, report.present) == (0, 8)
        assert (RUST, _FORGOTTEN_TURN) in report.skipped
    assert "我想在三个月内学会 Rust，每天能学一个小时。" not in _texts(memory, Scope("ana"))
    # another user importing the same file is not affected by ana's forget
    assert memory.ingest(FIXTURE, "bo", fmt="chatgpt").turns == 9


_FORGOTTEN_TURN = (
    "1 turn deleted or forgotten earlier: not imported again (remember one anew to bring it back)"
)
