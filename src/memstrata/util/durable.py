"""Files that reach the disk whole, and advisory locks on lock files.

A file written here is flushed and ``fsync``-ed before it is closed, so a crash after the call
returns finds its bytes. :func:`write_atomic` replaces a file so that a reader, or the file
after a crash, holds the old content or the new one, never a part: the new bytes go to a
temporary file beside it (a unique name, so that threads and processes writing the same file
do not share one), which is synced, renamed over it, and the directory synced so the rename
lasts. On any failure the temporary file is removed and the error raised as it came (an
:class:`OSError`: a full disk, a read-only place), the old file intact. A file is made with
the mode asked (the owner's alone unless said), whatever the process's umask.

:class:`FileLock` is an ``flock`` on a lock file, shared or exclusive, waited for or not; the
system releases it when the process ends, however it ends (a ``kill -9`` included).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Final

#: the mode of a file made here unless another is asked: the owner's alone
PRIVATE: Final = 0o600
#: how often a lock another process holds is asked for again
POLL_S: Final = 0.05


def fsync_path(path: Path) -> None:
    """Flush the file or directory at ``path`` to disk: a file another library wrote by its
    name, or a directory after a file in it was created, renamed or removed."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def new_file(path: Path, *, mode: int = PRIVATE) -> Iterator[BinaryIO]:
    """Create ``path`` (it must not exist: :class:`FileExistsError`) with ``mode`` and yield
    it open for writing bytes; when the block ends, it is flushed and synced to disk. On any
    failure, in the block or after, it is removed and the error raised."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != mode:  # a umask took some of it away
            os.fchmod(fd, mode)
        fh = os.fdopen(fd, "wb")
    except BaseException:
        os.close(fd)
        _remove(path)
        raise
    try:
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        _remove(path)
        raise


def write_temp(path: Path, data: bytes, *, mode: int = PRIVATE) -> Path:
    """A new file beside ``path`` under a unique hidden name, holding ``data`` and synced to
    disk (see :func:`new_file`); the caller puts it in place (:func:`os.replace`,
    :func:`os.link`) and removes what is left of it. Nothing is left when this raises."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    with new_file(temp, mode=mode) as fh:
        fh.write(data)
    return temp


def write_atomic(path: Path, data: bytes, *, mode: int = PRIVATE) -> None:
    """Replace ``path`` (or create it) with a file of ``mode`` holding ``data``, atomically
    and durably: see the module's docstring."""
    temp = write_temp(path, data, mode=mode)
    try:
        os.replace(temp, path)
    except BaseException:
        _remove(temp)
        raise
    fsync_path(path.parent)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


class FileLock:
    """An advisory lock (``flock``) on the file at ``path``, created owner-only if missing.
    Opening it raises :class:`OSError` when the file cannot be opened for writing (a
    directory that cannot be written). Used as a context manager, it is released and closed
    when the block ends."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE)
        self._held = False

    @property
    def held(self) -> bool:
        return self._held

    def acquire(self, *, shared: bool = False, wait: float | None = None) -> bool:
        """Take the lock, ``shared`` or exclusive; whether it is held. ``wait``: how many
        seconds to wait for other processes to let go of it (None: as long as it takes; 0
        or less: one try). Any error but the lock being held elsewhere is raised."""
        if self._fd is None:
            raise ValueError(f"the lock {self.path} is closed")
        operation = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        if wait is None:
            fcntl.flock(self._fd, operation)
        else:
            deadline = time.monotonic() + wait
            while True:
                try:
                    fcntl.flock(self._fd, operation | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        return False
                    time.sleep(POLL_S)
        self._held = True
        return True

    def release(self) -> None:
        """Let go of the lock, if held (for every descriptor sharing the open file)."""
        if self._held and self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._held = False

    def close(self) -> None:
        """Close the lock file; closing its last descriptor lets go of the lock."""
        if self._fd is not None:
            fd, self._fd, self._held = self._fd, None, False
            os.close(fd)

    def __enter__(self) -> FileLock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.release()
        finally:
            self.close()
