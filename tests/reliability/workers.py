"""Child processes for the reliability suite, started from a fork server that has imported
memstrata already (:func:`context`), so a child is ready in milliseconds.

:func:`crash` loops writes of one kind (``ingest``, ``doc`` or ``consolidate``) until it is
killed, sending one message per write *after* the call has returned (a pipe to the parent): the
parent holds every acknowledged write to be present after the kill.

:func:`cas` increments two counters, one in a fact's text and one in a curated bullet's text,
with compare-and-swap from several threads sharing one ``Memory``; blind ``update`` calls (no
version) run beside them and must never fail. It sends a summary.

Both use the hashing embedder: nothing loads a model.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import threading
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext
from pathlib import Path
from typing import Any

from memstrata.api import Memory
from memstrata.document.ops import Operation, OpKind
from memstrata.embed.fake import HashingEmbedder
from memstrata.errors import ConflictError
from memstrata.model import Fact, Scope
from memstrata.settings import load_settings

CRASH_USER = "crash"
CAS_USER = "counter"
CONVERSATIONS = 3
TURNS_PER_CONVERSATION = 4
REMEMBERED = 3
COUNTER_DOC = "counter"


def open_memory(data_dir: str | Path) -> Memory:
    return Memory.open(settings=load_settings(data_dir=data_dir), embedder=HashingEmbedder(32))


def ingest_text(n: int, conversation: int, turn: int) -> str:
    return f"ingest {n} conversation {conversation} turn {turn}"


def remember_text(n: int, turn: int) -> str:
    return f"remember {n} turn {turn}"


def bullet_text(n: int, part: int) -> str:
    return f"batch {n} part {part}"


def fact_text(n: int, part: int) -> str:
    return f"fact {n} part {part} of the crash test"


def context() -> ForkServerContext:
    """Processes forked from a server that has this module (and memstrata) imported."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    return ctx


def crash(mode: str, data_dir: str, first: int, conn: Connection) -> None:
    def _ack(*fields: object) -> None:
        conn.send_bytes(" ".join(str(f) for f in fields).encode())

    memory = open_memory(data_dir)
    scope = Scope(CRASH_USER)
    source = Path(data_dir).parent / f"ingest-{mode}.jsonl"
    _ack("ready")
    for n in range(first, first + 1_000_000):
        if mode == "ingest":
            lines = [
                json.dumps(
                    {
                        "text": ingest_text(n, c, t),
                        "thread": f"c{n}-{c}",
                        "session_id": f"s{n}",
                        "speaker": "Ann",
                    }
                )
                for c in range(CONVERSATIONS)
                for t in range(TURNS_PER_CONVERSATION)
            ]
            source.write_text("\n".join(lines) + "\n", encoding="utf-8")
            memory.ingest(source, CRASH_USER, fmt="jsonl")
            _ack("ingest", n)
            turns = [remember_text(n, t) for t in range(REMEMBERED)]
            episodes = memory.remember(turns, scope, session_id=f"r{n}")
            _ack("remember", n, *(e.id for e in episodes))
        elif mode == "doc":
            _, version = memory.doc("garden", scope)
            ops = [Operation(OpKind.ADD, section="Notes", text=bullet_text(n, p)) for p in (1, 2)]
            memory.apply_doc("garden", scope, ops, expected_version=version)
            _ack("doc", n)
        elif mode == "consolidate":
            facts = [
                memory.add_fact(fact_text(n, p), scope, topic=f"topic {n % 3}", supersede=False)
                for p in (1, 2)
            ]
            memory.consolidate(scope)
            _ack("consolidate", n, *(f.id for f in facts))
        else:
            raise SystemExit(f"unknown mode {mode}")


# compare-and-swap counters ---------------------------------------------------------------
_COUNT_RE = re.compile(r"count (\d+)")


def count_of(text: str) -> int:
    found = _COUNT_RE.search(text)
    assert found is not None, text
    return int(found.group(1))


def setup_counters(data_dir: str | Path) -> tuple[str, str]:
    """A fact and a curated bullet holding ``count 0``; returns their ids."""
    with open_memory(data_dir) as memory:
        scope = Scope(CAS_USER)
        fact = memory.add_fact("the shared count 0", scope, supersede=False)
        op = Operation(OpKind.ADD, section="Counter", text="the shared count 0")
        doc, _ = memory.apply_doc(COUNTER_DOC, scope, [op], expected_version=0)
        return fact.id, doc.sections[0].bullets[0].id


def read_counters(data_dir: str | Path, fact_id: str, bullet_id: str) -> tuple[int, int]:
    with open_memory(data_dir) as memory:
        scope = Scope(CAS_USER)
        fact = memory.get(fact_id, scope)
        assert isinstance(fact, Fact)
        doc, _ = memory.doc(COUNTER_DOC, scope)
        bullet = next(b for s in doc.sections for b in s.bullets if b.id == bullet_id)
        return count_of(fact.text), count_of(bullet.text)


def cas(
    data_dir: str, fact_id: str, bullet_id: str, threads: int, rounds: int, conn: Connection
) -> None:
    memory = open_memory(data_dir)
    scope = Scope(CAS_USER)
    totals: dict[str, int] = {"fact": 0, "doc": 0, "conflicts": 0, "blind": 0}
    lock = threading.Lock()
    failures: list[str] = []

    def add(name: str, value: int = 1) -> None:
        with lock:
            totals[name] += value

    def increment_fact() -> None:
        while True:
            fact = memory.get(fact_id, scope)
            assert isinstance(fact, Fact)
            text = f"the shared count {count_of(fact.text) + 1}"
            try:
                memory.update(fact_id, scope, expected_version=fact.version, text=text)
            except ConflictError:
                add("conflicts")
                continue
            add("fact")
            return

    def increment_doc() -> None:
        while True:
            doc, version = memory.doc(COUNTER_DOC, scope)
            bullet = next(b for s in doc.sections for b in s.bullets if b.id == bullet_id)
            op = Operation(
                OpKind.EDIT, bullet_id, text=f"the shared count {count_of(bullet.text) + 1}"
            )
            try:
                memory.apply_doc(COUNTER_DOC, scope, [op], expected_version=version)
            except ConflictError:
                add("conflicts")
                continue
            add("doc")
            return

    def work(seed: int) -> None:
        try:
            for i in range(rounds):
                increment_fact()
                increment_doc()
                if i % 5 == seed % 5:  # a blind update must outlast the contention
                    memory.update(fact_id, scope, importance=((seed + i) % 10) / 10)
                    add("blind")
        except Exception as exc:  # reported to the parent, which fails the test
            with lock:
                failures.append(repr(exc))

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    memory.close()
    summary: dict[str, Any] = {**totals, "failures": failures}
    conn.send_bytes(json.dumps(summary).encode())
