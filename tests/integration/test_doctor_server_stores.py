"""``memstrata doctor`` and ``memstrata restore --from-trace`` with the records on a database
server (``--store-url`` naming PostgreSQL or MariaDB/MySQL): the server reached and its schema
compared with this version's migrations, the SQLite file's checks skipped with the reason, the
trace compared with the server's episodes, and a lost database refilled from the trace. Each
case runs when the engine's test server is set (see :mod:`tests.contract.backends`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstrata.api import Memory
from memstrata.cli import main
from memstrata.cli.doctor_commands import PROBLEMS_REMAIN
from memstrata.doctor import server as server_check
from memstrata.doctor.server import known_migrations, open_server_store, read_schema
from memstrata.model import EpisodeFilter, Scope
from memstrata.store.migrations import Migration
from memstrata.store.url import parse_store_url
from tests.contract.backends import fresh_url

ENGINES = ("postgresql", "mysql")
ALICE = Scope("alice")


@pytest.fixture(params=ENGINES)
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database on each server engine."""
    with fresh_url(request.param, tmp_path) as url:
        yield url


def run(capsys: pytest.CaptureFixture[str], url: str, data_dir: Path, *args: str, code: int) -> str:
    capsys.readouterr()
    assert main(["--store-url", url, *args, "--data-dir", str(data_dir)]) == code
    return capsys.readouterr().out


def doctor(
    capsys: pytest.CaptureFixture[str], url: str, data_dir: Path, *args: str, code: int
) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(
        run(capsys, url, data_dir, "doctor", *args, "--json", code=code)
    )
    assert report["ok"] is (code == 0)
    return report


def remember(capsys: pytest.CaptureFixture[str], url: str, data_dir: Path) -> list[str]:
    ids = []
    for text in ("I prefer green tea", "我住在杭州", "my sister is Ana"):
        out = run(capsys, url, data_dir, "remember", text, "--user", "alice", "--json", code=0)
        ids += [e["id"] for e in json.loads(out)]
    return ids


def stored(url: str, data_dir: Path) -> list[tuple[str, str]]:
    with Memory.open(data_dir=data_dir, store_url=url) as mem:
        return [
            (e.id, e.text)
            for e in mem.store.iter_episodes(ALICE, EpisodeFilter(include_archived=True))
        ]


def test_a_healthy_server_store_is_all_well_and_no_file_is_checked(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "mem"
    remember(capsys, server, data_dir)
    report = doctor(capsys, server, data_dir, code=0)
    checked = report["checked"]
    assert checked[0] == f"database: {parse_store_url(server).shown}"
    assert (
        checked[1].startswith("database: the SQLite file checks (integrity_check")
        and "skipped" in checked[1]
    )
    assert checked[2].startswith("database: reachable, ")
    assert any(k in checked[2] for k in ("PostgreSQL", "MariaDB", "MySQL"))
    assert checked[3].startswith("database: schema current")
    assert [c.split(":")[0] for c in checked[4:]] == ["embedding cache", "saved indexes", "trace"]
    assert not (data_dir / "memstrata.db").exists()
    out = run(capsys, server, data_dir, "doctor", code=0)
    assert "are skipped: the records are on a" in out and out.rstrip().endswith("all well")
    report = doctor(capsys, server, data_dir, "--repair", code=0)
    assert not (data_dir / "memstrata.db").exists()  # --repair never makes or rebuilds a file
    # a machine without a data directory still checks the server
    report = doctor(capsys, server, tmp_path / "none", code=0)
    assert report["checked"][-1].startswith(f"data directory: none at {tmp_path / 'none'}")
    assert not (tmp_path / "none").exists()


def test_a_lost_server_database_is_found_by_doctor_and_refilled_by_restore(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The records were written through one database; the data directory's trace holds them.
    Pointed at a new, empty database (the old one lost), doctor names the trace lines with no
    episode, and restore puts them back verbatim through the server store."""
    data_dir = tmp_path / "mem"
    engine = parse_store_url(server).engine
    with fresh_url(engine, tmp_path / "old") as old:
        ids = remember(capsys, old, data_dir)
        before = stored(old, data_dir)
    report = doctor(capsys, server, data_dir, code=PROBLEMS_REMAIN)
    [schema] = report["problems"]  # a check writes nothing: the trace waits for a schema
    assert "holds no memstrata schema" in schema["problem"] and schema["fixed"] is None
    report = doctor(capsys, server, data_dir, "--repair", code=PROBLEMS_REMAIN)
    schema, problem = report["problems"]
    assert schema["fixed"] is not None and schema["fixed"].startswith("applied 0001_initial")
    assert problem["part"] == "trace" and problem["fixed"] is None
    assert "3 trace line(s) whose episode is not stored" in problem["problem"]
    assert all(i in problem["problem"] for i in ids)
    assert "memstrata restore --from-trace" in problem["problem"]
    out = run(capsys, server, data_dir, "restore", "--from-trace", "--user", "alice", code=0)
    assert "restored 3 episode(s)" in out
    assert stored(server, data_dir) == before
    doctor(capsys, server, data_dir, code=0)
    # a second restore into the now full scope is refused, and changes nothing
    run(capsys, server, data_dir, "restore", "--from-trace", "--user", "alice", code=2)
    assert stored(server, data_dir) == before


def test_episodes_with_no_trace_line_are_appended_from_the_server_store(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "mem"
    ids = remember(capsys, server, data_dir)
    for file in (data_dir / "trace").rglob("*.jsonl"):
        file.unlink()
    report = doctor(capsys, server, data_dir, code=PROBLEMS_REMAIN)
    [problem] = report["problems"]
    assert "3 episode(s) with no trace line" in problem["problem"]
    report = doctor(capsys, server, data_dir, "--repair", code=0)
    assert report["problems"][0]["fixed"] == "appended 3 episode(s) to the trace"
    lines = [
        json.loads(x)
        for f in (data_dir / "trace").rglob("*.jsonl")
        for x in f.read_text().splitlines()
    ]
    assert sorted(e["id"] for e in lines) == sorted(ids)
    doctor(capsys, server, data_dir, code=0)


def test_turns_traced_through_another_data_directory_are_not_a_problem_nor_copied(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    elsewhere, here = tmp_path / "b", tmp_path / "a"
    remember(capsys, server, elsewhere)  # captured, and traced, through another machine
    run(capsys, server, here, "remember", "a note made here", "--user", "bob", code=0)
    report = doctor(capsys, server, here, "--repair", code=0)
    assert report["problems"] == []
    assert any("3 episode(s) have no line here" in line for line in report["checked"])
    traced = "".join(f.read_text() for f in (here / "trace").rglob("*.jsonl"))
    assert "a note made here" in traced and "green tea" not in traced  # nothing copied in


def test_repair_on_a_server_store_mends_the_trace_and_the_cache_and_nothing_else(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "mem"
    remember(capsys, server, data_dir)
    [file] = (data_dir / "trace").glob("*/*.jsonl")
    with file.open("ab") as fh:
        fh.write(b'{"at": "2026-01-01T00:00:00.000000Z", "surface": "cli", "te')  # torn
    (data_dir / "embeddings.db").write_bytes(b"garbage" * 500)
    before = stored(server, data_dir)
    report = doctor(capsys, server, data_dir, code=PROBLEMS_REMAIN)
    assert sorted(p["part"] for p in report["problems"]) == ["cache", "trace"]
    report = doctor(capsys, server, data_dir, "--repair", code=0)
    assert all(p["fixed"] for p in report["problems"])
    assert not (data_dir / "embeddings.db").exists()
    assert not list(data_dir.glob("memstrata.db*"))  # no database file made or rebuilt
    assert stored(server, data_dir) == before
    doctor(capsys, server, data_dir, code=0)


def _open_with(url: str, migrations: tuple[Migration, ...]) -> None:
    open_server_store(parse_store_url(url), migrations).close()


def _all_migrations(url: str) -> tuple[Migration, ...]:
    where = parse_store_url(url)
    return known_migrations(where.engine, read_schema(where).version)


#: a migration a later memstrata might bring, harmless on both engines
PROBE = Migration("9000_doctor_probe", ("CREATE TABLE doctor_probe (x INTEGER)",))


def test_a_schema_lacking_migrations_is_reported_and_repair_applies_them(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schema of this version, checked by a memstrata that knows one more migration."""
    data_dir = tmp_path / "mem"
    remember(capsys, server, data_dir)
    newer = (*_all_migrations(server), PROBE)
    monkeypatch.setattr(server_check, "known_migrations", lambda engine, version: newer)
    report = doctor(capsys, server, data_dir, code=PROBLEMS_REMAIN)
    [problem] = report["problems"]
    assert problem["part"] == "database"
    assert f"lacks 1 migration(s): {PROBE.name}" in problem["problem"]
    assert "trace: not compared with the database" in " ".join(report["checked"])
    assert PROBE.name not in read_schema(parse_store_url(server)).applied  # a check writes nothing
    report = doctor(capsys, server, data_dir, "--repair", code=0)
    assert report["problems"][0]["fixed"] == f"applied {PROBE.name}"
    assert PROBE.name in read_schema(parse_store_url(server)).applied
    report = doctor(capsys, server, data_dir, code=0)
    assert f"the last {PROBE.name}" in " ".join(report["checked"])


def test_a_schema_from_a_newer_memstrata_is_reported_and_left_alone(
    server: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "mem"
    remember(capsys, server, data_dir)
    _open_with(server, (*_all_migrations(server), Migration("9999_future", ())))
    for args in ((), ("--repair",)):
        report = doctor(capsys, server, data_dir, *args, code=PROBLEMS_REMAIN)
        database = [p for p in report["problems"] if p["part"] == "database"]
        assert len(database) == 1 and "does not know: 9999_future" in database[0]["problem"]
        assert database[0]["fixed"] is None
    assert "9999_future" in read_schema(parse_store_url(server)).applied


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://mem:s3cret-pw@127.0.0.1:1/memstrata",
        "mysql://mem:s3cret-pw@127.0.0.1:1/memstrata",
    ],
)
def test_an_unreachable_server_is_a_problem_shown_without_its_password(
    url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "mem"
    data_dir.mkdir()
    report = doctor(capsys, url, data_dir, "--repair", code=PROBLEMS_REMAIN)
    [problem] = report["problems"]
    assert problem["part"] == "database" and "cannot reach the database" in problem["problem"]
    assert "***" in problem["problem"]
    text = json.dumps(report)
    assert "s3cret-pw" not in text
    assert "trace: not compared with the database" in " ".join(report["checked"])
    assert not (data_dir / "memstrata.db").exists()


def test_a_sqlite_store_url_is_the_file_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``store_url`` naming a SQLite file elsewhere: that file is checked and compared with
    the trace, not the data directory's default file."""
    data_dir, elsewhere = tmp_path / "mem", tmp_path / "db" / "records.db"
    url = f"sqlite:///{elsewhere}"
    remember(capsys, url, data_dir)
    report = doctor(capsys, url, data_dir, code=0)
    assert report["checked"][0] == f"database: {elsewhere}"
    assert not (data_dir / "memstrata.db").exists()
    for file in (data_dir / "trace").rglob("*.jsonl"):
        file.unlink()
    report = doctor(capsys, url, data_dir, code=PROBLEMS_REMAIN)
    assert "3 episode(s) with no trace line" in report["problems"][0]["problem"]
