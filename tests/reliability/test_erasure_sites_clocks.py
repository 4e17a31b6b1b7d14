"""A data directory whose clock ran ahead, then was set back, still applies the forgets that
wait for it. Its last complete sweep, by its clock, came after them, so the journal's time
bound alone would never give them to it: the forget would wait for it for as long as it runs,
its texts kept in the journal and its copies in the directory. Runs on a SQLite store file
and on PostgreSQL and MySQL/MariaDB when given."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from tests.conftest import FixedClock
from tests.reliability.scan import scan
from tests.reliability.test_erasure import EN, ZH
from tests.reliability.test_erasure_sites import _open, _reached_by_b, store_url

__all__ = ["store_url"]


def test_a_data_directory_whose_clock_was_set_back_applies_the_forget_waiting_for_it(
    tmp_path: Path, store_url: str
) -> None:
    right = FixedClock()
    b_dir, ids, _ = _reached_by_b(tmp_path, store_url, right)
    ahead = FixedClock(right.now() + timedelta(hours=2))
    with _open(b_dir, store_url, ahead) as b:  # a complete sweep, two hours ahead
        ahead.value = right.now()  # then the clock is set right
        right.advance(minutes=5)
        with _open(tmp_path / "a", store_url, right) as a:
            assert a.forget(ids[EN], "u").counts["sites_waiting"] == 1
        ahead.advance(minutes=6)
        assert b.finish_erasures() == 1  # its next sweep
        assert scan(b_dir, [EN]) == [] and scan(b_dir, [ZH])
        assert b.store.pending_erasures() == []  # done: its texts dropped
