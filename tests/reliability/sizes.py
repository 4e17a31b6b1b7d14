"""How long the reliability suite runs: small by default, full length when ``CI=true``."""

from __future__ import annotations

import os

#: full length in CI (CI sets CI=true), a small size otherwise
FULL = os.environ.get("CI", "").strip().lower() == "true"


def size(default: int, full: int) -> int:
    """``full`` in CI, ``default`` otherwise."""
    return full if FULL else default


def report(test: str, **figures: int) -> None:
    """Print a test's figures (shown with ``pytest -s``; grep ``reliability:``)."""
    print(f"reliability: {test} " + " ".join(f"{k}={v}" for k, v in figures.items()))
