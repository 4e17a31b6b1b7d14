"""``memstrata fact add`` and ``memstrata fact list``: a fact's time and slot from the command
line, the filters, and bad values refused with exit 2 and nothing stored."""

from __future__ import annotations

import pytest

from tests.e2e.cli import Cli

ALICE = ("--user", "alice")


def test_add_with_time_and_slot_then_list_by_slot(cli: Cli) -> None:
    shrimp = cli.json(
        "fact",
        "add",
        "Alice is allergic to shrimp 对虾过敏",
        *ALICE,
        "--category",
        "health",
        "--slot",
        " allergy:shrimp ",
        "--when-text",
        "since last May",
        "--when-start",
        "2025-05-01T08:00:00+08:00",
        "--when-end",
        "2025-06-01",
    )
    assert isinstance(shrimp, dict)
    assert shrimp["category"] == "health" and shrimp["slot"] == "allergy:shrimp"
    assert shrimp["when"] == {
        "text": "since last May",
        "start": "2025-05-01T00:00:00.000000Z",
        "end": "2025-06-01T00:00:00.000000Z",
    }
    worded = cli.json(
        "fact", "add", "Works at Acme", *ALICE, "--slot", "employer",
        "--when-start", "2025-05-01", "--when-end", "2025-06-01",
    )  # fmt: skip
    assert isinstance(worded, dict) and worded["when"]["text"] == "2025-05"
    cli("fact", "add", "Likes tea", *ALICE, "--category", "preference")

    def listed(*filters: str) -> list[str]:
        found = cli.json("fact", "list", *ALICE, *filters)
        assert isinstance(found, list)
        return [f["text"] for f in found]

    assert listed("--slot-kind", "allergy") == ["Alice is allergic to shrimp 对虾过敏"]
    assert listed("--slot", "employer") == ["Works at Acme"]
    assert listed("--category", "health") == ["Alice is allergic to shrimp 对虾过敏"]
    assert len(listed()) == 3
    out, _ = cli("fact", "list", *ALICE, "--slot", "allergy:shrimp")
    assert "slot allergy:shrimp" in out
    assert "when: since last May [2025-05-01 00:00:00, 2025-06-01 00:00:00) UTC" in out
    out, _ = cli("get", str(shrimp["id"]), *ALICE)
    assert "since last May" in out and "allergy:shrimp" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--when-text", "next week"), "--when-text needs --when-start and --when-end"),
        (("--when-start", "2025-05-01"), "both --when-start and --when-end"),
        (("--when-start", "2025-06-01", "--when-end", "2025-05-01"), "before its end"),
        (("--when-start", "soon", "--when-end", "2025-05-01"), "when start"),
        (("--slot", "x" * 10_000), "slot"),
        (("--slot", "a\tb"), "slot"),
    ],
)
def test_bad_values_exit_2_and_store_nothing(cli: Cli, args: tuple[str, ...], message: str) -> None:
    cli("init")
    _, err = cli("fact", "add", "Likes tea", *ALICE, *args, code=2)
    assert message in err and err.startswith("error: ")
    assert cli.json("fact", "list", *ALICE) == []


def test_a_kind_with_a_colon_is_refused(cli: Cli) -> None:
    cli("init")
    _, err = cli("fact", "list", *ALICE, "--slot-kind", "allergy:shrimp", code=2)
    assert "colon" in err
