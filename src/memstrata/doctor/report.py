"""What ``memstrata doctor`` found and what its repair did."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from memstrata.model import JsonValue

Part = Literal["database", "trace", "cache", "index"]

LISTED: Final = 20  # ids named in one problem at most


@dataclass(slots=True)
class Problem:
    """One thing found wrong; ``fixed`` says what the repair did about it."""

    part: Part
    what: str
    fixed: str | None = None

    def to_json(self) -> dict[str, JsonValue]:
        return {"part": self.part, "problem": self.what, "fixed": self.fixed}


@dataclass(slots=True)
class DoctorReport:
    data_dir: Path
    repair: bool
    checked: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)

    @property
    def remaining(self) -> list[Problem]:
        return [p for p in self.problems if p.fixed is None]

    @property
    def ok(self) -> bool:
        return not self.remaining

    def to_json(self) -> dict[str, JsonValue]:
        return {
            "data_dir": str(self.data_dir),
            "repair": self.repair,
            "ok": self.ok,
            "checked": list(self.checked),
            "problems": [p.to_json() for p in self.problems],
        }


def some(ids: Sequence[str]) -> str:
    """The first ids of ``ids`` and how many more there are."""
    shown = ", ".join(ids[:LISTED])
    return shown + (f" and {len(ids) - LISTED} more" if len(ids) > LISTED else "")
