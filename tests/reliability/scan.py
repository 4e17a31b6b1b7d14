"""A scan of every byte of every file under a directory for any form of given texts.

Written on its own (it shares no code with memstrata's own check) so that it proves, rather
than repeats, what a deletion on request claims: none of the text is left, whether as UTF-8,
JSON-escaped (``\\"``, ``\\n``, ``\\uXXXX`` in lower or upper case hex) or UTF-16 (either byte
order), in any file (database, write-ahead log, cache, trace, anything else).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Finding:
    """One form of one text found in one file."""

    path: Path
    text: str
    form: str
    offset: int

    def __str__(self) -> str:
        return f"{self.path} @{self.offset}: {self.form} form of {self.text!r}"


def _upper_hex_escapes(escaped: str) -> str:
    out = []
    i = 0
    while i < len(escaped):
        if escaped.startswith("\\u", i) and i + 6 <= len(escaped):
            out.append("\\u" + escaped[i + 2 : i + 6].upper())
            i += 6
        elif escaped.startswith("\\", i):
            out.append(escaped[i : i + 2])
            i += 2
        else:
            out.append(escaped[i])
            i += 1
    return "".join(out)


def forms(text: str) -> dict[str, bytes]:
    """Every byte form of ``text`` the scan looks for, by name."""
    ascii_json = json.dumps(text)[1:-1]
    found = {
        "utf-8": text.encode("utf-8"),
        "json": json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8"),
        "json-ascii": ascii_json.encode("ascii"),
        "json-ascii-upper": _upper_hex_escapes(ascii_json).encode("ascii"),
        "utf-16-le": text.encode("utf-16-le"),
        "utf-16-be": text.encode("utf-16-be"),
    }
    return {name: data for name, data in found.items() if data}


def scan(root: Path, texts: Iterable[str]) -> list[Finding]:
    """Every occurrence of any form of ``texts`` in any file under ``root`` (hidden ones too)."""
    wanted = [(text, name, data) for text in texts for name, data in forms(text).items()]
    findings: list[Finding] = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        content = path.read_bytes()
        for text, name, data in wanted:
            at = content.find(data)
            if at >= 0:
                findings.append(Finding(path, text, name, at))
    return findings


def files_under(root: Path) -> list[str]:
    """The files under ``root``, relative, for a message."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
