"""The regular-expression functions of :mod:`re`, over a compiled-pattern cache large enough
for the frame readers.

The readers of :mod:`memstrata.curate.frames_en` and :mod:`memstrata.curate.frames_zh` build
several hundred distinct patterns (f-strings over shared pieces such as the adverbs a verb may
carry). :mod:`re` keeps only 512 compiled patterns, so one sentence read by every reader
evicts the patterns the next sentence needs and each is compiled again: most of the time of a
long turn went into recompiling. These functions take the same arguments as :mod:`re`'s and
keep :data:`CACHED` compiled patterns, least recently used dropped first.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from re import IGNORECASE, Match, Pattern, escape
from re import IGNORECASE as I
from typing import Final

__all__ = [
    "IGNORECASE",
    "I",
    "Match",
    "Pattern",
    "compile",
    "escape",
    "findall",
    "finditer",
    "fullmatch",
    "match",
    "search",
    "split",
    "sub",
]

#: how many compiled patterns are kept (every reader's, and the names of a conversation's)
CACHED: Final = 4096


@lru_cache(maxsize=CACHED)
def _compiled(pattern: str, flags: int) -> Pattern[str]:
    return re.compile(pattern, flags)


def _of(pattern: str | Pattern[str], flags: int) -> Pattern[str]:
    if isinstance(pattern, re.Pattern):
        return pattern
    return _compiled(pattern, int(flags))


def search(pattern: str | Pattern[str], string: str, flags: int = 0) -> Match[str] | None:
    return _of(pattern, flags).search(string)


def match(pattern: str | Pattern[str], string: str, flags: int = 0) -> Match[str] | None:
    return _of(pattern, flags).match(string)


def fullmatch(pattern: str | Pattern[str], string: str, flags: int = 0) -> Match[str] | None:
    return _of(pattern, flags).fullmatch(string)


def finditer(pattern: str | Pattern[str], string: str, flags: int = 0) -> Iterator[Match[str]]:
    return _of(pattern, flags).finditer(string)


def findall(pattern: str | Pattern[str], string: str, flags: int = 0) -> list[str]:
    return _of(pattern, flags).findall(string)


def split(pattern: str | Pattern[str], string: str, maxsplit: int = 0, flags: int = 0) -> list[str]:
    return _of(pattern, flags).split(string, maxsplit)


def sub(
    pattern: str | Pattern[str],
    repl: str | Callable[[Match[str]], str],
    string: str,
    count: int = 0,
    flags: int = 0,
) -> str:
    return _of(pattern, flags).sub(repl, string, count)


def compile(pattern: str, flags: int = 0) -> Pattern[str]:
    return _compiled(pattern, int(flags))
