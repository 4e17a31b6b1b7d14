"""The data directory as a site of copies: its stable id in the store, and the sweep that
erases its copies of what other processes forgot.

Every process keeps, in its data directory, copies of records outside the record store: raw
trace lines, saved search indexes and cached vectors. When several data directories share one
store (many machines on one database server), a deletion on request made through one of them
must reach the copies in all. So each data directory has a site id (the file ``site`` in it,
made once, shared by every process using the directory), enrols it in the store when a memory
opens and at each sweep, and applies each erasure journalled since (see
:meth:`memstrata.api.forgetting.ForgettingMixin.finish_erasures`). The journal keeps an
erasure's texts until every site seen within the wait has applied it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol

from memstrata.errors import ConfigError
from memstrata.ids import new_id
from memstrata.private import private_dir
from memstrata.settings import SITE_FILE
from memstrata.util.durable import write_temp

if TYPE_CHECKING:
    from memstrata.settings import Settings

log = logging.getLogger(__name__)

_SITE_RE: Final = re.compile(r"^site_[0-9A-Z]{26}$")
_SITE_FILE_MAX: Final = 256  # bytes read of the site file: an id and its directory fit
_DIRECTORY: Final = "directory"  # the second line: which directory the id was made for


def _directory_key(data_dir: Path) -> str:
    """The data directory itself, not its path: its inode, the same through any path or
    mount, different for a copy (``cp -r``, a restored backup)."""
    return str(data_dir.stat().st_ino)


def _parse(raw: bytes) -> tuple[str | None, str | None]:
    """The id a site file holds (None: none) and the directory it was made for (None: not
    said, as in a file made before this was kept)."""
    lines = raw.decode("ascii", errors="replace").split("\n")
    text = lines[0].strip()
    if not _SITE_RE.match(text):
        return None, None
    for line in lines[1:]:
        key, _, value = line.strip().partition(" ")
        if key == _DIRECTORY and value:
            return text, value
    return text, None


def site_id(data_dir: Path) -> str | None:
    """The site id of ``data_dir``, made on first use (see :func:`site_of`)."""
    return site_of(data_dir)[0]


def site_of(data_dir: Path) -> tuple[str | None, bool]:
    """The site id of ``data_dir``, made on first use (atomically: two processes starting
    together agree on one), and whether it was made because the directory had none (a new
    data directory; False when read, or made to replace a file that held no id: the directory
    was a site before, under an id now lost). The id is None when the directory cannot hold
    it (read-only, missing): such a process writes no copies the store must wait for.
    :class:`ConfigError` when ``site`` is there but cannot be read (a directory, no
    permission): the directory's copies would be out of every forget's reach."""
    path = data_dir / SITE_FILE
    damaged = False
    for _ in range(2):
        try:
            with path.open("rb") as file:
                raw = file.read(_SITE_FILE_MAX)  # never a whole huge file
        except (FileNotFoundError, NotADirectoryError):  # none yet, or no directory at all
            pass
        except OSError as exc:
            raise ConfigError(
                f"cannot read the site id {path} ({exc}): without it, forgets made through "
                "other data directories sharing the store would not reach this one's copies; "
                "remove it (a new id is made) or make it readable"
            ) from exc
        else:
            text, made_for = _parse(raw)
            here = _directory_key(data_dir)
            if text is not None and made_for in (None, here):
                return text, False
            if text is None:
                log.warning("%s does not hold a site id; making a new one", path)
            else:  # one id for two directories: a forget applied by one would skip the other
                log.warning(
                    "%s was made for another directory (copied with it, or a link to "
                    "another's); making a new id for this one",
                    path,
                )
            damaged = True
            with contextlib.suppress(OSError):
                path.unlink()
        made = new_id("site")
        try:
            private_dir(data_dir)
            text = f"{made}\n{_DIRECTORY} {_directory_key(data_dir)}\n"
            temporary = write_temp(path, text.encode("ascii"))  # never an empty id after a crash
            try:
                os.link(temporary, path)  # fails if another process made it first: read theirs
            finally:
                with contextlib.suppress(OSError):
                    temporary.unlink()
        except FileExistsError:
            continue
        except OSError as exc:
            log.warning("cannot keep a site id in %s: %s", data_dir, exc)
            return None, False
        return made, not damaged
    return None, False


def holds_copies(settings: Settings) -> bool:
    """Whether the data directory holds copies of records outside the store: raw trace
    lines, saved indexes or cached vectors."""
    return settings.embedding_cache_path.exists() or any(
        any(d.rglob("*")) for d in (settings.trace_dir, settings.index_dir) if d.is_dir()
    )


def site_label(data_dir: Path) -> str:
    """Where a site is, for operators: the host and the directory (bytes of a path that are
    not UTF-8 shown escaped: a store keeps only text)."""
    path = os.fsencode(data_dir.absolute()).decode("utf-8", errors="backslashreplace")
    return f"{socket.gethostname()}:{path}"


class Finishes(Protocol):
    """What the sweep calls: a memory that applies the erasures journalled since its data
    directory's last sweep (:meth:`memstrata.api.forgetting.ForgettingMixin.finish_erasures`)."""

    def finish_erasures(self) -> object: ...


class ErasureSweep:
    """A daemon thread that calls :meth:`finish_erasures` every ``interval_s``: the data
    directory stays enrolled, and erasures made through other data directories reach its
    copies within one interval. :meth:`stop` ends it."""

    def __init__(self, memory: Finishes, interval_s: float) -> None:
        self._memory = memory
        self._interval_s = interval_s
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="memstrata-erasures", daemon=True)

    def start(self) -> ErasureSweep:
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopping.wait(self._interval_s):
            try:
                self._memory.finish_erasures()
            except Exception:  # a sweep never ends the thread: the next one tries again
                log.exception("the erasure sweep failed; trying again in %.0f s", self._interval_s)

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()
