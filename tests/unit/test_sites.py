"""Data directories as sites of copies: a stable id per directory, enrolled in the store, listed
and retired by operators (`memstrata sites`)."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.api.sites import site_id
from memstrata.cli import main
from memstrata.errors import ConfigError, NotFoundError
from memstrata.settings import load_settings


def _open(data_dir: Path, store: Path) -> Memory:
    return Memory.open(settings=load_settings(data_dir=data_dir), store_url=f"sqlite:///{store}")


def test_a_data_directory_keeps_one_site_id_whoever_makes_it_first(tmp_path: Path) -> None:
    data_dir = tmp_path / "new"  # made by the first
    found: list[str | None] = []
    threads = [threading.Thread(target=lambda: found.append(site_id(data_dir))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(found)) == 1 and found[0] is not None
    assert (data_dir / "site").read_text("ascii").splitlines()[0] == found[0]
    assert [p.name for p in data_dir.iterdir()] == ["site"]  # no temporary file left


def test_a_site_file_holding_something_else_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "site").write_text("not an id", encoding="ascii")
    made = site_id(tmp_path)
    assert made is not None and made.startswith("site_") and site_id(tmp_path) == made


def test_a_data_directory_that_cannot_be_made_has_no_site(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("", encoding="ascii")
    assert site_id(tmp_path / "file" / "data") is None  # under a file: never a directory


def test_a_site_that_cannot_be_read_is_refused_not_left_out_of_every_forget(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store.db"
    with _open(tmp_path / "b", store) as b:  # B keeps copies, as any data directory does
        (episode,) = b.remember("my bike lock code is 5521", "u")
    (tmp_path / "b" / "site").unlink()
    (tmp_path / "b" / "site").mkdir()  # an operator's mistake
    with pytest.raises(ConfigError, match="cannot read the site id"):
        site_id(tmp_path / "b")
    with pytest.raises(ConfigError, match="remove it"):  # not run unenrolled, out of reach
        _open(tmp_path / "b", store)
    with _open(tmp_path / "a", store) as a:
        assert a.forget(episode.id, "u").counts.get("sites_waiting") == 1  # B's old id


def test_a_huge_site_file_is_not_read_whole(tmp_path: Path) -> None:
    (tmp_path / "site").write_text("x" * 5_000_000, encoding="ascii")
    made = site_id(tmp_path)  # read 256 bytes: not an id, so replaced
    assert made is not None and site_id(tmp_path) == made
    assert (tmp_path / "site").stat().st_size < 100


def test_a_site_file_copied_with_its_directory_or_linked_gets_a_new_id(tmp_path: Path) -> None:
    import shutil

    original = site_id(tmp_path / "b")
    assert original is not None
    shutil.copytree(tmp_path / "b", tmp_path / "copy")  # a restored backup, a cp -r
    copied = site_id(tmp_path / "copy")
    assert copied is not None and copied != original and site_id(tmp_path / "copy") == copied
    (tmp_path / "linked").mkdir()
    (tmp_path / "linked" / "site").symlink_to(tmp_path / "b" / "site")
    linked = site_id(tmp_path / "linked")
    assert linked not in (None, original, copied)
    assert not (tmp_path / "linked" / "site").is_symlink()
    assert site_id(tmp_path / "b") == original  # the original keeps its id, and its file
    (tmp_path / "b").rename(tmp_path / "moved")  # the same directory under another name
    assert site_id(tmp_path / "moved") == original


def test_a_site_file_without_its_directory_is_still_read(tmp_path: Path) -> None:
    (tmp_path / "site").write_text("site_01JAAAAAAAAAAAAAAAAAAAAAAA\n", encoding="ascii")
    assert site_id(tmp_path) == "site_01JAAAAAAAAAAAAAAAAAAAAAAA"  # made by an earlier version


def test_sites_are_listed_and_a_retired_one_is_no_longer_waited_for(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    with _open(tmp_path / "b", store) as b:
        (episode,) = b.remember("my bike lock code is 5521", "u")
        b_site = b.sites()[0].id
    with _open(tmp_path / "a", store) as a:
        report = a.forget(episode.id, "u")
        assert report.counts["sites_waiting"] == 1
        listed = {s.id: s for s in a.sites()}
        assert listed[b_site].waiting == 1 and listed[b_site].label.endswith(str(tmp_path / "b"))
        assert sum(s.waiting for s in listed.values()) == 1  # a applied it itself
        assert a.retire_site(b_site) == 1  # the forget waited only for b: closed now
        assert a.store.pending_erasures() == []
        assert b_site not in {s.id for s in a.sites()}
        with pytest.raises(NotFoundError, match="no data directory"):
            a.retire_site(b_site)


def test_the_sites_command_lists_and_retires(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "store.db"
    monkeypatch.setenv("MEMSTRATA_STORE_URL", f"sqlite:///{store}")
    with _open(tmp_path / "b", store) as b:
        (episode,) = b.remember("my bike lock code is 5521", "u")
    a_dir = tmp_path / "a"
    assert main(["forget", episode.id, "--user", "u", "--data-dir", str(a_dir), "--json"]) == 0
    capsys.readouterr()
    assert main(["sites", "list", "--data-dir", str(a_dir), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert sorted((s["this"], s["waiting"]) for s in listed) == [(False, 1), (True, 0)]
    other = next(s["id"] for s in listed if not s["this"])
    assert main(["sites", "list", "--data-dir", str(a_dir)]) == 0
    assert "1 forget(s) to apply" in capsys.readouterr().out
    assert main(["sites", "retire", other, "--data-dir", str(a_dir)]) == 0
    assert "1 forget(s) it held open are closed" in capsys.readouterr().out
    assert main(["sites", "retire", other, "--data-dir", str(a_dir)]) != 0
    assert "no data directory" in capsys.readouterr().err


def test_a_bullet_deleted_on_request_reaches_the_vector_cache_of_another_data_directory(
    tmp_path: Path,
) -> None:
    from memstrata.document.ops import Operation, OpKind
    from memstrata.embed.cache import text_hash
    from memstrata.model import DeleteReason

    store, said = tmp_path / "store.db", "Ann's locker code is 7731"
    b_dir = tmp_path / "b"

    def cached() -> int:
        with sqlite3.connect(b_dir / "embeddings.db") as conn:
            row = conn.execute(
                "SELECT COUNT(*) FROM vectors WHERE hash = ?", [text_hash(f"notes: {said}")]
            )
            return int(row.fetchone()[0])

    with _open(b_dir, store) as b:
        (turn,) = b.remember(f"remember: {said}", "u")
        b.add_fact(said, "u", sources=[turn.id], topic="notes")
        b.consolidate("u")
        assert b.search("locker code", "u", granularity="topic")
    assert cached() > 0  # B embedded the bullet's passage (each model)
    with _open(tmp_path / "a", store) as a:
        doc, version = a.doc("notes", "u")
        (bullet,) = [x for s in doc.sections for x in s.bullets if x.text == said]
        delete = Operation(OpKind.DELETE, bullet.id, reason=DeleteReason.USER_REQUEST)
        a.apply_doc("notes", "u", [delete], expected_version=version)
        (pending,) = a.store.pending_erasures()  # journalled: B has still to erase it
        assert f"notes: {said}" in pending.texts
    assert cached() > 0
    with _open(b_dir, store) as b:
        assert cached() == 0
        assert b.store.pending_erasures() == []


def test_a_data_directory_whose_path_is_not_utf8_opens_and_is_enrolled(tmp_path: Path) -> None:
    import os

    data_dir = tmp_path / os.fsdecode(b"data-\xff")
    with _open(data_dir, tmp_path / "store.db") as memory:
        (episode,) = memory.remember("my bike lock code is 5521", "u")
        (site,) = memory.sites()
        assert site.label.endswith("data-\\xff") and site.id == site_id(data_dir)
        memory.forget(episode.id, "u")
