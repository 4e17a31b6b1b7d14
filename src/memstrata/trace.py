"""The raw trace: append-only JSONL, one file per surface per day.

``<data dir>/trace/<surface>/<YYYY-MM-DD>.jsonl``. Each event is one line. A batch of lines is
written with one ``write`` on a file opened with ``O_APPEND`` while holding an exclusive
``flock``, so lines from concurrent threads and processes never interleave. Capture must never
crash or slow the producer: :meth:`JsonlTrace.append` swallows and logs its own failures.

A line torn by a crash or a full disk (the file does not end in a newline) is never extended:
the next append starts a new line first, so the torn fragment stays a bad line of its own and
the events after it stay readable.

The trace is append-only with one exception: deletion on request. :meth:`JsonlTrace.redact`
overwrites the line of each deleted item, in place and under the same lock, with a tombstone
of the same length (its time, surface, id and the reason, padded with spaces): no line moves,
none is cut short, and appends that wait on the lock land after it as usual. A damaged line
(torn, or run into by an older append) is searched byte by byte: each event in it is
tombstoned if it is a deleted item's, and a fragment that cannot be read is blanked if it holds
a deleted item's id or text. :meth:`JsonlTrace.residue` proves the result.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

import numpy as np

from memstrata.codec import format_time
from memstrata.erasure import Needles, text_forms
from memstrata.model import JsonValue
from memstrata.ports import Clock, SystemClock
from memstrata.private import private_dir

log = logging.getLogger(__name__)

_SURFACE_RE: Final = re.compile(r"[^\w-]+")
#: how every event line starts (``append`` writes ``at`` first): where events in a damaged
#: line begin
_EVENT_START: Final = b'{"at": '
_DECODER: Final = json.JSONDecoder()
_NEWLINE: Final = ord("\n")


def surface_slug(surface: str) -> str:
    """A file-system-safe name for a surface (``chat``, ``notebook``, ``import`` ...)."""
    slug = _SURFACE_RE.sub("-", surface.strip().lower()).strip("-")
    return slug[:64] or "unknown"


class JsonlTrace:
    """:class:`memstrata.ports.TraceSink` writing JSONL files under ``root``."""

    def __init__(self, root: str | Path, *, clock: Clock | None = None) -> None:
        self.root = Path(root)
        self._clock = clock or SystemClock()
        self._lock = threading.Lock()
        self.failures = 0

    def path_for(self, surface: str, day: datetime) -> Path:
        return self.root / surface_slug(surface) / f"{day.strftime('%Y-%m-%d')}.jsonl"

    def append(self, surface: str, events: Sequence[Mapping[str, JsonValue]]) -> bool:
        if not events:
            return True
        try:
            now = self._clock.now()
            stamp = format_time(now)
            payload = "".join(
                json.dumps(
                    {"at": stamp, "surface": surface, **event}, ensure_ascii=False, default=str
                )
                + "\n"
                for event in events
            ).encode("utf-8")
            path = self.path_for(surface, now)
            with self._lock:
                if not path.parent.is_dir():  # a new day's or surface's: made owner-only
                    private_dir(path.parent)
                fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX)
                    size = os.fstat(fd).st_size
                    if size and os.pread(fd, 1, size - 1) != b"\n":
                        payload = b"\n" + payload  # never extend a torn line
                    view = memoryview(payload)
                    while view:
                        written = os.write(fd, view)
                        view = view[written:]
                finally:
                    os.close(fd)  # closing releases the flock
            return True
        except Exception:  # capture never raises into the caller
            self.failures += 1
            log.warning("trace append failed for surface %r", surface, exc_info=True)
            return False

    def redact(self, ids: Collection[str], reason: str, texts: Collection[str] = ()) -> int:
        """Replace every event of the items ``ids`` with a tombstone; the number replaced.

        ``texts`` are the items' texts: a fragment of a damaged line holding one of them (or
        an id) is blanked even where no event can be read. Unlike :meth:`append` this raises
        (:class:`OSError`) when a file cannot be rewritten: a deletion must not be reported
        done when a copy is left.
        """
        target = _Target.of(ids, texts)
        if target is None:
            return 0
        count = 0
        with self._lock:
            for file in self.files():
                count += _redact_file(file, target, reason)
        return count

    def residue(self, ids: Collection[str], texts: Collection[str] = ()) -> list[str]:
        """Where a copy of the items ``ids`` (an event not tombstoned, or a damaged fragment
        holding an id or one of ``texts``) is left: ``"<file> line <n>"``, none when erased."""
        target = _Target.of(ids, texts)
        if target is None:
            return []
        left = []
        with self._lock:
            for file in self.files():
                for number, _, body in target.lines_in(_read_shared(file)):
                    if next(_erasures(body, target, "residue"), None) is not None:
                        left.append(f"{file} line {number}")
        return left

    def read(self, surface: str | None = None) -> Iterator[dict[str, JsonValue]]:
        """Every event, file by file in name order (day order within a surface); a torn line
        (not a JSON object) is skipped with a warning (``memstrata doctor`` reports it)."""
        if not self.root.exists():
            return
        dirs = [self.root / surface_slug(surface)] if surface else sorted(self.root.iterdir())
        for folder in dirs:
            if not folder.is_dir():
                continue
            for file in sorted(folder.glob("*.jsonl")):
                for line in scan_file(file):
                    if line.event is not None:
                        yield line.event
                    elif line.raw.strip():
                        log.warning("skipping torn trace line %s:%d", file, line.number)

    def files(self) -> list[Path]:
        """Every trace file, in name order."""
        return sorted(self.root.glob("*/*.jsonl")) if self.root.exists() else []


@dataclass(frozen=True, slots=True)
class TraceLine:
    """One line of a trace file as found on disk.

    ``event`` is None when the line is not a JSON object (torn: a crash or a full disk cut it,
    or a later append landed on it); ``terminated`` is False for a last line with no newline.
    """

    file: Path
    number: int
    offset: int
    raw: bytes
    event: dict[str, JsonValue] | None
    terminated: bool


def scan_file(file: Path) -> Iterator[TraceLine]:
    """The lines of one trace file, torn ones included (see :class:`TraceLine`)."""
    content = file.read_bytes()
    offset = 0
    for number, line in enumerate(content.splitlines(keepends=True), start=1):
        body = line.rstrip(b"\n")
        event = _event(body) if body.strip() else None
        yield TraceLine(file, number, offset, body, event, line.endswith(b"\n"))
        offset += len(line)


def _event(data: bytes) -> dict[str, JsonValue] | None:
    """The JSON object ``data`` holds, or None (not JSON, or not an object)."""
    try:
        parsed = json.loads(data)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _read_shared(file: Path) -> bytes:
    """The file's bytes, read under a shared lock (no append is halfway through)."""
    fd = os.open(file, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
        with os.fdopen(os.dup(fd), "rb") as fh:
            return fh.read()
    finally:
        os.close(fd)  # closing releases the flock


class _Target:
    """What a redaction looks for: the items' ids, and those and their texts as bytes."""

    def __init__(self, ids: set[str], texts: Collection[str]) -> None:
        self.ids = ids
        self.needles = Needles([*(json.dumps(i).encode("utf-8") for i in ids), *text_forms(texts)])

    @classmethod
    def of(cls, ids: Collection[str], texts: Collection[str]) -> _Target | None:
        wanted = {i for i in ids if i}
        return cls(wanted, texts) if wanted else None

    def found_in(self, data: bytes) -> bool:
        return self.needles.found_in(data)

    def lines_in(self, content: bytes) -> list[tuple[int, int, bytes]]:
        """The lines of ``content`` holding an id or a text: number (from 1), offset, bytes
        (without the newline). Only these can hold a copy: a deleted item's event names it."""
        at = sorted({position for position, _ in self.needles.find(content)})
        if not at:
            return []
        ends = np.flatnonzero(np.frombuffer(content, dtype=np.uint8) == _NEWLINE)
        out = []
        for index in sorted(set(np.searchsorted(ends, at).tolist())):
            start = int(ends[index - 1]) + 1 if index else 0
            end = int(ends[index]) if index < len(ends) else len(content)
            out.append((index + 1, start, content[start:end].rstrip(b"\r")))
        return out

    def names(self, event: object) -> bool:
        """``event`` is a deleted item's event, not yet a tombstone."""
        return (
            isinstance(event, dict)
            and event.get("id") in self.ids
            and event.get("event") != "redacted"
        )


def _redact_file(file: Path, target: _Target, reason: str) -> int:
    fd = os.open(file, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with os.fdopen(os.dup(fd), "rb") as fh:
            content = fh.read()
        count = 0
        for _, offset, body in target.lines_in(content):
            for start, replacement in _erasures(body, target, reason):
                os.pwrite(fd, replacement, offset + start)
                count += 1
        os.fsync(fd)
        return count
    finally:
        os.close(fd)  # closing releases the flock


def _erasures(body: bytes, target: _Target, reason: str) -> Iterator[tuple[int, bytes]]:
    """Where and with what to overwrite ``body`` (one line) so no copy of ``target`` is left:
    a whole event of a deleted item becomes a tombstone of its length; in a damaged line, each
    event is judged on its own and a fragment that cannot be read is blanked if it holds an id
    or a text. A whole event of another item stays, whatever it quotes. ``body`` is a line
    that :meth:`_Target.lines_in` found holding an id or a text."""
    try:
        event = json.loads(body)
    except ValueError:
        pass
    else:
        if target.names(event):
            yield 0, _tombstone(event, reason, len(body))
        return
    starts = list(_event_starts(body))
    for start, end in zip(starts, [*starts[1:], len(body)], strict=True):
        piece = body[start:end]
        if not target.found_in(piece):
            continue
        decoded = _decode_prefix(piece)
        if decoded is None:
            yield start, _blank(reason, len(piece))
            continue
        event, width = decoded
        if target.names(event):
            yield start, _tombstone(event, reason, width)
        if target.found_in(piece[width:]):
            yield start + width, _blank(reason, len(piece) - width)


def _event_starts(body: bytes) -> Iterator[int]:
    """Where the events run together in a damaged line begin (0 first, for what precedes)."""
    yield 0
    at = body.find(_EVENT_START, 1)
    while at > 0:
        yield at
        at = body.find(_EVENT_START, at + 1)


def _decode_prefix(piece: bytes) -> tuple[dict[str, object], int] | None:
    """The event a damaged line's piece starts with, and its length in bytes; None when the
    piece does not start with a whole event."""
    text = piece.decode("utf-8", "surrogateescape")
    try:
        event, end = _DECODER.raw_decode(text)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    return event, len(text[:end].encode("utf-8", "surrogateescape"))


def _blank(reason: str, width: int) -> bytes:
    """What replaces an unreadable fragment holding a deleted item's id or text."""
    return _tombstone({}, reason, width) if width >= 2 else b" " * width


def _tombstone(event: Mapping[str, object], reason: str, width: int) -> bytes:
    """What replaces a redacted event: its time, surface and id, padded to ``width`` bytes."""
    for fields in (("at", "surface", "id"), ("id",), ()):
        kept = {k: event[k] for k in fields if k in event}
        line = json.dumps({**kept, "event": "redacted", "reason": reason}, ensure_ascii=False)
        data = line.encode("utf-8")
        if len(data) <= width:
            return data + b" " * (width - len(data))
    return b"{}" + b" " * (width - 2)  # an event too short to say more (never seen: ids are long)


def mend_torn(file: Path) -> int:
    """Make every line of ``file`` readable again; the number of lines mended.

    Under the file's lock, a last line with no newline gets one, and a line that is not a JSON
    object loses its torn part: the bytes before the event that a later append wrote on it, or
    the whole line when no event follows, become spaces (same length, in place, so no other
    line moves and no tombstone offset changes)."""
    fd = os.open(file, os.O_RDWR)  # not O_APPEND: Linux pwrite would ignore the offset
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        mended = 0
        for line in scan_file(file):
            torn = line.event is None and bool(line.raw.strip())
            if torn:
                last = _last_event(line.raw)
                os.pwrite(fd, b" " * (len(line.raw) if last is None else last[0]), line.offset)
            if not line.terminated:
                os.pwrite(fd, b"\n", line.offset + len(line.raw))
            mended += torn or not line.terminated
        os.fsync(fd)
        return mended
    finally:
        os.close(fd)  # closing releases the flock


def torn_event(raw: bytes) -> dict[str, JsonValue] | None:
    """The complete event at the end of a torn line (one a later append wrote on it), if any;
    :func:`mend_torn` keeps it."""
    last = _last_event(raw)
    return None if last is None else last[1]


def _last_event(raw: bytes) -> tuple[int, dict[str, JsonValue]] | None:
    """Where, in a torn line, the complete event that ends it starts, and that event (None:
    there is none)."""
    start = raw.find(b"{", 1)
    while start != -1:
        event = _event(raw[start:])
        if event is not None:
            return start, event
        start = raw.find(b"{", start + 1)
    return None
