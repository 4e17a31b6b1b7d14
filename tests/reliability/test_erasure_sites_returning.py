"""A data directory the store stopped knowing still holds its copies: retired by mistake while
in use, or its ``site`` file emptied by a crash (a new id is made). When it is seen again it
applies every erasure of the journal it has not applied, not only those made since, so a forget
made meanwhile reaches its copies (every byte scanned) and the turns it keeps stay untouched.
Each case runs on a SQLite store file and on PostgreSQL and MySQL/MariaDB when given."""

from __future__ import annotations

from pathlib import Path

from memstrata.settings import SITE_FILE
from tests.conftest import FixedClock
from tests.reliability.scan import scan
from tests.reliability.test_erasure import EN, ZH, _cached
from tests.reliability.test_erasure_sites import (
    _open,
    _reached_by_b,
    store_url,
)

__all__ = ["store_url"]


def _kept_lines(data_dir: Path) -> list[str]:
    """The raw trace lines holding the kept (Chinese) turn, as stored."""
    return [
        line
        for path in sorted((data_dir / "trace").rglob("*.jsonl"))
        for line in path.read_text("utf-8").splitlines()
        if ZH in line
    ]


def test_a_data_directory_retired_while_in_use_erases_what_was_forgotten_meanwhile(
    tmp_path: Path, store_url: str
) -> None:
    clock = FixedClock()
    b_dir, ids, embedded = _reached_by_b(tmp_path, store_url, clock)
    kept = _kept_lines(b_dir)
    with _open(b_dir, store_url, clock) as b:  # B serves on: it is in use
        b_site = (b_dir / SITE_FILE).read_text("ascii").splitlines()[0]
        with _open(tmp_path / "a", store_url, clock) as a:
            assert a.retire_site(b_site) == 0  # an operator's mistake
            clock.advance(hours=1)
            report = a.forget(ids[EN], "u")
            assert "sites_waiting" not in report.counts  # B not waited for: done at once
        assert scan(b_dir, [EN])  # B's copies are still there
        clock.advance(minutes=1)
        assert b.finish_erasures() == 1  # its next sweep: enrolled again, it applies it
        assert scan(b_dir, [EN]) == []
        assert _cached(b_dir, embedded) == 0  # the texts were gone: its cache was dropped
        assert b_site in {s.id for s in b.sites()}
        assert b.finish_erasures() == 0  # applied once
    assert _kept_lines(b_dir) == kept and kept


def test_a_data_directory_whose_site_file_was_emptied_erases_what_it_missed(
    tmp_path: Path, store_url: str
) -> None:
    clock = FixedClock()
    b_dir, ids, _ = _reached_by_b(tmp_path, store_url, clock)
    kept = _kept_lines(b_dir)
    old_site = (b_dir / SITE_FILE).read_text("ascii").splitlines()[0]
    with _open(tmp_path / "a", store_url, clock) as a:
        assert a.forget(ids[EN], "u").counts["sites_waiting"] == 1
    (b_dir / SITE_FILE).write_text("", encoding="ascii")  # a crash before the id reached disk
    clock.advance(hours=1)
    with _open(b_dir, store_url, clock) as b:  # a new id, and the forget reaches its copies
        new_site = (b_dir / SITE_FILE).read_text("ascii").splitlines()[0]
        assert new_site != old_site
        assert scan(b_dir, [EN]) == []
        listed = {s.id: s.waiting for s in b.sites()}
        assert listed[new_site] == 0 and listed[old_site] == 1  # the old id: for an operator
        assert b.retire_site(old_site) == 1
        assert b.store.pending_erasures() == []
    assert _kept_lines(b_dir) == kept and kept
