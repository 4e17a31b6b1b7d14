"""A write made by one process is found by the next search of another: each process's index is
derived from the shared store and follows its change feed before every search. Both
processes keep their memory open (their indexes built and warm) while the other writes; the
searcher runs a background indexer as a server does, so it answers without waiting for the
model and the new turn must be found by its words at once."""

from __future__ import annotations

import random
import string
from multiprocessing.connection import Connection
from pathlib import Path

from memstrata.model import Scope, Turn
from tests.reliability import workers
from tests.reliability.sizes import report, size

USER = "shared"
ROUNDS = size(10, 40)


def _word(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase, k=12))


def peer(data_dir: str, conn: Connection) -> None:
    """The other process: on ``search WORD ID`` it searches once and says whether ID came
    back; on ``write WORD`` it remembers a turn holding WORD and sends its id."""
    memory = workers.open_memory(data_dir)
    memory.start_indexer(poll_s=60)  # as a server: searches never wait for the model
    memory.search("warm up", USER)  # the index is built before any write below
    conn.send({"ready": True})
    while True:
        message = conn.recv()
        if message == "stop":
            break
        verb, word, *rest = message.split()
        if verb == "write":
            (episode,) = memory.remember([Turn(text=f"peer wrote {word}")], USER)
            conn.send({"id": episode.id})
        else:
            hits = memory.search(word, USER, k=5)
            conn.send({"found": rest[0] in [h.id for h in hits], "partial": hits.partial})
    memory.close()
    conn.send({"stopped": True})


def test_a_write_in_one_process_is_found_by_the_next_search_of_another(tmp_path: Path) -> None:
    data_dir = tmp_path / "mem"
    rng = random.Random(7)
    with workers.open_memory(data_dir) as memory:
        memory.remember([Turn(text=f"filler turn {_word(rng)}") for _ in range(30)], USER)
    ctx = workers.context()
    here, there = ctx.Pipe()
    proc = ctx.Process(target=peer, args=(str(data_dir), there))
    proc.start()
    missed: list[str] = []
    try:
        assert here.poll(120) and here.recv() == {"ready": True}
        with workers.open_memory(data_dir) as memory:
            memory.search("warm up", USER)  # this process's index is built too
            for n in range(ROUNDS):
                word = _word(rng)
                # this process writes, the peer's next search must find it
                (episode,) = memory.remember([Turn(text=f"parent wrote {word}")], USER)
                here.send(f"search {word} {episode.id}")
                assert here.poll(60)
                if not here.recv()["found"]:
                    missed.append(f"round {n}: the peer missed {word}")
                # the peer writes, this process's next search must find it
                word = _word(rng)
                here.send(f"write {word}")
                assert here.poll(60)
                written = here.recv()["id"]
                hits = memory.search(word, Scope(USER), k=5)
                if written not in [h.id for h in hits]:
                    missed.append(f"round {n}: this process missed {word}")
        here.send("stop")
        assert here.poll(60) and here.recv() == {"stopped": True}
        proc.join(30)
        assert proc.exitcode == 0
    finally:
        proc.kill()
        proc.join(10)
    assert not missed, missed
    report("search_processes", rounds=ROUNDS, writes_seen=2 * ROUNDS)
