"""A damaged database: reads say so, and every write is refused until it is repaired."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.cli import main
from memstrata.errors import DamagedStoreError
from memstrata.model import Scope
from memstrata.settings import load_settings
from tests.mounts import needs_mounts, run_in_mount_namespace, small_disk

PAGE = 4096


def damage_page_holding(db: Path, marker: bytes) -> None:
    """Overwrite the header of the page that holds ``marker`` (a leaf of the episodes table)."""
    data = bytearray(db.read_bytes())
    at = data.index(marker)
    page = at - at % PAGE
    data[page : page + 16] = b"\xff" * 16
    db.write_bytes(bytes(data))


def damaged_data_dir(data_dir: Path) -> Path:
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        mem.remember([f"turn {i} " + "padding " * 40 for i in range(60)], "alice")
        mem.remember("the marker turn QX7Z", "alice")
        mem.remember([f"late turn {i} " + "padding " * 40 for i in range(60)], "alice")
    db = data_dir / "memstrata.db"
    with closing(sqlite3.connect(db)) as conn:  # every page in the main file, none in the WAL
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    damage_page_holding(db, b"the marker turn QX7Z")
    return db


def test_reads_on_a_damaged_page_fail_and_every_write_is_refused(data_dir: Path) -> None:
    db = damaged_data_dir(data_dir)
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        with pytest.raises(DamagedStoreError, match="doctor --repair"):
            mem.list("alice", limit=1000)
        with pytest.raises(DamagedStoreError, match="restore --from-trace"):
            mem.remember("written into a damaged file", "alice")
    # another process, later, that never read the damaged page: still refused
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        with pytest.raises(DamagedStoreError):
            mem.remember("written into a damaged file", "bob")
        assert mem.list("bob") == []
    assert b"written into a damaged file" not in db.read_bytes()


def test_the_cli_refuses_to_remember_into_a_damaged_store(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    damaged_data_dir(data_dir)
    assert main(["list", "--user", "alice", "--limit", "1000", "--data-dir", str(data_dir)]) == 7
    assert "damaged" in capsys.readouterr().err
    assert main(["remember", "more", "--user", "bob", "--data-dir", str(data_dir)]) == 7
    err = capsys.readouterr().err
    assert "damaged" in err and "memstrata doctor --repair" in err
    assert "Traceback" not in err
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        assert mem.store.list_episodes(Scope("bob")) == []


def test_a_rebuild_keeps_every_row_around_the_damaged_page(data_dir: Path) -> None:
    from memstrata.doctor import check_database, rebuild_database

    db = damaged_data_dir(data_dir)
    done = rebuild_database(db)
    assert "unreadable stretches skipped: episodes 1" in done
    assert check_database(db) == []
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        texts = [e.text for e in mem.store.iter_episodes(Scope("alice"))]
        assert 100 <= len(texts) < 121
        assert {f"late turn {i} " + "padding " * 40 for i in range(50, 60)} <= set(texts)
        assert {f"turn {i} " + "padding " * 40 for i in range(10)} <= set(texts)
        mem.remember("writes work again", "alice")


@needs_mounts
def test_a_repair_on_a_full_disk_fails_cleanly_and_leaves_the_file_in_place(
    tmp_path: Path,
) -> None:
    disk = tmp_path / "disk"
    result = run_in_mount_namespace(
        small_disk(disk, "2m"),
        f"""
        from pathlib import Path
        from memstrata.doctor import diagnose
        from memstrata.settings import load_settings
        from tests.integration.test_damaged_store import damaged_data_dir
        from tests.mounts import fill_disk

        data = Path({str(disk / "mem")!r})
        db = damaged_data_dir(data)
        before = db.read_bytes()
        fill_disk(data, leave=60_000)
        report = diagnose(load_settings(data_dir=data), repair=True)
        for p in report.problems:
            print("PROBLEM", p.what, "FIXED", p.fixed)
        print("SAME", db.read_bytes() == before)
        print("FILES", sorted(p.name for p in data.iterdir()))
        """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "PROBLEM the repair failed" in result.stdout, result.stdout
    assert "FIXED None" in result.stdout and "rebuilt from" not in result.stdout
    assert "SAME True" in result.stdout
    [files] = [line for line in result.stdout.splitlines() if line.startswith("FILES")]
    assert ".rebuilt" not in files


def test_a_store_opened_before_the_damage_was_seen_elsewhere_refuses_writes(
    data_dir: Path,
) -> None:
    damaged_data_dir(data_dir)
    with Memory.open(settings=load_settings(data_dir=data_dir)) as early:
        reader = Memory.open(settings=load_settings(data_dir=data_dir))
        try:
            with pytest.raises(DamagedStoreError):
                reader.list("alice", limit=1000)
        finally:
            reader.close()
        with pytest.raises(DamagedStoreError):
            early.remember("written into a damaged file", "bob")
