"""Durable writes: a replaced file holds its old content or its new one, never a part, and
both it and its directory reach the disk; file locks refuse or wait as another process holds
them."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memstrata.util import durable
from memstrata.util.durable import FileLock, fsync_path, new_file, write_atomic, write_temp

OLD = b"the old content\n"
NEW = b"the new content, longer than the old one\n" * 100


@pytest.fixture
def old_file(tmp_path: Path) -> Path:
    (tmp_path / "index").mkdir()
    path = tmp_path / "index" / "CURRENT"
    path.write_bytes(OLD)
    return path


def _full_disk(*args: object, **kwargs: object) -> Any:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


# --- writes ---------------------------------------------------------------------------------


def test_a_write_replaces_the_file_whole_and_leaves_nothing_beside_it(old_file: Path) -> None:
    write_atomic(old_file, NEW)
    assert old_file.read_bytes() == NEW
    assert [p.name for p in old_file.parent.iterdir()] == ["CURRENT"]
    write_atomic(old_file.parent / "new", b"")  # a file that was not there, empty
    assert (old_file.parent / "new").read_bytes() == b""
    assert sorted(p.name for p in old_file.parent.iterdir()) == ["CURRENT", "new"]


def test_a_failed_rename_leaves_the_old_file_and_no_temporary_one(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(durable.os, "replace", _full_disk)
    with pytest.raises(OSError, match="No space left") as raised:
        write_atomic(old_file, NEW)
    assert raised.value.errno == errno.ENOSPC  # the error as it came, for the caller's handling
    assert old_file.read_bytes() == OLD
    assert [p.name for p in old_file.parent.iterdir()] == ["CURRENT"]


def test_a_write_cut_short_by_a_full_disk_never_reaches_the_file(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = os.fdopen
    written: list[bytes] = []

    class HalfWritten:
        """A file on a disk that fills halfway through the write."""

        def __init__(self, fh: Any) -> None:
            self._fh = fh

        def write(self, data: bytes) -> int:
            self._fh.write(data[: len(data) // 2])
            self._fh.flush()
            written.append(data[: len(data) // 2])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, name: str) -> Any:
            return getattr(self._fh, name)

        def __enter__(self) -> HalfWritten:
            return self

        def __exit__(self, *exc: object) -> None:
            self._fh.close()

    monkeypatch.setattr(durable.os, "fdopen", lambda fd, mode: HalfWritten(real(fd, mode)))
    with pytest.raises(OSError, match="No space left"):
        write_atomic(old_file, NEW)
    assert written and written[0]  # part of it was on disk, under another name
    assert old_file.read_bytes() == OLD
    assert [p.name for p in old_file.parent.iterdir()] == ["CURRENT"]


def test_a_failed_sync_leaves_the_old_file_and_no_temporary_one(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(durable.os, "fsync", _full_disk)  # where a full disk often shows
    with pytest.raises(OSError, match="No space left"):
        write_atomic(old_file, NEW)
    assert old_file.read_bytes() == OLD
    assert [p.name for p in old_file.parent.iterdir()] == ["CURRENT"]


def test_an_interrupt_midway_leaves_the_old_file_and_no_temporary_one(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(durable.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(old_file, NEW)
    assert old_file.read_bytes() == OLD
    assert [p.name for p in old_file.parent.iterdir()] == ["CURRENT"]


def test_the_file_is_synced_before_the_rename_and_the_directory_after(
    old_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[str, int]] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        info = os.fstat(fd)
        events.append(("fsync dir" if stat.S_ISDIR(info.st_mode) else "fsync file", info.st_ino))
        real_fsync(fd)

    def replace(src: Path, dst: Path) -> None:
        events.append(("replace", os.stat(src).st_ino))
        real_replace(src, dst)

    monkeypatch.setattr(durable.os, "fsync", fsync)
    monkeypatch.setattr(durable.os, "replace", replace)
    write_atomic(old_file, NEW)
    new, directory = old_file.stat().st_ino, old_file.parent.stat().st_ino
    assert events == [("fsync file", new), ("replace", new), ("fsync dir", directory)]


def test_a_file_has_the_mode_asked_whatever_the_umask(tmp_path: Path) -> None:
    before = os.umask(0o277)  # a umask that would take the owner's write away
    try:
        write_atomic(tmp_path / "key", b"secret\n")
        write_atomic(tmp_path / "shared", b"x", mode=0o644)
    finally:
        os.umask(before)
    assert stat.S_IMODE((tmp_path / "key").stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o644
    (tmp_path / "shared").chmod(0o666)
    write_atomic(tmp_path / "shared", b"y")  # the replacement's mode, not the old file's
    assert stat.S_IMODE((tmp_path / "shared").stat().st_mode) == 0o600


def test_a_temporary_file_is_hidden_beside_its_file_under_a_name_of_its_own(
    tmp_path: Path,
) -> None:
    path = tmp_path / "site"
    first, second = write_temp(path, b"a"), write_temp(path, b"b")
    assert first.parent == second.parent == tmp_path and first != second
    assert first.name.startswith(".site.") and first.read_bytes() == b"a"
    assert stat.S_IMODE(first.stat().st_mode) == 0o600
    assert not path.exists()  # putting it in place is the caller's


def test_a_new_file_is_synced_and_never_written_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(
        durable.os, "fsync", lambda fd: (synced.append(os.fstat(fd).st_ino), real_fsync(fd))
    )
    path = tmp_path / "meta.json"
    with new_file(path) as fh:
        fh.write(b"{}")
    assert path.read_bytes() == b"{}" and synced == [path.stat().st_ino]
    with pytest.raises(FileExistsError), new_file(path) as fh:
        fh.write(b"other")
    assert path.read_bytes() == b"{}"


def test_a_new_file_whose_writing_fails_is_removed(tmp_path: Path) -> None:
    path = tmp_path / "view0.block0.npy"

    def write_and_die() -> None:
        with new_file(path) as fh:
            fh.write(b"half")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_and_die()
    assert not path.exists()


def test_a_directory_or_a_file_is_synced_by_its_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(
        durable.os, "fsync", lambda fd: (synced.append(os.fstat(fd).st_ino), real_fsync(fd))
    )
    (tmp_path / "graph").write_bytes(b"x")
    fsync_path(tmp_path)
    fsync_path(tmp_path / "graph")
    assert synced == [tmp_path.stat().st_ino, (tmp_path / "graph").stat().st_ino]
    with pytest.raises(FileNotFoundError):
        fsync_path(tmp_path / "missing")


# --- locks ----------------------------------------------------------------------------------

_HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_SH if sys.argv[2] == "shared" else fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[3]))
"""


@pytest.fixture
def holder() -> Iterator[Any]:
    """Start another process holding a lock on a file for some seconds."""
    started: list[subprocess.Popen[str]] = []

    def hold(path: Path, how: str = "exclusive", seconds: float = 30.0) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(path), how, str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None and process.stdout.readline() == "held\n"
        return process

    yield hold
    for process in started:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_a_lock_another_process_holds_is_refused_without_waiting_or_after_the_wait(
    tmp_path: Path, holder: Any
) -> None:
    path = tmp_path / ".lock"
    holder(path)
    with FileLock(path) as lock:
        assert not lock.acquire(wait=0) and not lock.held
        assert not lock.acquire(shared=True, wait=0)
        start = time.monotonic()
        assert not lock.acquire(wait=0.3)
        assert time.monotonic() - start >= 0.3


def test_a_shared_lock_is_had_beside_another_shared_one_not_beside_an_exclusive_one(
    tmp_path: Path, holder: Any
) -> None:
    path = tmp_path / ".lock"
    holder(path, "shared")
    with FileLock(path) as lock:
        assert lock.acquire(shared=True, wait=0) and lock.held
    with FileLock(path) as lock:
        assert not lock.acquire(wait=0)


def test_a_waiting_lock_is_had_once_the_other_process_lets_go(tmp_path: Path, holder: Any) -> None:
    path = tmp_path / ".lock"
    process = holder(path, seconds=0.5)
    with FileLock(path) as lock:
        assert lock.acquire()  # blocks until the holder ends
        assert process.poll() is not None or process.wait(5) == 0
    process = holder(path, seconds=0.5)
    with FileLock(path) as lock:
        assert lock.acquire(wait=10)


def test_a_lock_is_let_go_when_its_holder_is_killed(tmp_path: Path, holder: Any) -> None:
    path = tmp_path / ".lock"
    process = holder(path)
    with FileLock(path) as lock:
        assert not lock.acquire(wait=0)
        process.kill()  # SIGKILL: nothing of the holder runs
        process.wait()
        assert lock.acquire(wait=5)


def test_a_lock_held_here_refuses_other_processes_until_released(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    probe = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR)\n"
        "try:\n"
        "    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "except BlockingIOError:\n"
        "    sys.exit(3)\n"
    )

    def others_can_lock() -> bool:
        run = subprocess.run([sys.executable, "-c", probe, str(path)], check=False)
        assert run.returncode in (0, 3)
        return run.returncode == 0

    with FileLock(path) as lock:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert lock.acquire(wait=0)
        assert not others_can_lock()
        lock.release()
        assert not lock.held and others_can_lock()
        assert lock.acquire()
    assert others_can_lock()  # the block's end let go of it
    lock = FileLock(path)
    assert lock.acquire(shared=True)
    lock.close()  # closing its only descriptor lets go too
    assert others_can_lock() and not lock.held
    with pytest.raises(ValueError, match="closed"):
        lock.acquire()


def test_a_lock_file_that_cannot_be_made_raises(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a directory", encoding="utf-8")
    with pytest.raises(NotADirectoryError):
        FileLock(tmp_path / "a-file" / ".lock")
