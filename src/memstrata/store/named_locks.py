"""Named locks held across every process using one store: one curation of a user at a time.

Two processes curating the same user at once both read the same turns as not yet extracted,
so both store facts from them (duplicates citing one turn) and one of them fails on a fact
the other moved (a compare-and-swap conflict). A :class:`memstrata.ports.LockingStore` holds
a named lock for the length of a ``with`` block, whichever process asks:

- SQLite: an exclusive ``flock`` on a file beside the database (``<db>.locks/<digest>``),
  which the kernel releases when the process ends, a ``kill -9`` included;
- PostgreSQL: a session advisory lock (``pg_try_advisory_lock``) on a connection kept for
  the block; MySQL/MariaDB: ``GET_LOCK`` the same way. Both end with their session.

A lock not had within ``wait_s`` raises :class:`memstrata.errors.BusyError`, naming what holds
it, and nothing was done.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from memstrata.errors import BusyError, InvalidInputError
from memstrata.private import private_dir
from memstrata.util.durable import FileLock

#: how often a lock held elsewhere is asked for again
POLL_S: Final = 0.05
#: the longest name a lock may have
MAX_NAME: Final = 200


def digest(name: str) -> str:
    """The lock's name as the stores keep it: a fixed-size digest (MySQL's names are at most
    64 characters; a file name must hold no path)."""
    if not name or len(name) > MAX_NAME or any(ord(c) < 32 for c in name):
        raise InvalidInputError(
            f"a lock name is 1 to {MAX_NAME} characters with no control character"
        )
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:40]


def waited(what: str, wait_s: float) -> BusyError:
    return BusyError(
        f"{what} is held by another curation of the same memory for over {wait_s:g} s; "
        "nothing was done; retry when it has finished"
    )


@contextmanager
def file_lock(directory: Path, name: str, wait_s: float) -> Iterator[None]:
    """An exclusive ``flock`` on ``directory/<digest of name>``, waited for up to ``wait_s``."""
    path = private_dir(directory) / digest(name)
    with FileLock(path) as lock:
        if not lock.acquire(wait=max(0.0, wait_s)):
            raise waited(f"the lock {name!r}", wait_s)
        yield
