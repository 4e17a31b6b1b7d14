"""A read-only data directory (a read-only mount): reads are served, writes name the directory."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from memstrata.api import Memory
from memstrata.embed.cache import with_cache
from memstrata.embed.fake import HashingEmbedder
from memstrata.settings import load_settings
from tests.mounts import needs_mounts, read_only, run_unshared

EXE = Path(sys.executable).with_name("memstrata")


@needs_mounts
def test_reads_from_a_read_only_mount(tmp_path: Path) -> None:
    data = tmp_path / "mem"
    env = {
        **os.environ,
        "MEMSTRATA_DATA_DIR": str(data),
        "MEMSTRATA_EMBEDDER": '{"provider": "fake", "dim": 64}',
    }
    settings = load_settings(data_dir=data)
    embedder = with_cache(HashingEmbedder(dim=64), settings.embedding_cache_path)
    with Memory.open(settings=settings, embedder=embedder) as mem:
        [ep] = mem.remember("I adopted a puppy named Max", "alice")
        mem.remember("The revenue report is due on Friday", "alice")
        mem.search("puppy", "alice")
    commands = [
        ["list", "--user", "alice", "--json"],
        ["get", ep.id, "--user", "alice", "--json"],
        ["search", "puppy Max", "--user", "alice", "--k", "1", "--json"],
        ["remember", "one more", "--user", "alice"],
    ]
    script = " ; ".join(
        f"{shlex.quote(str(EXE))} {shlex.join(c)} > {tmp_path}/out{i} 2> {tmp_path}/err{i};"
        f" echo $? > {tmp_path}/rc{i}"
        for i, c in enumerate(commands)
    )
    result = run_unshared(f"{read_only(data)} && {script}", env=env, timeout=120)
    assert result.returncode == 0, result.stderr

    def outcome(i: int) -> tuple[int, str, str]:
        return (
            int((tmp_path / f"rc{i}").read_text()),
            (tmp_path / f"out{i}").read_text(),
            (tmp_path / f"err{i}").read_text(),
        )

    code, out, err = outcome(0)
    assert code == 0, err
    listed = json.loads(out)
    assert len(listed) == 2 and ep.id in {e["id"] for e in listed}
    code, out, err = outcome(1)
    assert code == 0, err
    assert json.loads(out)["text"] == "I adopted a puppy named Max"
    code, out, err = outcome(2)
    assert code == 0, err
    assert json.loads(out)[0]["id"] == ep.id
    code, out, err = outcome(3)
    assert code == 7
    assert f"the data directory {data} is read-only" in err and "Traceback" not in err
