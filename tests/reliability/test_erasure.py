"""Deletion on request is provable: after a turn, a thread or a user is forgotten, no byte of any
file under the data directory holds its text (turns, facts, bullets, earlier document versions),
in any form, on an SQLite that does not overwrite deleted content by default, while the texts of
other threads and users are still found (so the scan can fail).

The turn (one English, one Chinese) first reaches everything that copies it: the raw trace,
facts extracted from it, the topic documents and essentials a consolidation writes, the search
index and the embedding cache (a search in both languages, at every granularity, with a blend of
two models). It is then forgotten in process, or by the ``memstrata`` command in another process
that never built an index.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.embed.cache import text_hash
from memstrata.errors import StoreError
from memstrata.model import DocumentKind, Fact, Scope
from memstrata.settings import load_settings
from tests.reliability.scan import files_under, scan
from tests.reliability.sqlite_build import CLI

ROOT = Path(__file__).resolve().parents[2]
EN = "I love hiking in the Zanskarvale mountains with my dog Quillon, every August."
ZH = "我最喜欢的城市是景德镇，我每年都去那里看瓷器。"
#: words only the conversation says, in every shortened copy of it (an L1 slot or preference)
MARKS = ("Zanskarvale", "Quillon", "景德镇")
CONVERSATION = [
    {"text": "How was the trip?", "speaker": "Bob"},
    {"text": EN, "speaker": "Ann"},
    {"text": "That sounds lovely.", "speaker": "Bob"},
    {"text": ZH, "speaker": "Ann"},
    {"text": "好的，下次见。", "speaker": "Bob"},
]


@pytest.fixture
def memory(data_dir: Path, env: dict[str, str]) -> Iterator[Memory]:
    with Memory.open(settings=load_settings(data_dir=data_dir)) as mem:
        yield mem


def _reach_everything(mem: Memory) -> tuple[dict[str, str], list[str]]:
    """Store the conversation and let every part copy it; the ids of the two turns by text,
    and the texts embedded from them (turn views, facts, bullet passages)."""
    mem.remember({"text": "an unrelated note from another user"}, "v")
    episodes = mem.remember(CONVERSATION, "u", session_id="s1")
    ids = {e.text: e.id for e in episodes if e.text in (EN, ZH)}
    mem.extract("u")
    mem.consolidate("u")  # topic documents and essentials
    facts = [f for f in mem.list("u", "fact") if isinstance(f, Fact)]
    derived = {f.id: f.text for f in facts if set(f.sources) & set(ids.values())}
    assert len(derived) == 3, facts  # a like and a pet in English, a favourite in Chinese
    docs = [d for d in mem.store.list_documents(Scope("u")) if d.kind != DocumentKind.STATE]
    assert {d.kind for d in docs} == {
        DocumentKind.ESSENTIALS,
        DocumentKind.TOPIC,
        DocumentKind.PROFILE,  # the user's slots
    }
    reader = mem.indexes.passages
    assert reader is not None
    said = (*derived.values(), *MARKS)
    passages = [
        p.text
        for d in docs
        if d.kind != DocumentKind.PROFILE
        for p in reader(d)
        if any(t in p.text for t in said)
    ]
    assert len(passages) >= 4  # each fact in its topic document, and in the essentials
    for query in ("Zanskarvale hiking", "景德镇 瓷器"):
        for level in ("turn", "session", "fact", "topic"):
            assert mem.search(query, "u", k=3, granularity=level)
    embedded = [
        f"Ann: {EN}",
        f"Bob: How was the trip?\nAnn: {EN}",
        f"Ann: {EN}\nBob: That sounds lovely.",
        f"Ann: {ZH}",
        f"Bob: That sounds lovely.\nAnn: {ZH}",
        f"Ann: {ZH}\nBob: 好的，下次见。",
        *derived.values(),
        *passages,
    ]
    return ids, embedded


def _cached(data_dir: Path, texts: list[str]) -> int:
    with sqlite3.connect(data_dir / "embeddings.db") as conn:
        marks = ",".join("?" * len(texts))
        row = conn.execute(
            f"SELECT COUNT(*) FROM vectors WHERE hash IN ({marks})", [text_hash(t) for t in texts]
        )
        return int(row.fetchone()[0])


def _assert_erased(data_dir: Path, embedded: list[str]) -> None:
    findings = scan(data_dir, [EN, ZH])
    assert not findings, (
        "\n".join(map(str, findings)) + "\nfiles: " + ", ".join(files_under(data_dir))
    )
    assert _cached(data_dir, embedded) == 0


def test_the_scan_finds_every_form_of_a_text(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps({"t": ZH}), encoding="ascii")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".hidden").write_bytes(b"\x01" + EN.encode("utf-16-le"))
    (tmp_path / "c.txt").write_text(json.dumps(ZH, ensure_ascii=False), encoding="utf-8")
    found = {(f.path.name, f.form) for f in scan(tmp_path, [EN, ZH])}
    assert found == {("a.json", "json-ascii"), (".hidden", "utf-16-le")} | {
        ("c.txt", "utf-8"),
        ("c.txt", "json"),
    }


def test_a_turn_forgotten_in_process_leaves_no_byte_of_its_text(
    data_dir: Path, memory: Memory
) -> None:
    ids, embedded = _reach_everything(memory)
    assert {f.path.name for f in scan(data_dir, [EN, ZH])} >= {"memstrata.db-wal"}
    # every text by both models, but a context view (turns joined) only by the second: the
    # first pools its vectors of the turns alone (the default's pooled_context)
    joined = {t for t in embedded[:6] if "\n" in t}
    assert len(joined) == 4
    assert _cached(data_dir, embedded) == 2 * len(set(embedded)) - len(joined)
    for episode_id in ids.values():
        memory.forget(episode_id, "u")
    _assert_erased(data_dir, embedded)  # while the memory is still open
    hits = memory.search("Zanskarvale 景德镇", "u", k=10)
    assert hits and not any("Zanskarvale" in h.text or "景德镇" in h.text for h in hits)
    memory.close()
    _assert_erased(data_dir, embedded)


def test_a_turn_forgotten_by_the_cli_leaves_no_byte_of_its_text(
    data_dir: Path, memory: Memory, env: dict[str, str]
) -> None:
    ids, embedded = _reach_everything(memory)
    for episode_id in ids.values():  # another process, beside this one's open memory
        report = _cli_forget(data_dir, env, episode_id, "--user", "u")
        assert report["deleted"] == [episode_id]
    _assert_erased(data_dir, embedded)
    memory.close()
    _assert_erased(data_dir, embedded)


# a whole thread, a whole user --------------------------------------------------------------
KEPT = "I love sailing near the Brackenholt islands with my cousin Ferriday, every June."
OTHER_USER = "I love baking sourdough in Wexmoorton with my neighbour Tibbald."


def _views(conversation: list[dict[str, str]]) -> list[str]:
    """Every text the dense views (the turn alone, and after its previous turn) embed for
    every turn of a session."""
    lines = [f"{t['speaker']}: {t['text']}" for t in conversation]
    return [*lines, *("\n".join(lines[i - 1 : i + 1]) for i in range(1, len(lines)))]


def _reach_two_threads(mem: Memory) -> tuple[list[str], list[str], list[str], list[str]]:
    """User ``u`` says :data:`CONVERSATION` in thread ``t1`` and :data:`KEPT` in thread ``t2``;
    user ``v`` says :data:`OTHER_USER`; every part copies them (facts, topic documents and
    essentials, earlier document versions, index, cache). The texts stored from thread ``t1``
    (turns, facts, bullets) and from ``t2``, then the texts embedded from each thread."""
    kept_turns = [{"text": KEPT, "speaker": "Ann"}, {"text": "Nice.", "speaker": "Bob"}]
    other = [{"text": OTHER_USER, "speaker": "Val"}]
    for scope, conversation in (
        (Scope("u", "t1"), CONVERSATION[:2]),
        (Scope("u", "t2"), kept_turns),
        (Scope("v", "t1"), other),
    ):
        mem.remember(conversation, scope, session_id="s1")
        mem.extract(scope.user)
        mem.consolidate(scope.user)  # one version of the documents per step
    mem.remember(CONVERSATION[2:], Scope("u", "t1"), session_id="s1")
    for user in ("u", "v"):
        mem.extract(user)
        mem.consolidate(user)
    facts = [f for f in mem.list("u", "fact") if isinstance(f, Fact)]
    by_thread = {t: [f.text for f in facts if f.scope.thread == t] for t in ("t1", "t2")}
    # t1: a like and a pet (English), a favourite (Chinese); t2: a like and a cousin
    assert len(by_thread["t1"]) == 3 and len(by_thread["t2"]) == 2, facts
    docs = mem.store.list_documents(Scope("u"))
    assert any(len(mem.history(d.id, d.scope)) > 1 for d in docs)  # earlier versions too
    reader = mem.indexes.passages
    assert reader is not None
    passages = [p.text for d in docs for p in reader(d)]
    marks = {"t1": MARKS, "t2": ()}
    bullets = {
        t: [p for p in passages if any(f in p for f in (*by_thread[t], *marks[t]))]
        for t in ("t1", "t2")
    }
    assert len(bullets["t1"]) >= 4 and bullets["t2"], passages  # topic and essentials
    for user, query in (("u", "Zanskarvale hiking"), ("u", "Brackenholt"), ("v", "sourdough")):
        assert mem.search(query, user, k=3)
    gone = [EN, ZH, *by_thread["t1"]]
    kept = [KEPT, *by_thread["t2"]]
    return (
        gone,
        kept,
        [*_views(CONVERSATION), *by_thread["t1"], *bullets["t1"]],
        [*_views(kept_turns), *by_thread["t2"], *bullets["t2"]],
    )


def _forget_scope(
    how: str, mem: Memory, data_dir: Path, env: dict[str, str], scope: Scope
) -> dict[str, object]:
    if how == "python":
        return mem.forget_scope(scope).to_json()
    args = ["--user", scope.user, *(["--thread", scope.thread] if scope.thread else [])]
    return _cli_forget(data_dir, env, *args, "--yes")


def _cli_forget(data_dir: Path, env: dict[str, str], *args: str) -> dict[str, object]:
    """``memstrata forget ARGS --json`` in another process; what it reports."""
    done = subprocess.run(
        [*CLI, "forget", *args, "--data-dir", str(data_dir), "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _assert_only(data_dir: Path, gone: list[str], kept: list[str]) -> None:
    """None of ``gone`` in any byte under the data directory; every one of ``kept`` still
    there (so the scan can fail)."""
    findings = scan(data_dir, gone)
    assert not findings, (
        "\n".join(map(str, findings)) + "\nfiles: " + ", ".join(files_under(data_dir))
    )
    assert {f.text for f in scan(data_dir, kept)} == set(kept)


@pytest.mark.parametrize("how", ["python", "cli"])
def test_a_thread_forgotten_leaves_no_byte_of_its_text_and_spares_the_others(
    how: str, data_dir: Path, memory: Memory, env: dict[str, str]
) -> None:
    gone, kept, gone_embedded, kept_embedded = _reach_two_threads(memory)
    assert {f.text for f in scan(data_dir, gone)} == set(gone)
    report = _forget_scope(how, memory, data_dir, env, Scope("u", "t1"))
    assert report["counts"]["episodes"] == len(CONVERSATION)  # type: ignore[index]
    _assert_only(data_dir, gone, [*kept, OTHER_USER])
    assert _cached(data_dir, gone_embedded) == 0
    assert _cached(data_dir, kept_embedded) > 0
    hits = memory.search("Zanskarvale 景德镇 Brackenholt", "u", k=10)
    assert hits and not any("Zanskarvale" in h.text or "景德镇" in h.text for h in hits)
    memory.close()
    _assert_only(data_dir, gone, [*kept, OTHER_USER])


@pytest.mark.parametrize("how", ["python", "cli"])
def test_a_user_forgotten_leaves_no_byte_of_their_text_and_spares_other_users(
    how: str, data_dir: Path, memory: Memory, env: dict[str, str]
) -> None:
    gone, kept, gone_embedded, kept_embedded = _reach_two_threads(memory)
    report = _forget_scope(how, memory, data_dir, env, Scope("u"))
    assert report["counts"]["episodes"] == len(CONVERSATION) + 2  # type: ignore[index]
    _assert_only(data_dir, [*gone, *kept], [OTHER_USER])
    assert _cached(data_dir, [*gone_embedded, *kept_embedded]) == 0
    assert _cached(data_dir, _views([{"text": OTHER_USER, "speaker": "Val"}])) > 0
    memory.close()
    _assert_only(data_dir, [*gone, *kept], [OTHER_USER])


def test_a_thread_forget_cut_short_after_its_commit_is_erased_and_proven_by_the_next_open(
    data_dir: Path, memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone, kept, gone_embedded, _ = _reach_two_threads(memory)

    def cut_short(*args: object, **kwargs: object) -> int:
        raise OSError("the process died here")

    monkeypatch.setattr(memory, "_erase_copies", cut_short)
    with pytest.raises(StoreError, match="stays pending"):
        memory.forget_scope(Scope("u", "t1"))
    assert {f.text for f in scan(data_dir, gone)} == set(gone)  # the journal, trace, log
    assert _cached(data_dir, gone_embedded) > 0
    memory.close()
    with Memory.open(settings=load_settings(data_dir=data_dir)) as reopened:
        assert not reopened.store.pending_erasures()
        _assert_only(data_dir, gone, [*kept, OTHER_USER])
        assert _cached(data_dir, gone_embedded) == 0
    _assert_only(data_dir, gone, [*kept, OTHER_USER])
