"""Cold open: a fresh process opens a data directory of N embedded turns and answers its first
query from the saved index (:mod:`memstrata.index.snapshot`), not by rebuilding it.

:func:`prepare` fills a data directory with synthetic bilingual turns (those of ``bench
scale``) whose vectors come from the hashing embedder shaped like the default blend (384 + 512
dimensions per dense view), builds the index and saves it. :func:`open_cold` then starts a new
Python process that imports memstrata, opens the directory and runs one search, and reports
the time from the open to the first hits, the peak resident memory of that process
(``ru_maxrss``: mapped pages it read count, pages it never touched do not; its own and mapped
file memory are also reported apart), and whether the snapshot was used. Run both with
``python -m memstrata.bench.cold_open --turns 100000``.

The page cache is warm (the files were just written): this is the open of a process that
starts beside others, not the first read after a reboot.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from time import perf_counter
from typing import Final

from memstrata.errors import StoreError
from memstrata.model import JsonValue

#: the widths of the default blend's blocks (multilingual-e5-small, Universal Sentence Encoder)
BLOCKS: Final = (384, 512)
USER: Final = "scale"
QUERY: Final = "when is the piano lesson"


def hashing_blend(blocks: Sequence[int] = BLOCKS) -> object:
    """Vectors of the blend's shape from the hashing embedder (no model to load)."""
    from memstrata.embed.blend import BlendEmbedder
    from memstrata.embed.fake import HashingEmbedder

    return BlendEmbedder([HashingEmbedder(dim=w) for w in blocks], {})


def prepare(
    data_dir: Path, turns: int, *, blocks: Sequence[int] = BLOCKS, batch: int = 10_000
) -> dict[str, JsonValue]:
    """Store ``turns`` synthetic turns of one user in ``data_dir``, build the index, save it;
    the times taken and the snapshot's size."""
    from memstrata.api import Memory
    from memstrata.bench.scale import synthetic_turns
    from memstrata.model import Scope
    from memstrata.settings import load_settings

    settings = load_settings(data_dir=data_dir, trace=False)
    embedder = hashing_blend(blocks)
    with Memory.open(settings=settings, embedder=embedder) as memory:  # type: ignore[arg-type]
        episodes = synthetic_turns(turns, user=USER)
        started = perf_counter()
        for start in range(0, len(episodes), batch):
            memory.store.add_episodes(Scope(USER), episodes[start : start + batch])
        stored = perf_counter() - started
        started = perf_counter()
        manager = memory.indexes
        snapshots, manager.snapshots = manager.snapshots, None  # built here, saved below
        index = manager.index(USER)
        built = perf_counter() - started
        manager.snapshots = snapshots
        started = perf_counter()
        manager.save(USER)
        saved = perf_counter() - started
        assert snapshots is not None
        info = snapshots.info(USER)
    if info is None:
        raise StoreError(f"the index in {data_dir} was not saved (see the log)")
    return {
        "turns": turns,
        "entries": len(index),
        "store_s": round(stored, 2),
        "build_s": round(built, 2),
        "save_s": round(saved, 2),
        "snapshot_bytes": info.bytes,
        "snapshot_bytes_per_100k_turns": round(info.bytes * 100_000 / max(turns, 1)),
        "approximate": any(v.approximate for v in index.views),
    }


def open_cold(
    data_dir: Path, *, query: str = QUERY, user: str = USER, blocks: Sequence[int] = BLOCKS
) -> dict[str, JsonValue]:
    """Open ``data_dir`` in a new process and answer ``query``; what that process measured
    (``open_to_first_hits_s``, ``peak_rss_mb``, ``loaded_snapshot``, ``imports_s``) and the
    whole process's wall time (``process_s``: interpreter start and imports included)."""
    args = [str(data_dir), user, query, ",".join(str(b) for b in blocks)]
    started = perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "memstrata.bench.cold_open", "--child", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    wall = perf_counter() - started
    if done.returncode != 0:
        raise StoreError(f"the cold open of {data_dir} failed: {done.stderr.strip()[-2000:]}")
    report: dict[str, JsonValue] = json.loads(done.stdout.strip().splitlines()[-1])
    report["process_s"] = round(wall, 3)
    return report


def _resident() -> dict[str, JsonValue]:
    """The process's resident memory now, its own (anonymous) and file pages mapped (the
    kernel maps whole page-cache folios around a row read, so this grows faster than the rows
    read; such pages are shared and reclaimable), in MB; empty where ``/proc`` has none."""
    fields = {"RssAnon": "rss_anon_mb", "RssFile": "rss_file_mb"}
    out: dict[str, JsonValue] = {}
    try:
        lines = Path("/proc/self/status").read_text(encoding="ascii").splitlines()
    except OSError:
        return out
    for line in lines:
        name, _, value = line.partition(":")
        if name in fields:
            out[fields[name]] = round(int(value.split()[0]) / 1024, 1)
    return out


def _child(data_dir: str, user: str, query: str, blocks: str) -> None:
    started = perf_counter()
    from memstrata.api import Memory
    from memstrata.settings import load_settings

    imported = perf_counter()
    settings = load_settings(data_dir=data_dir, trace=False)
    embedder = hashing_blend([int(b) for b in blocks.split(",")])
    opened = perf_counter()
    memory = Memory.open(settings=settings, embedder=embedder)  # type: ignore[arg-type]
    hits = memory.search(query, user, k=10)
    answered = perf_counter()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    report: dict[str, JsonValue] = {
        "imports_s": round(imported - started, 3),
        "open_to_first_hits_s": round(answered - opened, 3),
        "peak_rss_mb": round(peak_kb / 1024, 1),
        **_resident(),
        "hits": len(hits),
        "loaded_snapshot": memory.indexes.loads == 1 and memory.indexes.rebuilds == 0,
        "entries": len(memory.indexes.index(user)),
    }
    memory.close()
    print(json.dumps(report))


def run_cold_open(
    turns: int, *, opens: int = 3, data_dir: Path | None = None
) -> dict[str, JsonValue]:
    """:func:`prepare` ``turns`` in ``data_dir`` (default: a new temporary directory), then
    :func:`open_cold` ``opens`` times; every figure, and the medians of the opens."""
    if turns < 1 or opens < 1:
        from memstrata.errors import InvalidInputError

        raise InvalidInputError("turns and opens must be at least 1")
    where = data_dir or Path(tempfile.mkdtemp(prefix="memstrata-cold-"))
    prepared = prepare(where, turns)
    runs = [open_cold(where) for _ in range(opens)]

    def median(key: str) -> JsonValue:
        values = [float(v) for r in runs if isinstance(v := r.get(key), int | float)]
        return round(statistics.median(values), 3) if values else None

    return {
        "data_dir": str(where),
        "prepare": prepared,
        "opens": list(runs),
        "open_to_first_hits_s_p50": median("open_to_first_hits_s"),
        "peak_rss_mb_p50": median("peak_rss_mb"),
        "process_s_p50": median("process_s"),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, help="data directory (default: a new temporary one)")
    parser.add_argument("--opens", type=int, default=3, help="cold opens to time")
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(*args.child)
        return
    print(json.dumps(run_cold_open(args.turns, opens=args.opens, data_dir=args.dir), indent=2))


if __name__ == "__main__":
    main()
