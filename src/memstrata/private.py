"""Files that hold a user's text are the owner's alone: directories 0700, files 0600.

A data directory holds turns, facts and vectors of them (the SQLite files and their WAL, the
embedding cache, the saved indexes, the trace). Whatever the process's umask, memstrata makes
each directory of it owner-only and each file it creates owner-only; SQLite gives its WAL and
shared-memory files the mode of their database, so a database made here 0600 keeps them so.
A data directory made before (mode 0755, files 0644) is made owner-only when it is opened.
A leaf module.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path
from typing import Final

log = logging.getLogger(__name__)

DIR_MODE: Final = 0o700
FILE_MODE: Final = 0o600


def private_dir(path: Path) -> Path:
    """``path`` (and the parents it needs) as directories only their owner reaches; one that
    exists and is the process's own is made so."""
    missing = []
    for part in (path, *path.parents):  # mkdir(parents=True) gives a parent the umask's mode
        if part.exists():
            break
        missing.append(part)
    for part in reversed(missing):
        part.mkdir(mode=DIR_MODE, exist_ok=True)
        owner_only(part, DIR_MODE)
    owner_only(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """Create ``path`` empty and owner-only if it does not exist (a database before SQLite
    opens it); one that exists and is the process's own is made owner-only."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        owner_only(path, FILE_MODE)
    else:
        os.close(fd)
    return path


def owner_only(path: Path, mode: int) -> None:
    """Take group and other access off ``path`` if it is the process's own and has any (a
    file or directory someone else owns is left, and said)."""
    try:
        info = path.lstat()
    except OSError:
        return
    if stat.S_ISLNK(info.st_mode) or not stat.S_IMODE(info.st_mode) & 0o077:
        return
    if info.st_uid != os.getuid():
        log.warning("%s is not this user's: its mode is left as it is", path)
        return
    try:
        os.chmod(path, stat.S_IMODE(info.st_mode) & ~0o077 & 0o777 | (mode & 0o700))
    except OSError as exc:
        log.warning("cannot make %s owner-only: %s", path, exc)


def owner_only_tree(root: Path) -> None:
    """Every directory and file under ``root`` owner-only: a data directory made before. One
    whose own mode is owner-only already is left unread (made here, or made so when it was
    opened; nobody else can reach what it holds), so opening a memory walks it once."""
    try:
        info = root.lstat()
    except OSError:
        return
    if not stat.S_ISDIR(info.st_mode) or not stat.S_IMODE(info.st_mode) & 0o077:
        return
    if info.st_uid != os.getuid():
        log.warning("%s is not this user's: its modes are left as they are", root)
        return
    for base, dirs, files in os.walk(root):
        for name in dirs:
            owner_only(Path(base) / name, DIR_MODE)
        for name in files:
            owner_only(Path(base) / name, FILE_MODE)
    owner_only(root, DIR_MODE)  # last: a walk cut short is walked again at the next open
