"""DeepTutor-style markdown memory documents: cited bullets become a topic document's bullets,
each citing the import episode that holds it; citations that name nothing in memory are not
kept (they are counted); uncited bullets are skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata.api import Memory
from memstrata.errors import ImportFormatError
from memstrata.model import Scope

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "imports" / "deeptutor_memory.md"
KEY = "linear-algebra-study-线性代数学习"
SAM = Scope("sam")


def test_dry_run_and_import(memory: Memory) -> None:
    plan = memory.ingest(FIXTURE, "sam", fmt="deeptutor", dry_run=True)
    assert (plan.bullets, plan.unresolved) == (5, 6)
    assert [(s.source, s.bullets) for s in plan.sources] == [(KEY, 5)]
    assert plan.skipped == ((f"{KEY}: Preferences bullet 2", "cites nothing"),)
    assert memory.doc(KEY, SAM)[1] == 0  # nothing written

    done = memory.ingest(FIXTURE, "sam", fmt="deeptutor")
    assert (done.bullets, done.present) == (5, 0)
    doc, version = memory.doc(KEY, SAM)
    assert version == 1 and [s.title for s in done.sources] == [
        "Linear algebra study / 线性代数学习"
    ]
    assert [s.heading for s in doc.sections] == ["Progress", "Preferences", "Misconceptions"]
    bullets = [b for s in doc.sections for b in s.bullets]
    assert bullets[1].text == "已完成第三章矩阵分解的练习"
    for bullet in bullets:  # each cites exactly its import episode, which exists
        [citation] = bullet.citations
        assert citation.surface == "import"
        [episode] = memory.store.get_episodes(SAM, [citation.episode_id])
        assert episode.text == bullet.text
    [episode] = memory.store.get_episodes(SAM, [bullets[0].citations[0].episode_id])
    assert episode.metadata["record"]["cites"] == ["chat:session_2025_03_01"]

    again = memory.ingest(FIXTURE, "sam", fmt="deeptutor")
    assert (again.bullets, again.present) == (0, 5)
    assert memory.doc(KEY, SAM)[1] == 1


def test_citations_of_episodes_in_memory_are_kept(memory: Memory, tmp_path: Path) -> None:
    [episode] = memory.remember("I keep mixing up null space and column space", SAM)
    path = tmp_path / "memory.md"
    path.write_text(
        f"# Study\n\n## Misconceptions\n- Confuses null and column space [^1][^2]\n\n---\n"
        f"[^1]: chat:{episode.id}\n[^2]: quiz:quiz_0311\n",
        encoding="utf-8",
    )
    report = memory.ingest(path, "sam", fmt="deeptutor")
    assert (report.bullets, report.unresolved) == (1, 1)
    doc, _ = memory.doc("study", SAM)
    [bullet] = doc.sections[0].bullets
    assert [c.surface for c in bullet.citations] == ["import", "chat"]
    assert bullet.citations[1].episode_id == episode.id


def test_an_edited_bullet_is_edited_in_place(memory: Memory, tmp_path: Path) -> None:
    memory.ingest(FIXTURE, "sam", fmt="deeptutor")
    text = FIXTURE.read_text(encoding="utf-8").replace(
        "Confuses null space with column space", "No longer confuses null and column space"
    )
    path = tmp_path / "memory.md"
    path.write_text(text, encoding="utf-8")
    report = memory.ingest(path, "sam", fmt="deeptutor")
    assert (report.bullets, report.present) == (1, 4)
    doc, version = memory.doc(KEY, SAM)
    assert version == 2
    assert [b.text for b in doc.sections[2].bullets] == ["No longer confuses null and column space"]


def test_a_title_naming_the_essentials_goes_to_a_topic(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "essentials.md"
    path.write_text("# Essentials\n\n## Notes\n- Likes tea [^1]\n\n[^1]: chat:x1\n", "utf-8")
    memory.ingest(path, "sam", fmt="deeptutor")
    assert memory.doc("deeptutor-essentials", SAM)[1] == 1
    assert memory.doc("essentials", SAM)[1] == 0


def test_malformed_markdown_names_the_line(memory: Memory, tmp_path: Path) -> None:
    path = tmp_path / "memory.md"
    path.write_text("# Study\n\n- a bullet before any section [^1]\n", encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"memory.md: line 3: a bullet must come after"):
        memory.ingest(path, "sam", fmt="deeptutor", dry_run=True)
    path.write_text("", encoding="utf-8")
    with pytest.raises(ImportFormatError, match="empty"):
        memory.ingest(path, "sam", fmt="deeptutor")
