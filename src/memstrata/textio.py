"""Text from files, stdin and the command line: UTF-8 only, with errors that name the place.

A leaf module any layer may use. Every failure is an :class:`InvalidInputError` (or an
:class:`ImportFormatError` where the caller asks for one), never a ``UnicodeError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from memstrata.errors import InvalidInputError


def decode_utf8(data: bytes, *, source: str) -> str:
    """``data`` as text; a byte sequence that is not UTF-8 is refused naming ``source``, the
    byte offset and the line. A leading byte-order mark is dropped."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InvalidInputError(
            f"{source} is not UTF-8 text: invalid byte 0x{data[exc.start]:02x} at byte "
            f"{exc.start} (line {line}); convert it to UTF-8 first"
        ) from None


def read_text(path: Path) -> str:
    """The whole of a UTF-8 text file; a missing file, a directory or unreadable bytes are
    refused with the path."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InvalidInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InvalidInputError(f"{path} is a directory, not a file") from None
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return decode_utf8(data, source=str(path))


def surrogate_at(value: str) -> int | None:
    """The index of the first lone surrogate in ``value`` (text that cannot be UTF-8), if any."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def check_unicode(value: object, what: str) -> None:
    """Refuse ``value`` (text, or JSON-like data holding text) if any string in it holds a lone
    surrogate, which no store or file can keep."""
    if isinstance(value, str):
        at = surrogate_at(value)
        if at is not None:
            raise InvalidInputError(
                f"{what} is not valid UTF-8 text: a lone surrogate "
                f"U+{ord(value[at]):04X} at character {at}"
            )
    elif isinstance(value, Mapping):
        for key, item in value.items():
            check_unicode(key, what)
            check_unicode(item, what)
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        for item in value:
            check_unicode(item, what)


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for an error message, cut to about ``limit`` characters so a huge bad
    input does not flood the message."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(str(value))} characters)"
