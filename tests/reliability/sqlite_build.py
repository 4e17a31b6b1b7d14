"""An SQLite on which ``secure_delete`` is off by default, as on most builds.

The stock CPython here links an SQLite compiled with ``SQLITE_SECURE_DELETE`` (a fresh
connection reads ``PRAGMA secure_delete`` as 1), so deleted text happens to be zeroed even when
memstrata does not ask for it. That compile-time option only sets the pragma's default; to
exercise a build without it, every connection opened through :func:`sqlite3.connect` here first
has the pragma switched off, exactly what such a build starts with.

Use :func:`secure_delete_off_by_default` in process (a pytest ``MonkeyPatch``), and
:data:`CLI` to run the ``memstrata`` command in a separate process with the same SQLite.
"""

from __future__ import annotations

import sqlite3
import sys
from typing import Any

import pytest

_REAL_CONNECT = sqlite3.connect

#: the ``memstrata`` command line in another Python process whose SQLite has secure_delete off
CLI = [sys.executable, "-m", "tests.reliability.sqlite_build"]


def _connect_insecure(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    conn = _REAL_CONNECT(*args, **kwargs)
    conn.execute("PRAGMA secure_delete = OFF")
    return conn


def secure_delete_default() -> int:
    """What a fresh connection says ``PRAGMA secure_delete`` is (0 off, 1 on)."""
    with sqlite3.connect(":memory:") as conn:
        return int(conn.execute("PRAGMA secure_delete").fetchone()[0])


def secure_delete_off_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every connection opened from now on starts with secure_delete off (checked)."""
    monkeypatch.setattr(sqlite3, "connect", _connect_insecure)
    assert secure_delete_default() == 0


def _main() -> None:
    sqlite3.connect = _connect_insecure  # type: ignore[assignment]
    if secure_delete_default() != 0:
        sys.exit("secure_delete is still on by default")
    from memstrata.cli import main

    sys.exit(main(sys.argv[1:]))


if __name__ == "__main__":
    _main()
