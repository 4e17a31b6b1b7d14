"""``memstrata migrate`` run as a process that stops after its first page of rows is inserted.

``python -m tests.reliability.migrate_paused migrate --from A --to B`` is the real command (the
CLI's own entry point), with one change: once the first page is inserted into the target (in
the copy's open transaction), it writes the table's name to the file named by
``MEMSTRATA_TEST_PAUSED_AT`` and waits for ever, so that a test can kill it at a known point
instead of guessing one with a sleep.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memstrata.store.sql.copying import CopyTables

_insert_rows = CopyTables.insert_rows


def _insert_then_wait(self: CopyTables, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
    _insert_rows(self, table, rows)
    Path(os.environ["MEMSTRATA_TEST_PAUSED_AT"]).write_text(table, encoding="utf-8")
    threading.Event().wait()  # until the test kills the process


if __name__ == "__main__":
    # Ctrl-C as at a terminal, even when the suite runs where SIGINT is ignored (a background
    # job): a process started with SIGINT ignored would keep ignoring it
    signal.signal(signal.SIGINT, signal.default_int_handler)
    CopyTables.insert_rows = _insert_then_wait  # type: ignore[method-assign]
    from memstrata.cli import run

    run()
