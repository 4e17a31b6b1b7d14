"""`memstrata doctor` and `memstrata restore --from-trace`: damaged database, torn trace lines,
records without lines, a damaged cache, and a scope rebuilt from the trace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from memstrata.api import Memory
from memstrata.cli.doctor_commands import PROBLEMS_REMAIN
from memstrata.model import Episode, EpisodeFilter, Role, Scope
from memstrata.settings import load_settings
from memstrata.trace import JsonlTrace
from tests.conftest import FixedClock
from tests.e2e.cli import Cli
from tests.integration.test_damaged_store import damaged_data_dir


def doctor(cli: Cli, *args: str, code: int) -> dict:  # type: ignore[type-arg]
    out, _ = cli("doctor", *args, "--json", code=code)
    report = json.loads(out)
    assert report["ok"] is (code == 0)
    return report  # type: ignore[no-any-return]


def test_a_clean_data_directory_is_all_well(cli: Cli) -> None:
    cli("remember", "I prefer green tea", "--user", "alice")
    report = doctor(cli, code=0)
    assert report["problems"] == []
    checked = [c.split(":")[0] for c in report["checked"]]
    assert checked == ["database", "embedding cache", "saved indexes", "trace"]
    out, _ = cli("doctor")
    assert "all well" in out


def test_a_damaged_database_is_rebuilt_and_lost_episodes_come_back_from_the_trace(
    cli: Cli, data_dir: Path
) -> None:
    db = damaged_data_dir(data_dir)
    everything = sorted(e["id"] for e in map(json.loads, _trace_lines(data_dir)))
    report = doctor(cli, code=PROBLEMS_REMAIN)
    assert any(p["part"] == "database" and "malformed" in p["problem"] for p in report["problems"])
    cli("remember", "refused", "--user", "alice", code=7)

    report = doctor(cli, "--repair", code=PROBLEMS_REMAIN)
    fixed = [p["fixed"] for p in report["problems"] if p["part"] == "database"]
    assert fixed and all("rebuilt from what was readable" in f for f in fixed)
    [aside] = [p for p in data_dir.glob("memstrata.db.damaged-*") if p.name[-4:] != "-wal"]
    assert b"the marker turn QX7Z" in aside.read_bytes()
    remaining = [p for p in report["problems"] if p["fixed"] is None]
    assert len(remaining) == 1, remaining
    [lost] = remaining
    assert "restore --from-trace --missing" in lost["problem"]

    restored = cli.json("restore", "--from-trace", "--missing", "--user", "alice")
    assert isinstance(restored, dict) and restored["restored"]
    doctor(cli, code=0)
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        ids = [e.id for e in mem.store.iter_episodes(Scope("alice"))]
        assert sorted(ids) == everything
        assert any(
            e.text == "the marker turn QX7Z" for e in mem.store.iter_episodes(Scope("alice"))
        )
        mem.remember("written after the repair", "alice")
    assert db.exists()


def _trace_lines(data_dir: Path) -> list[str]:
    return [
        line
        for file in sorted((data_dir / "trace").glob("*/*.jsonl"))
        for line in file.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def test_torn_lines_are_mended_and_untraced_episodes_are_appended(cli: Cli, data_dir: Path) -> None:
    cli("remember", "first turn", "--user", "alice")
    [file] = (data_dir / "trace").glob("chat/*.jsonl")
    with file.open("ab") as fh:
        fh.write(b'{"at": "2026-01-01T00:00:00.000000Z", "surface": "chat", "te')  # torn
    [after] = cli.json("remember", "second turn", "--user", "alice")  # type: ignore[misc]
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        untraced = Episode(
            id="ep_01JUNTRACED000000000000000",
            scope=Scope("alice", "t1"),
            surface="import",
            session_id="s1",
            speaker="alice",
            role=Role.USER,
            text="stored without a trace line",
            time=FixedClock().now(),
        )
        mem.store.add_episodes(Scope("alice"), [untraced])
    report = doctor(cli, code=PROBLEMS_REMAIN)
    problems = [p["problem"] for p in report["problems"]]
    assert any("1 torn line" in p for p in problems), problems
    assert any("1 episode(s) with no trace line" in p and untraced.id in p for p in problems), (
        problems
    )

    report = doctor(cli, "--repair", code=0)
    assert all(p["fixed"] for p in report["problems"])
    doctor(cli, code=0)
    events = list(JsonlTrace(data_dir / "trace").read())
    assert {e["id"] for e in events} >= {after["id"], untraced.id}
    assert any(e["text"] == "second turn" for e in events)


def test_a_damaged_cache_is_deleted(cli: Cli, data_dir: Path) -> None:
    cli("init")
    (data_dir / "embeddings.db").write_bytes(b"garbage" * 500)
    report = doctor(cli, code=PROBLEMS_REMAIN)
    assert [p["part"] for p in report["problems"]] == ["cache"]
    doctor(cli, "--repair", code=0)
    assert not (data_dir / "embeddings.db").exists()


def test_a_scope_is_restored_from_the_trace_into_an_empty_store(
    cli: Cli, data_dir: Path, tmp_path: Path
) -> None:
    kept = cli.json(
        "remember",
        "I moved to Lisbon",
        "我喜欢喝茶",
        "--user",
        "alice",
        "--thread",
        "t1",
        "--session",
        "s9",
    )
    [gone] = cli.json("remember", "forget me", "--user", "alice")  # type: ignore[misc]
    cli("delete", gone["id"], "--user", "alice", "--reason", "user-request")
    cli("remember", "bob's turn", "--user", "bob")
    fresh = tmp_path / "fresh"
    shutil.copytree(data_dir / "trace", fresh / "trace")
    restored = Cli(fresh, cli.capsys).json("restore", "--from-trace", "--user", "alice")
    assert isinstance(restored, dict) and isinstance(kept, list)
    assert restored["restored"] == [e["id"] for e in kept]
    with Memory.open(settings=load_settings(data_dir=fresh)) as mem:
        got = list(mem.store.iter_episodes(Scope("alice"), EpisodeFilter(include_archived=True)))
        assert [(e.id, e.text, e.scope, e.session_id) for e in got] == [
            (k["id"], k["text"], Scope("alice", "t1"), "s9") for k in kept
        ]
        assert [e.time.isoformat() for e in got] == [
            e.time.isoformat()
            for e in mem.store.get_episodes(Scope("alice"), [k["id"] for k in kept])
        ]
        assert list(mem.store.iter_episodes(Scope("bob"))) == []
    _, err = Cli(fresh, cli.capsys)("restore", "--from-trace", "--user", "alice", code=2)
    assert "empty scope" in err
    _, err = Cli(fresh, cli.capsys)("restore", "--user", "alice", code=2)
    assert "--from-trace" in err


def test_restoring_a_user_the_trace_never_saw_is_not_found(cli: Cli) -> None:
    cli("remember", "I prefer green tea", "--user", "alice")
    _, err = cli("restore", "--from-trace", "--user", "nobody", code=3)
    assert "holds no episodes" in err and "nobody" in err


def test_a_trace_file_that_cannot_be_read_is_a_problem_not_a_traceback(
    cli: Cli, data_dir: Path
) -> None:
    cli("remember", "I prefer green tea", "--user", "alice")
    (data_dir / "trace" / "chat" / "2020-01-01.jsonl").mkdir()  # a folder where a file should be
    report = doctor(cli, "--repair", code=PROBLEMS_REMAIN)
    [problem] = report["problems"]
    assert "2020-01-01.jsonl: cannot be read" in problem["problem"]
    _, err = cli("restore", "--from-trace", "--user", "bob", code=7)
    assert "cannot read the trace file" in err and "Traceback" not in err


def test_rows_naming_a_missing_parent_are_removed(cli: Cli, data_dir: Path) -> None:
    import sqlite3
    from contextlib import closing

    cli("remember", "I prefer green tea", "--user", "alice")
    with closing(sqlite3.connect(data_dir / "memstrata.db")) as conn, conn:
        conn.execute(
            "INSERT INTO fact_sources (fact_id, episode_id, ord) VALUES ('fa_x', 'ep_y', 0)"
        )
    report = doctor(cli, code=PROBLEMS_REMAIN)
    [problem] = report["problems"]
    assert problem["problem"].startswith("foreign key: fact_sources")
    cli("remember", "writes still work: the file is sound", "--user", "alice")
    report = doctor(cli, "--repair", code=0)
    assert report["problems"][0]["fixed"] == "removed 1 row(s) naming a missing parent"
    doctor(cli, code=0)


def test_a_missing_data_directory_is_not_found(cli: Cli, data_dir: Path) -> None:
    _, err = cli("doctor", code=3)
    assert str(data_dir) in err
    assert not data_dir.exists()


def test_a_malformed_episode_line_does_not_stop_a_restore(
    cli: Cli, data_dir: Path, tmp_path: Path
) -> None:
    [kept] = cli.json("remember", "I moved to Lisbon", "--user", "alice")  # type: ignore[misc]
    [file] = (data_dir / "trace").glob("chat/*.jsonl")
    with file.open("a", encoding="utf-8") as fh:
        fh.write('{"event": "episode", "id": "ep_no_fields"}\n')
    fresh = tmp_path / "fresh"
    shutil.copytree(data_dir / "trace", fresh / "trace")
    restored = Cli(fresh, cli.capsys).json("restore", "--from-trace", "--user", "alice")
    assert restored == {"restored": [kept["id"]]}
