"""Two data directories never share one site id. A data directory copied with its ``site``
file (a restored backup, ``cp -r``, a ``site`` linked to another's) would otherwise apply a
forget under the original's id: the journal would count the original done while its copies of
the forgotten turn stay. The copy takes an id of its own, and the forget reaches both (every
byte scanned). Runs on a SQLite store file and on PostgreSQL and MySQL/MariaDB when given."""

from __future__ import annotations

import shutil
from pathlib import Path

from memstrata.settings import SITE_FILE
from tests.reliability.scan import scan
from tests.reliability.test_erasure import EN, ZH
from tests.reliability.test_erasure_sites import _open, _reached_by_b, store_url

__all__ = ["store_url"]


def test_a_copied_data_directory_does_not_apply_forgets_for_the_original(
    tmp_path: Path, store_url: str
) -> None:
    b_dir, ids, _ = _reached_by_b(tmp_path, store_url)
    copy_dir = tmp_path / "copy"
    shutil.copytree(b_dir, copy_dir)
    with _open(copy_dir, store_url) as copy:  # the copy in use: an id of its own
        own = (copy_dir / SITE_FILE).read_text("ascii").splitlines()[0]
        original = (b_dir / SITE_FILE).read_text("ascii").splitlines()[0]
        assert own != original and {own, original} <= {s.id for s in copy.sites()}
    with _open(tmp_path / "a", store_url) as a:
        assert a.forget(ids[EN], "u").counts["sites_waiting"] == 2  # B and its copy
        with _open(copy_dir, store_url):
            assert scan(copy_dir, [EN]) == []
        (pending,) = a.store.pending_erasures()  # still waiting for B itself
        assert pending.sites == tuple(
            sorted([own, (tmp_path / "a" / SITE_FILE).read_text("ascii").splitlines()[0]])
        )
    assert scan(b_dir, [EN])
    with _open(b_dir, store_url) as b:
        assert scan(b_dir, [EN]) == [] and scan(b_dir, [ZH])  # the kept turn stays
        assert b.store.pending_erasures() == []
